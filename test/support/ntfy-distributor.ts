/**
 * A fake UnifiedPush distributor that behaves like the ntfy Android app (reference §2, from
 * `ntfy-android` 1.25: `SubscriberService`, `JsonConnection`, `WsConnection`, `Repository`,
 * `PollWorker`), so tests can check that a real distributor would get every message exactly once:
 *
 * - one connection per server for all its topics: `/{t1,t2,…}/json` (the app's default) or `/ws`;
 * - `since=` the id of the newest notification received so far, or `none` before the first one;
 * - a JSON stream with no byte for `readTimeoutMs` (the app's OkHttp 77 s) counts as broken;
 * - after a failure (refused connection, non-2xx, read timeout, socket error) it waits along the
 *   app's backoff (5, 10, 15, 20, 30, 45, 60, 120 s, then 120 s forever; tests pass a short
 *   schedule), reset by each successful connect; a clean end of stream reconnects at once;
 * - it keeps only `message` events whose topic is one of its own, drops any id it already has
 *   (the app's `addNotification` dedupe), and base64-decodes `encoding: base64` bodies;
 * - {@link FakeDistributor.pollAll} is the hourly PollWorker: `/{topic}/json?poll=1&since=<id|all>` per topic.
 */
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { WebSocket } from 'ws';
import { frameText } from '../../src/nostr/relay-frames.ts';

/** The ntfy app's reconnect backoff, in ms. */
export const ANDROID_BACKOFF_MS = [5_000, 10_000, 15_000, 20_000, 30_000, 45_000, 60_000, 120_000];
/** The ntfy app's JSON stream read timeout. */
export const ANDROID_READ_TIMEOUT_MS = 77_000;

export interface FakeDistributorOptions {
  /** The server's base URL; a function lets a test move it. */
  baseUrl: string | (() => string);
  topics: string[];
  transport?: 'json' | 'ws';
  backoffMs?: number[];
  readTimeoutMs?: number;
  headers?: Record<string, string>;
}

/** A push as the app hands it to the UnifiedPush app: the decoded bytes. */
export interface ReceivedPush {
  id: string;
  topic: string;
  bytes: Buffer;
  frame: Record<string, unknown>;
}

export class FakeDistributor {
  /** Every push kept, in arrival order, each id once. */
  readonly received: ReceivedPush[] = [];
  /** Message frames dropped because their id was already kept. */
  duplicatesDropped = 0;
  /** Successful connections (2xx, or an open WebSocket). */
  connects = 0;
  failures = 0;
  /** The `since` the next connection sends. */
  lastId: string | null = null;

  private readonly seen = new Set<string>();
  private readonly topics: Set<string>;
  private readonly backoff: number[];
  private readonly readTimeoutMs: number;
  private running = false;
  private failureStreak = 0;
  private current: { close(): void } | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private waiters: Array<() => void> = [];

  constructor(private readonly options: FakeDistributorOptions) {
    this.topics = new Set(options.topics);
    this.backoff = options.backoffMs ?? ANDROID_BACKOFF_MS;
    this.readTimeoutMs = options.readTimeoutMs ?? ANDROID_READ_TIMEOUT_MS;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.connect();
  }

  stop(): void {
    this.running = false;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.current?.close();
    this.current = null;
    this.notify();
  }

  /** Resolve once `count` distinct pushes were kept; fail after `timeoutMs`. */
  waitForPushes(count: number, timeoutMs = 15_000): Promise<void> {
    return this.waitUntil(() => this.received.length >= count, timeoutMs, `${count} pushes (have ${this.received.length})`);
  }

  /** Resolve once the connection count reached `count`. */
  waitForConnects(count: number, timeoutMs = 15_000): Promise<void> {
    return this.waitUntil(() => this.connects >= count, timeoutMs, `connection ${count} (have ${this.connects})`);
  }

  /** The PollWorker's pass: one poll per topic; returns how many new pushes it kept. */
  async pollAll(): Promise<number> {
    const before = this.received.length;
    for (const topic of this.topics) {
      const since = this.lastId ?? 'all';
      const response = await fetch(`${this.baseUrl()}/${topic}/json?poll=1&since=${since}`, { headers: this.options.headers });
      if (!response.ok) continue;
      for (const line of (await response.text()).split('\n')) if (line.trim() !== '') this.onFrame(line);
    }
    return this.received.length - before;
  }

  private baseUrl(): string {
    return typeof this.options.baseUrl === 'function' ? this.options.baseUrl() : this.options.baseUrl;
  }

  private subscribeUrl(): string {
    const path = `/${[...this.topics].join(',')}/${this.options.transport ?? 'json'}?since=${this.lastId ?? 'none'}`;
    const base = this.baseUrl();
    return this.options.transport === 'ws' ? `${base.replace(/^http/, 'ws')}${path}` : `${base}${path}`;
  }

  private connect(): void {
    if (!this.running) return;
    if (this.options.transport === 'ws') this.connectWs();
    else this.connectJson();
  }

  private connectJson(): void {
    let req: ClientRequest | null = null;
    let ended = false;
    let idle: NodeJS.Timeout | null = null;
    const finish = (failed: boolean) => {
      if (ended) return;
      ended = true;
      if (idle) clearTimeout(idle);
      req?.destroy();
      this.current = null;
      this.afterConnection(failed);
    };
    const resetIdle = () => {
      if (idle) clearTimeout(idle);
      idle = setTimeout(() => finish(true), this.readTimeoutMs);
    };
    req = request(this.subscribeUrl(), { headers: this.options.headers }, (res: IncomingMessage) => {
      if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) > 299) {
        res.resume();
        finish(true);
        return;
      }
      this.connected();
      resetIdle();
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        resetIdle();
        buffer += chunk;
        let nl: number;
        while ((nl = buffer.indexOf('\n')) !== -1) {
          this.onFrame(buffer.slice(0, nl));
          buffer = buffer.slice(nl + 1);
        }
      });
      res.on('end', () => finish(false));
      res.on('error', () => finish(true));
      res.on('aborted', () => finish(true));
    });
    req.on('error', () => finish(true));
    req.end();
    this.current = { close: () => ((ended = true), idle && clearTimeout(idle), req.destroy()) };
  }

  private connectWs(): void {
    let ended = false;
    const socket = new WebSocket(this.subscribeUrl(), { headers: this.options.headers });
    const finish = (failed: boolean) => {
      if (ended) return;
      ended = true;
      this.current = null;
      socket.terminate();
      this.afterConnection(failed);
    };
    socket.on('open', () => this.connected());
    socket.on('message', (data) => {
      for (const line of frameText(data).split('\n')) if (line.trim() !== '') this.onFrame(line);
    });
    socket.on('unexpected-response', () => finish(true));
    socket.on('error', () => finish(true));
    // The app treats every close as a failure and goes through its backoff.
    socket.on('close', () => finish(true));
    this.current = { close: () => ((ended = true), socket.terminate()) };
  }

  private connected(): void {
    this.connects += 1;
    this.failureStreak = 0;
    this.notify();
  }

  private afterConnection(failed: boolean): void {
    if (!this.running) return;
    if (!failed) {
      this.connect();
      return;
    }
    this.failures += 1;
    const delay = this.backoff[Math.min(this.failureStreak, this.backoff.length - 1)] ?? 0;
    this.failureStreak += 1;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connect();
    }, delay);
  }

  private onFrame(line: string): void {
    let frame: Record<string, unknown>;
    try {
      frame = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    if (frame.event !== 'message' || typeof frame.id !== 'string' || typeof frame.topic !== 'string') return;
    if (!this.topics.has(frame.topic)) return;
    if (this.seen.has(frame.id)) {
      this.duplicatesDropped += 1;
      return;
    }
    this.seen.add(frame.id);
    const text = typeof frame.message === 'string' ? frame.message : '';
    const bytes = frame.encoding === 'base64' ? Buffer.from(text, 'base64') : Buffer.from(text, 'utf8');
    this.received.push({ id: frame.id, topic: frame.topic, bytes, frame });
    this.lastId = frame.id;
    this.notify();
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }

  private async waitUntil(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`fake distributor: timed out waiting for ${what}`);
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
