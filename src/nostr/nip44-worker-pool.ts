/**
 * NIP-44 decryption on worker threads, so the second core does the ECDH of a registration burst
 * while the main thread verifies, parses and writes the store. Registrations come from distinct
 * users, so the conversation-key cache misses and each one costs a point multiplication.
 *
 * Calls made in the same tick are sent in chunks of {@link DECRYPT_CHUNK_ITEMS} (a `postMessage`
 * costs tens of microseconds, a decryption a few hundred), spread round-robin over the workers.
 */
import { Worker } from 'node:worker_threads';
import { Nip44Error, type Nip44ErrorCode } from './nip44.ts';

export interface DecryptRequestBatch {
  id: number;
  items: Array<{ pubkey: string; content: string }>;
}

export type DecryptResult = { ok: true; plaintext: string } | { ok: false; code: Nip44ErrorCode; message: string };

export interface DecryptResponseBatch {
  id: number;
  results: DecryptResult[];
}

interface Pending {
  pubkey: string;
  content: string;
  resolve: (plaintext: string) => void;
  reject: (err: Error) => void;
}

const WORKER_URL = new URL('./nip44-worker-entry.mjs', import.meta.url);
/**
 * Items per message to a worker. Small enough that the first results come back while the rest
 * are still being decrypted (the engine consumes them in order), large enough to amortise the
 * message cost.
 */
export const DECRYPT_CHUNK_ITEMS = 8;

export class Nip44WorkerPool {
  private readonly workers: Worker[] = [];
  private readonly inFlight = new Map<number, Pending[]>();
  private queued: Pending[] = [];
  private nextBatchId = 1;
  private nextWorker = 0;
  private flushScheduled = false;
  private closed = false;

  constructor(secretHex: string, size: number, cacheCapacity: number) {
    for (let i = 0; i < size; i++) {
      const worker = new Worker(WORKER_URL, { workerData: { secretHex, cacheCapacity } });
      worker.on('message', (batch: DecryptResponseBatch) => this.settle(batch));
      worker.on('error', (err) => this.failAll(err));
      // Unreferenced while idle, so an idle pool never keeps the process alive; referenced
      // while it holds work, so a pending decryption does.
      worker.unref();
      this.workers.push(worker);
    }
  }

  get size(): number {
    return this.workers.length;
  }

  /** Decrypt `content` from `pubkey`; rejects with a {@link Nip44Error} like the inline path. */
  decrypt(pubkey: string, content: string): Promise<string> {
    if (this.closed) return Promise.reject(new Error('NIP-44 worker pool is closed'));
    return new Promise((resolve, reject) => {
      this.queued.push({ pubkey, content, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        queueMicrotask(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    const all = this.queued;
    this.queued = [];
    if (all.length === 0) return;
    for (let i = 0; i < all.length; i += DECRYPT_CHUNK_ITEMS) {
      const chunk = all.slice(i, i + DECRYPT_CHUNK_ITEMS);
      const id = this.nextBatchId++;
      this.inFlight.set(id, chunk);
      const worker = this.workers[this.nextWorker++ % this.workers.length] as Worker;
      worker.ref();
      const request: DecryptRequestBatch = { id, items: chunk.map(({ pubkey, content }) => ({ pubkey, content })) };
      worker.postMessage(request);
    }
  }

  private settle(batch: DecryptResponseBatch): void {
    const pending = this.inFlight.get(batch.id);
    if (!pending) return;
    this.inFlight.delete(batch.id);
    if (this.inFlight.size === 0) for (const worker of this.workers) worker.unref();
    pending.forEach((p, i) => {
      const result = batch.results[i];
      if (result?.ok) p.resolve(result.plaintext);
      else p.reject(new Nip44Error(result?.code ?? 'decrypt-failed', result?.message ?? 'no result from the worker'));
    });
  }

  private failAll(err: Error): void {
    for (const pending of this.inFlight.values()) for (const p of pending) p.reject(err);
    this.inFlight.clear();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.failAll(new Error('NIP-44 worker pool closed'));
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
