/**
 * Minimal ntfy clients for the black-box tests: publish over HTTP, read `/json`, `/sse` and
 * `/raw` streams frame by frame, and read WebSocket frames. Every wait is event-driven with a
 * failure deadline; nothing sleeps.
 */
import { request, type IncomingMessage } from 'node:http';
import { WebSocket } from 'ws';
import { frameText } from '../../src/nostr/relay-frames.ts';

/** How long a test waits for a frame before it fails. */
export const FRAME_TIMEOUT_MS = 5_000;

export interface PublishAnswer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

/** POST (or `method`) `body` to `{baseUrl}{path}`. */
export async function publish(
  baseUrl: string,
  path: string,
  body: string | Uint8Array = '',
  options: { headers?: Record<string, string>; method?: string } = {},
): Promise<PublishAnswer> {
  // A Buffer copy: fetch's BodyInit types do not take a Uint8Array of any backing buffer.
  const payload = typeof body === 'string' ? body : Buffer.from(body);
  const response = await fetch(`${baseUrl}${path}`, { method: options.method ?? 'POST', body: payload, headers: options.headers });
  const text = await response.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { text };
  }
  return { status: response.status, body: parsed, headers: response.headers };
}

/**
 * Wait for `remainingMs` or until one of `waiters` is called back, whichever comes first: how the
 * clients here wait for bytes (the caller checks again and fails past its deadline).
 */
export function nextNotice(waiters: Array<() => void>, remainingMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, remainingMs);
    waiters.push(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A queue of frames with waits that fail after {@link FRAME_TIMEOUT_MS}. */
class FrameQueue<T> {
  private readonly frames: T[] = [];
  private waiters: Array<() => void> = [];
  ended = false;

  push(frame: T): void {
    this.frames.push(frame);
    this.notify();
  }

  end(): void {
    this.ended = true;
    this.notify();
  }

  get buffered(): readonly T[] {
    return this.frames;
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }

  async next(what = 'a frame', timeoutMs = FRAME_TIMEOUT_MS): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    while (this.frames.length === 0) {
      if (this.ended) throw new Error(`stream ended while waiting for ${what}`);
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`timed out waiting for ${what}`);
      await nextNotice(this.waiters, remaining);
    }
    return this.frames.shift() as T;
  }

  /** Resolves once the stream ended; fails after the deadline. */
  async untilEnded(timeoutMs = FRAME_TIMEOUT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error('timed out waiting for the stream to end');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}

export interface HttpStream {
  status: number;
  headers: IncomingMessage['headers'];
  /** Raw frames: lines for `/json` and `/raw`, `\n\n`-separated blocks for `/sse`. */
  frames: FrameQueue<string>;
  /** The next frame as JSON (an SSE block's `data:` line). */
  nextJson(what?: string): Promise<Record<string, unknown>>;
  /** Skip open/keepalive frames and return the next `message` event. */
  nextMessage(what?: string): Promise<Record<string, unknown>>;
  close(): void;
}

function sseJson(block: string): { event?: string; data: Record<string, unknown> } {
  let event: string | undefined;
  let data = '';
  for (const line of block.split('\n')) {
    if (line.startsWith('event: ')) event = line.slice('event: '.length);
    else if (line.startsWith('data: ')) data += line.slice('data: '.length);
  }
  return { event, data: JSON.parse(data) as Record<string, unknown> };
}

/** GET a subscribe URL and read it as it arrives. Resolves once the status line is in. */
export function openStream(url: string, headers: Record<string, string> = {}): Promise<HttpStream> {
  const isSse = new URL(url).pathname.endsWith('/sse');
  const separator = isSse ? '\n\n' : '\n';
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const frames = new FrameQueue<string>();
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let at: number;
        while ((at = buffer.indexOf(separator)) !== -1) {
          frames.push(buffer.slice(0, at));
          buffer = buffer.slice(at + separator.length);
        }
      });
      res.on('end', () => frames.end());
      res.on('close', () => frames.end());
      res.on('error', () => frames.end());
      const nextJson = async (what?: string) => {
        const frame = await frames.next(what);
        return isSse ? sseJson(frame).data : (JSON.parse(frame) as Record<string, unknown>);
      };
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        frames,
        nextJson,
        async nextMessage(what = 'a message') {
          for (;;) {
            const frame = await nextJson(what);
            if (frame.event === 'message') return frame;
          }
        },
        close: () => {
          req.destroy();
          res.destroy();
        },
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** GET a poll URL (`poll=1`) and return its frames once it ended. */
export async function poll(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; frames: string[]; messages: Record<string, unknown>[] }> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  const frames = text.split('\n').filter((line) => line !== '');
  const messages = response.ok ? frames.map((f) => JSON.parse(f) as Record<string, unknown>) : [];
  return { status: response.status, frames, messages };
}

export interface WsClient {
  socket: WebSocket;
  frames: FrameQueue<string>;
  nextJson(what?: string): Promise<Record<string, unknown>>;
  nextMessage(what?: string): Promise<Record<string, unknown>>;
  pings: FrameQueue<Buffer>;
  pongs: FrameQueue<Buffer>;
  closed: Promise<number>;
  close(): void;
}

/** Open a WebSocket subscription; `autoPong: false` lets a test play a peer that never answers pings. */
export function openWs(url: string, options: { autoPong?: boolean; headers?: Record<string, string> } = {}): Promise<WsClient> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { autoPong: options.autoPong ?? true, headers: options.headers });
    const frames = new FrameQueue<string>();
    const pings = new FrameQueue<Buffer>();
    const pongs = new FrameQueue<Buffer>();
    const closed = new Promise<number>((resolveClosed) =>
      socket.once('close', (code) => {
        frames.end();
        pings.end();
        pongs.end();
        resolveClosed(code);
      }),
    );
    socket.on('message', (data) => frames.push(frameText(data)));
    socket.on('ping', (data) => pings.push(data));
    socket.on('pong', (data) => pongs.push(data));
    socket.once('unexpected-response', (_req, res) => reject(new Error(`websocket refused with ${res.statusCode}`)));
    socket.once('error', reject);
    socket.once('open', () => {
      const nextJson = async (what?: string) => JSON.parse(await frames.next(what)) as Record<string, unknown>;
      resolve({
        socket,
        frames,
        pings,
        pongs,
        closed,
        nextJson,
        async nextMessage(what = 'a message') {
          for (;;) {
            const frame = await nextJson(what);
            if (frame.event === 'message') return frame;
          }
        },
        close: () => socket.close(),
      });
    });
  });
}

/** The status a refused WebSocket upgrade gets. */
export function wsRefusal(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    socket.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      socket.terminate();
    });
    socket.once('open', () => {
      socket.terminate();
      reject(new Error('the upgrade was accepted'));
    });
    socket.once('error', () => undefined);
  });
}
