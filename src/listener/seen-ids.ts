/** Event ids remembered for cross-relay dedupe (about 7 MB of strings at the default). */
export const DEFAULT_SEEN_IDS_CAPACITY = 100_000;

/**
 * A bounded set of event ids, least recently added evicted first. Only ids of events that were
 * verified and accepted are added, so "seen" means "an authentic event with this id was taken".
 */
export class SeenIds {
  // A Map iterates in insertion order, which makes the oldest entry the first key.
  private readonly ids = new Map<string, true>();

  constructor(private readonly capacity: number = DEFAULT_SEEN_IDS_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }

  /** Adds `id` (or refreshes it to newest); evicts the oldest id when full. */
  add(id: string): void {
    if (this.ids.delete(id)) {
      this.ids.set(id, true);
      return;
    }
    if (this.ids.size >= this.capacity) {
      const oldest = this.ids.keys().next();
      if (!oldest.done) this.ids.delete(oldest.value);
    }
    this.ids.set(id, true);
  }

  delete(id: string): void {
    this.ids.delete(id);
  }

  get size(): number {
    return this.ids.size;
  }
}
