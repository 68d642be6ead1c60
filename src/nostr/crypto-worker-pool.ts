/**
 * Signature checks and NIP-44 decryption on worker threads, so the second core does the elliptic
 * curve work of an event burst while the main thread parses, routes and writes the store.
 * Registrations come from distinct users, so the conversation-key cache misses and each one
 * costs a point multiplication; every inbound event costs a Schnorr verification.
 *
 * Calls made in the same turn of the event loop are sent in chunks of {@link CRYPTO_CHUNK_ITEMS}
 * (a `postMessage` costs tens of microseconds, the work a few hundred), spread round-robin over
 * the workers. A turn, not a tick: events arriving one per socket read (the NIP-9a gateway's 50
 * relays) would otherwise cost a message each.
 */
import { Worker } from 'node:worker_threads';
import type { MaybeOffThreadVerifier, NostrEvent } from './event.ts';
import { Nip44Error, type Nip44ErrorCode } from './nip44.ts';
import { WORKER_ENTRY_URL, workerBody } from '../util/worker-entry.ts';

export type CryptoRequest = { op: 'verify'; event: NostrEvent } | { op: 'decrypt'; pubkey: string; content: string };

export interface CryptoRequestBatch {
  id: number;
  items: CryptoRequest[];
}

export type CryptoResult = { ok: true; value: string | boolean } | { ok: false; code: Nip44ErrorCode; message: string };

export interface CryptoResponseBatch {
  id: number;
  results: CryptoResult[];
}

interface Pending {
  request: CryptoRequest;
  resolve: (value: string | boolean) => void;
  reject: (err: Error) => void;
}

/** The worker's module (`.ts` from the source, `.js` compiled: the entry picks). */
const WORKER_BODY = workerBody(new URL('./crypto-worker.ts', import.meta.url));
/**
 * Items per message to a worker. Small enough that the first results come back while the rest
 * are still being worked on (callers consume them in order), large enough to amortise messaging.
 */
export const CRYPTO_CHUNK_ITEMS = 8;

export interface CryptoWorkerPoolOptions {
  /** Threads; at least 1. */
  size: number;
  /** Service secret for decryption; null for a verify-only pool. */
  secretHex: string | null;
  /** Conversation keys cached per thread. */
  cacheCapacity: number;
}

export class CryptoWorkerPool {
  private readonly workers: Worker[] = [];
  private readonly inFlight = new Map<number, Pending[]>();
  private queued: Pending[] = [];
  private nextBatchId = 1;
  private nextWorker = 0;
  private flushScheduled = false;
  private closed = false;
  /** Resolves once every worker chose its secp256k1 backend (and loaded the native addon, when that is it). */
  readonly ready: Promise<void>;

  constructor(options: CryptoWorkerPoolOptions) {
    const readies: Promise<void>[] = [];
    for (let i = 0; i < Math.max(1, options.size); i++) {
      const worker = new Worker(WORKER_ENTRY_URL, {
        workerData: { body: WORKER_BODY, secretHex: options.secretHex, cacheCapacity: options.cacheCapacity },
      });
      readies.push(
        new Promise((resolve, reject) => {
          worker.once('error', reject);
          worker.once('message', () => resolve());
        }),
      );
      worker.on('message', (batch: CryptoResponseBatch | { ready: true }) => {
        if ('id' in batch) this.settle(batch);
      });
      worker.on('error', (err) => this.failAll(err));
      this.workers.push(worker);
    }
    // Referenced until loaded and while holding work, so pending work keeps the process alive;
    // unreferenced when idle, so an idle pool never does.
    this.ready = Promise.all(readies).then(() => {
      if (this.inFlight.size === 0) for (const worker of this.workers) worker.unref();
    });
  }

  get size(): number {
    return this.workers.length;
  }

  /** Whether the event's id and signature verify (never rejects for a bad event). */
  verify(event: NostrEvent): Promise<boolean> {
    return this.submit({ op: 'verify', event }) as Promise<boolean>;
  }

  /** Decrypt `content` from `pubkey`; rejects with a {@link Nip44Error} like the inline path. */
  decrypt(pubkey: string, content: string): Promise<string> {
    return this.submit({ op: 'decrypt', pubkey, content }) as Promise<string>;
  }

  private submit(request: CryptoRequest): Promise<string | boolean> {
    if (this.closed) return Promise.reject(new Error('crypto worker pool is closed'));
    return new Promise((resolve, reject) => {
      this.queued.push({ request, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    const all = this.queued;
    this.queued = [];
    for (let i = 0; i < all.length; i += CRYPTO_CHUNK_ITEMS) {
      const chunk = all.slice(i, i + CRYPTO_CHUNK_ITEMS);
      const id = this.nextBatchId++;
      this.inFlight.set(id, chunk);
      const worker = this.workers[this.nextWorker++ % this.workers.length] as Worker;
      worker.ref();
      const request: CryptoRequestBatch = { id, items: chunk.map((p) => p.request) };
      worker.postMessage(request);
    }
  }

  private settle(batch: CryptoResponseBatch): void {
    const pending = this.inFlight.get(batch.id);
    if (!pending) return;
    this.inFlight.delete(batch.id);
    if (this.inFlight.size === 0) for (const worker of this.workers) worker.unref();
    pending.forEach((p, i) => {
      const result = batch.results[i];
      if (result?.ok) p.resolve(result.value);
      else p.reject(new Nip44Error(result?.code ?? 'decrypt-failed', result?.message ?? 'no result from the worker'));
    });
  }

  private failAll(err: Error): void {
    for (const pending of this.inFlight.values()) for (const p of pending) p.reject(err);
    this.inFlight.clear();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.failAll(new Error('crypto worker pool closed'));
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/**
 * A verifier that checks on the pool's threads when the caller can wait (`verifyAsync`, through
 * `isAuthentic`: the relay listener, the NIP-9a gateway and receiver) and on this thread otherwise.
 */
export type OffThreadEventVerifier = Required<MaybeOffThreadVerifier>;

export function offThreadVerifier(inline: { verify(event: NostrEvent): boolean }, pool: CryptoWorkerPool): OffThreadEventVerifier {
  return {
    verify: (event) => inline.verify(event),
    verifyAsync: (event) => pool.verify(event).catch(() => false),
  };
}
