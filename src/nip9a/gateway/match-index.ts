/**
 * Which registrations want an event, without scanning them all: every `filter` of every
 * registration is filed under the keys of one of its most selective fields (ids, then tag values,
 * then authors, then kinds; a filter with none of them is filed as "any event"). An event looks
 * up its own id, each of its single-letter tag values, its author and its kind, and only the
 * filters found are evaluated in full (`matchesFilter`), then the registration's `ignore` filters
 * and its no-backfill rule (`registrationWants`).
 *
 * Cost per event: a handful of map lookups plus the candidates' full checks, independent of how
 * many registrations never could match (bench/nip9a/gateway.ts).
 */
import type { NostrEvent } from '../../nostr/event.ts';
import { matchesFilter, registrationWants, type Nip9aFilter, type Nip9aRegistration } from '../registration.ts';

interface FiledFilter {
  registration: Nip9aRegistration;
  filter: Nip9aFilter;
}

type Bucket = Set<FiledFilter>;
type Buckets<K> = Map<K, Bucket>;

/** File `filed` under each of `keys` in `buckets`; pushes how to take it out again onto `undo`. */
function fileUnder<K>(buckets: Buckets<K>, keys: readonly K[], filed: FiledFilter, undo: Array<() => void>): void {
  for (const key of new Set(keys)) {
    let bucket = buckets.get(key);
    if (!bucket) buckets.set(key, (bucket = new Set()));
    const own = bucket;
    own.add(filed);
    undo.push(() => {
      own.delete(filed);
      if (own.size === 0 && buckets.get(key) === own) buckets.delete(key);
    });
  }
}

/**
 * Buckets per field, each keyed by the raw value (tags per letter, then value): an event's lookups
 * hash the strings it already has instead of building a prefixed key per id, author and tag
 * (building them was the gateway's hottest line of its own at 4,000 events/s, bench/nip9a).
 */
export class MatchIndex {
  private readonly byId: Buckets<string> = new Map();
  private readonly byAuthor: Buckets<string> = new Map();
  private readonly byKind: Buckets<number> = new Map();
  private readonly byTag = new Map<string, Buckets<string>>();
  private readonly anyEvent: Bucket = new Set();
  /** address → the registration and how to take each of its filings out again. */
  private readonly filed = new Map<string, { registration: Nip9aRegistration; undo: Array<() => void> }>();

  get size(): number {
    return this.filed.size;
  }

  get(address: string): Nip9aRegistration | undefined {
    return this.filed.get(address)?.registration;
  }

  registrations(): IterableIterator<Nip9aRegistration> {
    return (function* (filed) {
      for (const entry of filed.values()) yield entry.registration;
    })(this.filed);
  }

  /** Add or replace the registration at `address`. */
  put(address: string, registration: Nip9aRegistration): void {
    this.remove(address);
    const undo: Array<() => void> = [];
    for (const filter of registration.filters) this.file({ registration, filter }, undo);
    this.filed.set(address, { registration, undo });
  }

  remove(address: string): boolean {
    const previous = this.filed.get(address);
    if (!previous) return false;
    for (const takeOut of previous.undo) takeOut();
    this.filed.delete(address);
    return true;
  }

  /** Every registration that wants `event`, each once. */
  match(event: NostrEvent): Nip9aRegistration[] {
    const matched = new Set<Nip9aRegistration>();
    this.consider(this.anyEvent, event, matched);
    this.consider(this.byId.get(event.id), event, matched);
    this.consider(this.byAuthor.get(event.pubkey), event, matched);
    this.consider(this.byKind.get(event.kind), event, matched);
    if (this.byTag.size > 0) {
      for (const tag of event.tags) {
        const [name, value] = tag;
        if (name?.length !== 1 || value === undefined) continue;
        const buckets = this.byTag.get(name);
        if (buckets) this.consider(buckets.get(value), event, matched);
      }
    }
    return [...matched];
  }

  /** File a filter under the values of its most selective field (ids, a tag, authors, kinds), or as "any event". */
  private file(filed: FiledFilter, undo: Array<() => void>): void {
    const { filter } = filed;
    if (filter.ids) return fileUnder(this.byId, filter.ids, filed, undo);
    const tagEntry = Object.entries(filter.tags ?? {})[0];
    if (tagEntry) {
      const [letter, values] = tagEntry;
      let buckets = this.byTag.get(letter);
      if (!buckets) this.byTag.set(letter, (buckets = new Map<string, Bucket>()));
      return fileUnder(buckets, values, filed, undo);
    }
    if (filter.authors) return fileUnder(this.byAuthor, filter.authors, filed, undo);
    if (filter.kinds) return fileUnder(this.byKind, filter.kinds, filed, undo);
    this.anyEvent.add(filed);
    undo.push(() => this.anyEvent.delete(filed));
  }

  /** Check a bucket's filters against `event`; a registration already matched is not checked again. */
  private consider(bucket: Bucket | undefined, event: NostrEvent, matched: Set<Nip9aRegistration>): void {
    if (bucket === undefined) return;
    for (const { registration, filter } of bucket) {
      if (matched.has(registration) || !matchesFilter(filter, event)) continue;
      if (registrationWants(registration, event)) matched.add(registration);
    }
  }
}
