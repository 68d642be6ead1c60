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

/** The keys a filter is filed under (one field's values), or null for "any event". */
function filingKeys(filter: Nip9aFilter): string[] | null {
  if (filter.ids) return filter.ids.map((id) => `i:${id}`);
  const tagEntry = Object.entries(filter.tags ?? {})[0];
  if (tagEntry) return tagEntry[1].map((value) => `t:${tagEntry[0]}:${value}`);
  if (filter.authors) return filter.authors.map((author) => `a:${author}`);
  if (filter.kinds) return filter.kinds.map((kind) => `k:${kind}`);
  return null;
}

export class MatchIndex {
  private readonly buckets = new Map<string, Set<FiledFilter>>();
  private readonly anyEvent = new Set<FiledFilter>();
  /** address → what was filed for it, to remove it again. */
  private readonly filed = new Map<string, { registration: Nip9aRegistration; entries: Array<[string | null, FiledFilter]> }>();

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
    const entries: Array<[string | null, FiledFilter]> = [];
    for (const filter of registration.filters) {
      const filed: FiledFilter = { registration, filter };
      const keys = filingKeys(filter);
      if (keys === null) {
        this.anyEvent.add(filed);
        entries.push([null, filed]);
        continue;
      }
      for (const key of new Set(keys)) {
        let bucket = this.buckets.get(key);
        if (!bucket) this.buckets.set(key, (bucket = new Set()));
        bucket.add(filed);
        entries.push([key, filed]);
      }
    }
    this.filed.set(address, { registration, entries });
  }

  remove(address: string): boolean {
    const previous = this.filed.get(address);
    if (!previous) return false;
    for (const [key, filed] of previous.entries) {
      if (key === null) {
        this.anyEvent.delete(filed);
        continue;
      }
      const bucket = this.buckets.get(key);
      bucket?.delete(filed);
      if (bucket?.size === 0) this.buckets.delete(key);
    }
    this.filed.delete(address);
    return true;
  }

  /** Every registration that wants `event`, each once. */
  match(event: NostrEvent): Nip9aRegistration[] {
    const candidates = new Set<FiledFilter>(this.anyEvent);
    const add = (key: string): void => {
      const bucket = this.buckets.get(key);
      if (bucket) for (const filed of bucket) candidates.add(filed);
    };
    add(`i:${event.id}`);
    add(`a:${event.pubkey}`);
    add(`k:${event.kind}`);
    for (const tag of event.tags) {
      const [name, value] = tag;
      if (name?.length === 1 && value !== undefined) add(`t:${name}:${value}`);
    }
    const matched = new Set<Nip9aRegistration>();
    for (const { registration, filter } of candidates) {
      if (matched.has(registration) || !matchesFilter(filter, event)) continue;
      if (registrationWants(registration, event)) matched.add(registration);
    }
    return [...matched];
  }
}
