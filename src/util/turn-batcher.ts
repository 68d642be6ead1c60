/**
 * Gathers the calls made during one turn of the event loop and runs them as one batch when the
 * turn ends (or as soon as {@link TurnBatcher} holds `maxBatch` of them).
 *
 * Why: a store round trip costs the same for one item as for hundreds (one Redis script call,
 * one SQLite transaction), and the stages call it from many concurrent handlers at once. Each
 * caller still gets its own promise, settled with its own result once the batch is written, so a
 * caller that awaits the write knows it is recorded, exactly as with a direct call.
 */
export class TurnBatcher<Input, Output> {
  private pending: Array<{ input: Input; resolve: (output: Output) => void; reject: (err: unknown) => void }> = [];
  private scheduled = false;

  /**
   * @param runBatch writes a batch and returns one output per input, in order; a rejection fails
   *   every caller of that batch.
   */
  constructor(
    private readonly runBatch: (inputs: Input[]) => Promise<Output[]>,
    private readonly maxBatch = DEFAULT_MAX_BATCH,
  ) {}

  add(input: Input): Promise<Output> {
    return new Promise<Output>((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      if (this.pending.length >= this.maxBatch) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.flush();
        });
      }
    });
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    let running: Promise<Output[]>;
    try {
      running = this.runBatch(batch.map((entry) => entry.input));
    } catch (err) {
      running = Promise.reject(err);
    }
    running.then(
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
    );
  }
}

/** Calls written in one batch at most; larger bursts are split so one write never grows unbounded. */
export const DEFAULT_MAX_BATCH = 512;
