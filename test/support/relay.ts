/**
 * Relays for tests.
 *
 * - {@link startTestRelay}: a real Nostr relay. The relay logic (NIP-01 filters, signature checks,
 *   replaceable/addressable handling, NIP-42) is @nostr-relay/* 0.0.40; the only code here is the
 *   `ws` glue that hands it sockets and messages.
 * - {@link startRawRelay}: a bare WebSocket server whose every frame a test scripts, for the
 *   misbehaviour a real relay never shows (garbage frames, CLOSED storms, silence, dropped sockets).
 *
 * Both listen on 127.0.0.1 on a free port.
 */
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
// The @nostr-relay packages are CommonJS: ESM named imports fail at runtime, default imports work.
import relayCore from '@nostr-relay/core';
import relayCommon from '@nostr-relay/common';
import relayValidator from '@nostr-relay/validator';
import relaySqlite from '@nostr-relay/event-repository-sqlite';

const { NostrRelay } = relayCore;
const { createOutgoingNoticeMessage, LogLevel } = relayCommon;
const { Validator } = relayValidator;
const { EventRepositorySqlite } = relaySqlite;

/** The validator's default (20) is below the kinds list a push service subscribes to. */
const TEST_RELAY_MAX_FILTER_KINDS = 200;

export interface TestRelayOptions {
  /** Enable NIP-42: the relay sends `["AUTH", challenge]` on connect. Default false. */
  auth?: boolean;
  /** SQLite file to keep events in, so a relay can be restarted with its data. Default in-memory. */
  dbPath?: string;
  /** Port to bind; 0 (default) picks a free one. Pass a previous relay's port to restart it in place. */
  port?: number;
}

export interface TestRelay {
  /** `ws://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Pubkeys that completed NIP-42 AUTH on this relay (any connection). */
  authenticatedPubkeys(): string[];
  /** Every REQ received so far (any connection), as `[subscriptionId, ...filters]`. */
  requests(): unknown[][];
  /** Number of currently open client connections. */
  connectionCount(): number;
  /** Close every client connection (the server keeps listening, so clients can reconnect). */
  dropConnections(): void;
  stop(): Promise<void>;
}

const silentRelayLogger = {
  setLogLevel(): void {},
  debug(): void {},
  info(): void {},
  warn(): void {},
  error(): void {},
};

async function listen(server: WebSocketServer): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  return (server.address() as AddressInfo).port;
}

async function closeServer(server: WebSocketServer): Promise<void> {
  for (const client of server.clients) client.terminate();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

export async function startTestRelay(options: TestRelayOptions = {}): Promise<TestRelay> {
  const repository = new EventRepositorySqlite(options.dbPath ?? ':memory:');
  await repository.init();
  const hostname = '127.0.0.1';
  const relay = new NostrRelay(repository, {
    ...(options.auth ? { hostname } : {}),
    logger: silentRelayLogger,
    logLevel: LogLevel.ERROR,
  });
  const validator = new Validator({ maxFilterKindsLength: TEST_RELAY_MAX_FILTER_KINDS });
  const authenticated = new Set<string>();
  const requests: unknown[][] = [];

  const server = new WebSocketServer({ host: hostname, port: options.port ?? 0 });
  server.on('connection', (socket: WebSocket) => {
    relay.handleConnection(socket, hostname);
    const onMessage = async (data: RawData): Promise<void> => {
      try {
        const message = await validator.validateIncomingMessage(data);
        if (message[0] === 'REQ') requests.push(message.slice(1));
        const result = await relay.handleMessage(socket, message);
        if (message[0] === 'AUTH' && result?.messageType === 'AUTH' && result.success) authenticated.add(message[1].pubkey);
      } catch (error) {
        const text = error instanceof Error ? error.message : String(error);
        if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(createOutgoingNoticeMessage(text)));
      }
    };
    socket.on('message', (data: RawData) => void onMessage(data));
    socket.on('close', () => relay.handleDisconnect(socket));
    socket.on('error', () => {});
  });
  const port = await listen(server);

  return {
    url: `ws://${hostname}:${port}`,
    port,
    authenticatedPubkeys: () => [...authenticated],
    requests: () => requests.map((request) => [...request]),
    connectionCount: () => server.clients.size,
    dropConnections: () => {
      for (const client of server.clients) client.terminate();
    },
    async stop() {
      await closeServer(server);
      await relay.destroy();
      await repository.destroy();
    },
  };
}

// ---- raw relay -------------------------------------------------------------------------------

/** One client connection to a raw relay, seen from the test. */
export interface RawRelayConnection {
  readonly socket: WebSocket;
  /** Every frame the client sent so far, JSON-parsed (non-JSON frames are kept as strings). */
  readonly received: unknown[];
  /** Send a frame: arrays/objects are JSON-encoded, strings are sent verbatim. */
  send(frame: unknown): void;
  /** Resolves with the first client frame (already received or future) that `match` accepts. */
  waitFor(match: (frame: unknown) => boolean): Promise<unknown>;
  /** Resolves with the next REQ frame for `subId` (or any REQ when omitted) received after `after` frames. */
  waitForReq(subId?: string, after?: number): Promise<unknown[]>;
  close(): void;
}

export interface RawRelay {
  url: string;
  port: number;
  /** Every connection so far, in order. */
  readonly connections: RawRelayConnection[];
  /** Resolves with the `n`-th connection (1-based) once it exists. */
  waitForConnection(n: number): Promise<RawRelayConnection>;
  stop(): Promise<void>;
}

export type RawRelayHandler = (connection: RawRelayConnection, frame: unknown) => void;

function decodeFrame(data: RawData): unknown {
  const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as Buffer).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function isReqFor(frame: unknown, subId?: string): frame is unknown[] {
  return Array.isArray(frame) && frame[0] === 'REQ' && (subId === undefined || frame[1] === subId);
}

/**
 * A bare `ws` server. `handler` is called for every client frame; the test answers with
 * `connection.send(...)` frame by frame. With no handler the relay stays silent.
 */
export async function startRawRelay(handler: RawRelayHandler = () => {}): Promise<RawRelay> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  const connections: RawRelayConnection[] = [];
  const connectionWaiters: Array<() => void> = [];

  server.on('connection', (socket: WebSocket) => {
    const received: unknown[] = [];
    const frameWaiters: Array<() => void> = [];
    const connection: RawRelayConnection = {
      socket,
      received,
      send(frame) {
        if (socket.readyState !== socket.OPEN) return;
        socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
      },
      waitFor(match) {
        return new Promise((resolve) => {
          let checked = 0;
          const check = (): boolean => {
            for (; checked < received.length; checked++) {
              if (match(received[checked])) {
                resolve(received[checked]);
                return true;
              }
            }
            return false;
          };
          if (check()) return;
          const waiter = (): void => {
            if (check()) frameWaiters.splice(frameWaiters.indexOf(waiter), 1);
          };
          frameWaiters.push(waiter);
        });
      },
      async waitForReq(subId, after = 0) {
        let index = 0;
        const frame = await connection.waitFor((f) => index++ >= after && isReqFor(f, subId));
        return frame as unknown[];
      },
      close: () => socket.terminate(),
    };
    socket.on('message', (data: RawData) => {
      const frame = decodeFrame(data);
      received.push(frame);
      for (const waiter of [...frameWaiters]) waiter();
      handler(connection, frame);
    });
    socket.on('error', () => {});
    connections.push(connection);
    for (const waiter of [...connectionWaiters]) waiter();
  });
  const port = await listen(server);

  return {
    url: `ws://127.0.0.1:${port}`,
    port,
    connections,
    waitForConnection(n) {
      return new Promise((resolve) => {
        const check = (): boolean => {
          const connection = connections[n - 1];
          if (connection) resolve(connection);
          return connection !== undefined;
        };
        if (check()) return;
        const waiter = (): void => {
          if (check()) connectionWaiters.splice(connectionWaiters.indexOf(waiter), 1);
        };
        connectionWaiters.push(waiter);
      });
    },
    stop: () => closeServer(server),
  };
}
