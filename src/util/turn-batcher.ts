/**
 * Gathers the calls made during one turn of the event loop and runs them as one batch when the
 * turn ends (or as soon as {@link TurnBatcher} holds `maxBatch` of them).
 *
 * Why: a store round trip costs the same for one item as for hundreds (one Redis script call,
 * one SQLite transaction), and the stages call it from many concurrent handlers at once. Each
 * caller still gets its own promise, settled with its own result once the batch is written, so a
 * caller that awaits the write knows it is recorded, exactly as with a direct call.
 */
export interface TurnBatcherOptions {
  /** Calls in one batch at most ({@link DEFAULT_MAX_BATCH}). */
  maxBatch?: number;
  /**
   * Send a batch only once the one before it has settled: the calls made meanwhile, over as
   * many turns as the round trip takes, wait and go out together. For a read whose callers
   * arrive a few per turn (one per connection): batches then grow with the load instead of
   * staying one turn's worth. Each batch is still sent after every call in it was made.
   */
  oneInFlight?: boolean;
}

export class TurnBatcher<Input, Output> {
  private pending: Array<{ input: Input; resolve: (output: Output) => void; reject: (err: unknown) => void }> = [];
  private scheduled = false;
  private inFlight = false;
  private readonly maxBatch: number;
  private readonly oneInFlight: boolean;

  /**
   * @param runBatch writes a batch and returns one output per input, in order; a rejection fails
   *   every caller of that batch.
   */
  constructor(
    private readonly runBatch: (inputs: Input[]) => Promise<Output[]>,
    options: TurnBatcherOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? DEFAULT_MAX_BATCH;
    this.oneInFlight = options.oneInFlight ?? false;
  }

  add(input: Input): Promise<Output> {
    return new Promise<Output>((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      if (this.pending.length >= this.maxBatch) this.flush();
      else this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.pending.length === 0 || (this.oneInFlight && this.inFlight)) return;
    const batch = this.pending.length > this.maxBatch ? this.pending.splice(0, this.maxBatch) : this.pending;
    if (batch === this.pending) this.pending = [];
    this.inFlight = true;
    let running: Promise<Output[]>;
    try {
      running = this.runBatch(batch.map((entry) => entry.input));
    } catch (err) {
      running = Promise.reject(err);
    }
    running
      .then(
        (outputs) => {
          if (outputs.length !== batch.length) {
            const err = new Error(`batch returned ${outputs.length} results for ${batch.length} inputs`);
            for (const entry of batch) entry.reject(err);
            return;
          }
          batch.forEach((entry, i) => entry.resolve(outputs[i] as Output));
        },
        (err: unknown) => {
          for (const entry of batch) entry.reject(err);
        },
      )
      .finally(() => {
        this.inFlight = false;
        // The calls that waited for this batch (more may join them in this turn).
        if (this.oneInFlight && this.pending.length > 0) this.schedule();
      });
  }
}

/** Calls written in one batch at most; larger bursts are split so one write never grows unbounded. */
export const DEFAULT_MAX_BATCH = 512;
