/**
 * How a key family's placements are carried out (`families.ts` has the table): copying a source
 * key by its placement, counting what the target holds of it for the verification, and finding
 * the source keys no family places.
 */
import {
  copyWholeKey,
  type KeyFamily,
  type MigrationIo,
  forEachMemberStep,
  MIGRATE_SCAN_COUNT,
  splitHash,
  splitSet,
  splitSortedSet,
} from './engine.ts';

/** What an event claim holds (`claims.ts`): "1", or "1:" and its owner; a recipient claim holds its owner's token. */
const EVENT_CLAIM_VALUE = '1';
const isEventClaimValue = (value: string): boolean => value === EVENT_CLAIM_VALUE || value.startsWith(`${EVENT_CLAIM_VALUE}:`);

export type Placement =
  | { copy: 'whole'; to: string }
  | { copy: 'each'; to: readonly string[] }
  | { copy: 'hash'; route: (field: string) => string }
  | { copy: 'zset'; route: (member: string) => string }
  | { copy: 'set'; route: (member: string) => string }
  /**
   * `dedup:{id}:{64 hex}` whose id is not an event id: an event claim on an id that ends with a
   * pubkey (`opened:…:{recipient}`, `dm-push-window:{pubkey}`, `nip98:{event id}`) or a recipient
   * claim on a non-event id (a summary's `coalesce:{gid}`, a send id). The value tells them
   * apart: an event claim holds "1" (or "1:" and its owner), a recipient claim its owner's token.
   */
  | { copy: 'claim'; eventClaim: string; recipientClaim: string }
  | { copy: 'skip' };

export interface FamilySpec {
  name: string;
  /**
   * SCAN MATCH pattern: an exact name, or a fixed prefix and `*`. It may be wider than the family
   * (the parser has the last word), never narrower.
   */
  match: string;
  /** Where `key` goes, or null when it is not this family's. */
  place(key: string): Placement | null;
}

/** Whether `key` is one SCAN MATCH `match` returns (the two forms a family pattern has). */
export function matchesFamilyPattern(match: string, key: string): boolean {
  return match.endsWith('*') ? key.startsWith(match.slice(0, -1)) : key === match;
}

/** Where `spec` places `key`: null unless the key is one its pattern names and its parser knows. */
export function placeKey(spec: FamilySpec, key: string): Placement | null {
  return matchesFamilyPattern(spec.match, key) ? spec.place(key) : null;
}

/** The first family placing `key`, with its placement; null when none does. */
export function placementOf(specs: readonly FamilySpec[], key: string): { family: string; placement: Placement } | null {
  for (const spec of specs) {
    const placement = placeKey(spec, key);
    if (placement) return { family: spec.name, placement };
  }
  return null;
}

/** A spec as the engine's family: copy by its placement, count in the target by the same. */
export function familyOf(spec: FamilySpec): KeyFamily {
  return {
    name: spec.name,
    match: spec.match,
    copy: async (key, io) => {
      const placement = placeKey(spec, key);
      if (!placement || placement.copy === 'skip') return 0;
      if (placement.copy === 'whole') return copyWholeKey(io, key, placement.to);
      if (placement.copy === 'each') {
        const copies = await Promise.all(placement.to.map((to) => copyWholeKey(io, key, to)));
        return Math.min(...copies);
      }
      if (placement.copy === 'claim') {
        const value = await io.source.get(key);
        if (value === null) return 0;
        return copyWholeKey(io, key, isEventClaimValue(value) ? placement.eventClaim : placement.recipientClaim);
      }
      if (placement.copy === 'hash') return splitHash(io, key, placement.route);
      if (placement.copy === 'set') return splitSet(io, key, placement.route);
      return splitSortedSet(io, key, placement.route);
    },
    countTarget: async (keys, io) => {
      const counts = await Promise.all(keys.map((key) => countPlaced(io, key, placeKey(spec, key))));
      return counts.reduce((sum, n) => sum + n, 0);
    },
  };
}

/**
 * Units of `key` the target holds: 1 for a whole key that exists (under every name, for `each`),
 * and for a split key the members found in the keys their routes name (read back from the source,
 * so what was there before or was written by another source key is not counted).
 */
async function countPlaced(io: MigrationIo, key: string, placement: Placement | null): Promise<number> {
  if (!placement || placement.copy === 'skip') return 0;
  if (placement.copy === 'whole') return io.target.exists(placement.to);
  if (placement.copy === 'claim')
    return (await io.target.exists(placement.eventClaim)) + (await io.target.exists(placement.recipientClaim)) > 0 ? 1 : 0;
  // One EXISTS per name: on a cluster the names are in different slots.
  if (placement.copy === 'each') return (await Promise.all(placement.to.map((to) => io.target.exists(to)))).every((n) => n === 1) ? 1 : 0;
  const { route } = placement;
  return forEachMemberStep(io.source, placement.copy, key, async (pairs) => {
    const found = await Promise.all(
      pairs.map(([member]) =>
        placement.copy === 'hash'
          ? io.target.hexists(route(member), member).then((n) => n === 1)
          : placement.copy === 'set'
            ? io.target.sismember(route(member), member).then((n) => n === 1)
            : io.target.zscore(route(member), member).then((score) => score !== null),
      ),
    );
    return found.filter(Boolean).length;
  });
}

/**
 * Source keys of the view no family places (SCAN of everything; `app:` keys belong to the app
 * views and are left to theirs). Returns at most `limit` names and the total.
 */
export async function unclassifiedKeys(
  io: MigrationIo,
  specs: readonly FamilySpec[],
  options: { skipAppViews: boolean; limit?: number },
): Promise<{ total: number; sample: string[] }> {
  const prefix = io.source.options.keyPrefix ?? '';
  const sample: string[] = [];
  let total = 0;
  let cursor = '0';
  do {
    const [next, batch] = await io.source.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', MIGRATE_SCAN_COUNT);
    for (const full of batch) {
      const key = full.slice(prefix.length);
      if (options.skipAppViews && key.startsWith('app:')) continue;
      if (placementOf(specs, key)) continue;
      total += 1;
      if (sample.length < (options.limit ?? 20)) sample.push(key);
    }
    cursor = next;
  } while (cursor !== '0');
  return { total, sample };
}
