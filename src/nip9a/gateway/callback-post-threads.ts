/**
 * The callback POSTs on worker threads (`nip9a.post_threads`), each with its own undici dispatcher
 * (callback-post.ts), so the gateway's main thread keeps its time for the relay sockets, matching
 * and the store. An undici request with its socket write, the answer's parsing and the timeout's
 * abort signal is a fifth of that thread at 4,000 POSTs a second (bench/nip9a; docs/benchmarks.md
 * at 1cc7613, "Fourth session of 2026-12-05"); handing it over costs a share of one message per
 * turn.
 *
 * The POSTs asked in one turn of the event loop go to a thread in one message (round-robin over
 * the threads); each thread answers the POSTs that finished in one of its turns in one message.
 * A thread that exits (a crash, or terminated) fails the POSTs it held as network errors, which
 * the delivery retries as any other, and is replaced on the next POST.
 */
import { Worker } from 'node:worker_threads';
import { WORKER_ENTRY_URL, workerBody } from '../../util/worker-entry.ts';
import { CONNECTIONS_PER_ORIGIN, type AttemptResult, type CallbackPoster } from './callback-post.ts';

/** One POST asked of a thread. */
export interface ThreadPostRequest {
  id: number;
  url: string;
  body: string;
  timeoutMs: number;
}

/** The POSTs a thread answers in one message. */
export interface ThreadPostAnswers {
  answers: Array<{ id: number; result: AttemptResult }>;
}

/** What a POST held by a thread that exited resolves to: a network error, so it is retried. */
export const THREAD_EXITED_MESSAGE = 'callback POST thread exited';

/** What a POST asked after (or queued at) {@link CallbackPostThreads.close} resolves to. */
const CLOSED_RESULT: AttemptResult = { kind: 'network', message: 'callback POST threads are closed' };

const WORKER_BODY = workerBody(new URL('./callback-post-worker.ts', import.meta.url));

interface PostThread {
  worker: Worker;
  /** POSTs sent to this thread and not answered yet, by id. */
  held: Map<number, (result: AttemptResult) => void>;
}

export interface CallbackPostThreadsOptions {
  /** Threads; at least 1. */
  threads: number;
  /** Keep-alive connections per callback origin, per thread. */
  connectionsPerOrigin?: number;
  /** `nip9a.allow_loopback_callbacks`, for each thread's address policy (`createCallbackPoster`). */
  allowLoopback: boolean;
  /** Told when a thread exits other than by {@link CallbackPostThreads.close} (logged by the role). */
  onThreadExit?: (reason: string) => void;
}

export class CallbackPostThreads {
  private readonly threads: Array<PostThread | null>;
  private queued: Array<{ request: ThreadPostRequest; resolve: (result: AttemptResult) => void }> = [];
  private flushScheduled = false;
  private nextId = 1;
  private nextThread = 0;
  private closed = false;

  constructor(private readonly options: CallbackPostThreadsOptions) {
    this.threads = Array.from({ length: Math.max(1, options.threads) }, () => null);
  }

  /** The POST of an attempt, as {@link CallbackPoster}; never rejects. */
  readonly post: CallbackPoster = (url, body, timeoutMs) => {
    if (this.closed) return Promise.resolve(CLOSED_RESULT);
    return new Promise((resolve) => {
      this.queued.push({ request: { id: this.nextId++, url, body, timeoutMs }, resolve });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  };

  /** The threads running now (a test terminates one to see its POSTs fail over). */
  get runningWorkers(): Worker[] {
    return this.threads.flatMap((t) => (t ? [t.worker] : []));
  }

  private flush(): void {
    this.flushScheduled = false;
    const queued = this.queued;
    this.queued = [];
    if (queued.length === 0) return;
    const index = this.nextThread++ % this.threads.length;
    const thread = this.threads[index] ?? this.spawn(index);
    for (const { request, resolve } of queued) thread.held.set(request.id, resolve);
    thread.worker.ref();
    thread.worker.postMessage(queued.map((q) => q.request));
  }

  private spawn(index: number): PostThread {
    const worker = new Worker(WORKER_ENTRY_URL, {
      workerData: {
        body: WORKER_BODY,
        connectionsPerOrigin: this.options.connectionsPerOrigin ?? CONNECTIONS_PER_ORIGIN,
        allowLoopback: this.options.allowLoopback,
      },
    });
    const thread: PostThread = { worker, held: new Map() };
    worker.on('message', (message: ThreadPostAnswers) => {
      for (const { id, result } of message.answers) {
        const resolve = thread.held.get(id);
        thread.held.delete(id);
        resolve?.(result);
      }
      // Unreferenced when it holds nothing, so an idle gateway's threads never keep it alive.
      if (thread.held.size === 0) worker.unref();
    });
    let reason = 'exited';
    worker.on('error', (err) => (reason = err.message));
    worker.on('exit', (code) => {
      if (this.threads[index] === thread) this.threads[index] = null;
      for (const resolve of thread.held.values()) resolve({ kind: 'network', message: THREAD_EXITED_MESSAGE });
      thread.held.clear();
      if (!this.closed) this.options.onThreadExit?.(`${reason} (code ${code})`);
    });
    this.threads[index] = thread;
    return thread;
  }

  /** Ends the threads; POSTs still held resolve as network errors. */
  async close(): Promise<void> {
    this.closed = true;
    for (const { resolve } of this.queued) resolve(CLOSED_RESULT);
    this.queued = [];
    await Promise.all(this.runningWorkers.map((worker) => worker.terminate()));
  }
}
