/**
 * A NIP-9a callback receiver for tests and the benchmark: a plain HTTP server on loopback that
 * records every request and answers with what the test scripts (200 by default).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedCallback {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Date.now() when the body was complete. */
  atMs: number;
}

export interface CallbackAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface CallbackReceiver {
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  port: number;
  received: ReceivedCallback[];
  /** Decides each answer (called with the request and how many came before it). */
  answer: (request: ReceivedCallback, index: number) => CallbackAnswer;
  /** Resolve once `count` requests arrived; rejects after `timeoutMs` (a hang, not a slow machine). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedCallback[]>;
  stop(): Promise<void>;
}

export async function startCallbackReceiver(options: { port?: number; record?: boolean } = {}): Promise<CallbackReceiver> {
  const record = options.record ?? true;
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  let total = 0;
  const receiver: CallbackReceiver = {
    baseUrl: '',
    port: 0,
    received: [],
    answer: () => ({ status: 200 }),
    waitFor(count, timeoutMs = 60_000) {
      if (total >= count) return Promise.resolve(receiver.received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`callback receiver: ${total} of ${count} requests after ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(receiver.received);
          },
        });
      });
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received: ReceivedCallback = {
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        atMs: Date.now(),
      };
      const answer = receiver.answer(received, total);
      if (record) receiver.received.push(received);
      total += 1;
      response.writeHead(answer.status, answer.headers ?? {});
      response.end(answer.body ?? '');
      for (const waiter of [...waiters]) {
        if (total >= waiter.count) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.baseUrl = `http://127.0.0.1:${receiver.port}`;
  return receiver;
}
