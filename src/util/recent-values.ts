/**
 * A bounded memo of a pure function's recent results, for derivations that are cheap to redo but
 * run on every push for the same few inputs (a recipient's npub): a hit saves the work and, as much, the garbage the derivation leaves for the collector.
 *
 * Eviction is by insertion order (a Map iterates oldest first) and a hit is not moved to the
 * back: exact recency would cost a delete and a set per hit, and a memo of a pure function is
 * never wrong, only missing.
 */
export class RecentValues<V> {
  private readonly values = new Map<string, V>();

  constructor(
    private readonly derive: (input: string) => V,
    readonly capacity: number,
  ) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
  }

  get(input: string): V {
    const known = this.values.get(input);
    if (known !== undefined) return known;
    const value = this.derive(input);
    if (this.values.size >= this.capacity) {
      const oldest = this.values.keys().next();
      if (!oldest.done) this.values.delete(oldest.value);
    }
    this.values.set(input, value);
    return value;
  }

  get size(): number {
    return this.values.size;
  }
}
