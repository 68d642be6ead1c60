/**
 * WAL checkpoints on a thread of their own.
 *
 * Why: SQLite's automatic checkpoint runs inside the COMMIT that crosses its threshold, on the
 * store's connection, so on the thread that serves every role of the process. A checkpoint reads
 * the WAL's frames back, writes them into the database file and syncs both files
 * (`synchronous = NORMAL`): at 2,000 social events a second that was a few milliseconds of the
 * event loop's time every few commits, blocked in `fsync`. Here a worker thread with its own
 * connection does it, PASSIVE (never taking a lock the writer waits for), soon after commits,
 * once the store commits often enough for it to matter.
 *
 * The store's connection keeps an automatic checkpoint, at a much higher threshold
 * ({@link BACKSTOP_AUTOCHECKPOINT_PAGES}), so the WAL stays bounded if this thread falls behind
 * (a long reader pinning old frames, say) or fails; after a failure it goes back to SQLite's
 * default threshold for the rest of the store's life. Durability is the WAL's and unchanged: a
 * commit is on disk once it is in the WAL, whoever copies it on later.
 */
import { Worker } from 'node:worker_threads';
import type { Database } from 'better-sqlite3';
import type { Logger } from '../../observability/logger.ts';
import { WORKER_ENTRY_URL, workerBody } from '../../util/worker-entry.ts';
import type { CheckpointReport } from './checkpoint-worker.ts';

const WORKER_BODY = workerBody(new URL('./checkpoint-worker.ts', import.meta.url));

/**
 * How long after a commit the thread is asked to checkpoint, at most once per this many
 * milliseconds: at 2,000 events/s about 800 frames (3 MiB of WAL) per checkpoint, few enough
 * that one finishes between two commits and the WAL starts over instead of growing.
 */
export const CHECKPOINT_INTERVAL_MS = 50;

/**
 * Commits within one second after which the thread starts. A thread costs the process about
 * 10 MiB of resident memory (its own V8 isolate), which a quiet store does not need to spend:
 * until it is this busy, SQLite's own automatic checkpoint runs as usual.
 */
export const START_AFTER_COMMITS_PER_SECOND = 20;

/** The store connection's own automatic checkpoint while this thread does the work: WAL pages (~32 MiB). */
export const BACKSTOP_AUTOCHECKPOINT_PAGES = 8000;

/** SQLite's default `wal_autocheckpoint` (pages), restored if the checkpoint thread fails. */
export const SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES = 1000;

/**
 * The thread allocates next to nothing (one pragma per checkpoint), so its V8 heap is capped well
 * below Node's defaults: a leak there would fail the thread (and hand checkpoints back to the
 * writer) instead of growing the server. Its ~10 MiB of resident memory is the isolate itself,
 * which these limits do not shrink; {@link START_AFTER_COMMITS_PER_SECOND} is what spares it.
 */
const CHECKPOINT_THREAD_HEAP_LIMITS = { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 };

export class BackgroundCheckpointer {
  private worker: Worker | null = null;
  private failed = false;
  private closed = false;
  /** A request is out; the next waits for its answer. */
  private inFlight = false;
  private timer: NodeJS.Timeout | null = null;
  private lastRequestMs = 0;
  private windowStartMs = 0;
  private commitsInWindow = 0;
  /** Checkpoints finished (tests and diagnostics). */
  checkpointsDone = 0;

  /** Whether the checkpoint thread is up (it starts once the store is busy). */
  get threadRunning(): boolean {
    return this.worker !== null;
  }

  constructor(
    private readonly path: string,
    private readonly db: Database,
    private readonly logger: Logger,
    private readonly startAfterCommitsPerSecond = START_AFTER_COMMITS_PER_SECOND,
  ) {}

  /**
   * After a commit: once the store is busy enough, ask for a checkpoint, at most once per
   * {@link CHECKPOINT_INTERVAL_MS}.
   */
  noteCommit(): void {
    if (this.failed || this.closed) return;
    if (this.worker === null && !this.busyEnoughToStart()) return;
    if (this.inFlight || this.timer !== null) return;
    const waitMs = this.lastRequestMs + CHECKPOINT_INTERVAL_MS - Date.now();
    if (waitMs > 0) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.request();
      }, waitMs);
      this.timer.unref();
      return;
    }
    this.request();
  }

  /** Stop the thread; its connection is closed before this resolves, so the store's close is the last. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const worker = this.worker;
    this.worker = null;
    if (worker === null) return;
    // Held until it has closed its connection: an unreferenced worker would let the loop end first.
    worker.ref();
    await new Promise<void>((resolve) => {
      worker.once('exit', () => resolve());
      worker.postMessage('close');
    });
  }

  private busyEnoughToStart(): boolean {
    const nowMs = Date.now();
    if (nowMs - this.windowStartMs >= 1000) {
      this.windowStartMs = nowMs;
      this.commitsInWindow = 0;
    }
    return ++this.commitsInWindow >= this.startAfterCommitsPerSecond;
  }

  private request(): void {
    if (this.failed || this.closed) return;
    this.lastRequestMs = Date.now();
    this.inFlight = true;
    this.ensureWorker().postMessage('checkpoint');
  }

  /** Started once the store is busy (a quiet one, or one that only reads, never starts it). */
  private ensureWorker(): Worker {
    if (this.worker !== null) return this.worker;
    this.db.pragma(`wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT_PAGES}`);
    const worker = new Worker(WORKER_ENTRY_URL, {
      workerData: { body: WORKER_BODY, path: this.path },
      resourceLimits: CHECKPOINT_THREAD_HEAP_LIMITS,
    });
    // The store's close stops it; until then it must not keep a finished process alive.
    worker.unref();
    worker.on('message', (report: CheckpointReport) => {
      this.inFlight = false;
      if (report.error !== null) {
        this.logger.warn({ err: report.error }, 'background WAL checkpoint failed; will retry after the next commit');
        return;
      }
      this.checkpointsDone++;
    });
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => {
      if (!this.closed) this.fail(new Error(`checkpoint thread exited with code ${code}`));
    });
    this.worker = worker;
    return worker;
  }

  private fail(err: Error): void {
    if (this.failed || this.closed) return;
    this.failed = true;
    this.inFlight = false;
    this.worker = null;
    this.logger.warn({ err: err.message }, 'background WAL checkpoints stopped; the store checkpoints on its own thread from now on');
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES}`);
  }
}
