/**
 * The listener's picture of which user relays cover whom (issue 36), kept in memory and changed
 * user by user: a full read of the store's coverage (`userRelayCoverage`) replaces it, and a
 * changed user's lists (from the store's change log, `userRelayChangesSince`) move just that user.
 * {@link UserRelayCoverageIndex.ranked} answers as the store's full read would, so the manager
 * decides from either alike; a relay whose users did not change keeps its answer object, so the
 * manager sees at a glance that its filters need no resend.
 */
import type { RecipientGateState } from '../store/port.ts';
import type { RelayCoverage, UserRelayLists } from '../store/port-user-relays.ts';

/** The relays one user with devices counts for: read relays (10002 `nip65` ∪ registration `app`) and DM relays (10050). */
export interface UserCoverageEntry {
  read: ReadonlySet<string>;
  dm: ReadonlySet<string>;
}

/** The entry of a user from their stored lists and devices; null when they cover nothing (no device, or no relay). */
export function coverageEntryOf(
  lists: UserRelayLists,
  recipient: Pick<RecipientGateState, 'devices'> | undefined,
): UserCoverageEntry | null {
  if ((recipient?.devices.length ?? 0) === 0) return null;
  const read = new Set([...(lists.nip65?.relays ?? []), ...(lists.app?.relays ?? [])]);
  const dm = new Set(lists.dm?.relays ?? []);
  return read.size === 0 && dm.size === 0 ? null : { read, dm };
}

interface RelayUsers {
  readers: Set<string>;
  dmReaders: Set<string>;
  /** The answer for this relay, null while its users changed since it was made. */
  answer: RelayCoverage | null;
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const item of a) if (!b.has(item)) return false;
  return true;
}

export class UserRelayCoverageIndex {
  private readonly users = new Map<string, UserCoverageEntry>();
  private readonly relays = new Map<string, RelayUsers>();
  private changes = 0;

  /** Counts every change that moved a user; unchanged, {@link ranked} would answer as before. */
  get version(): number {
    return this.changes;
  }

  /** Users with devices that name at least one relay. */
  get userCount(): number {
    return this.users.size;
  }

  /** Everything from a full read of the store's coverage. */
  replaceAll(coverage: readonly RelayCoverage[]): void {
    const read = new Map<string, Set<string>>();
    const dm = new Map<string, Set<string>>();
    const add = (into: Map<string, Set<string>>, pubkey: string, url: string) => {
      let urls = into.get(pubkey);
      if (urls === undefined) into.set(pubkey, (urls = new Set()));
      urls.add(url);
    };
    for (const relay of coverage) {
      for (const pubkey of relay.readers) add(read, pubkey, relay.url);
      for (const pubkey of relay.dmReaders) add(dm, pubkey, relay.url);
    }
    this.users.clear();
    this.relays.clear();
    for (const pubkey of new Set([...read.keys(), ...dm.keys()]))
      this.set(pubkey, { read: read.get(pubkey) ?? new Set(), dm: dm.get(pubkey) ?? new Set() });
    this.changes++;
  }

  /** Move one user to `entry` (null: they cover nothing now). True when anything changed. */
  set(pubkey: string, entry: UserCoverageEntry | null): boolean {
    const old = this.users.get(pubkey) ?? null;
    if (old === null && entry === null) return false;
    if (old !== null && entry !== null && sameSet(old.read, entry.read) && sameSet(old.dm, entry.dm)) return false;
    if (old !== null) {
      for (const url of old.read) this.leave(url, pubkey, 'readers');
      for (const url of old.dm) this.leave(url, pubkey, 'dmReaders');
    }
    if (entry === null) this.users.delete(pubkey);
    else {
      this.users.set(pubkey, entry);
      for (const url of entry.read) this.join(url, pubkey, 'readers');
      for (const url of entry.dm) this.join(url, pubkey, 'dmReaders');
    }
    this.changes++;
    return true;
  }

  /** Every relay with its users, ranked as `userRelayCoverage` ranks (most users first, ties by URL). */
  ranked(): RelayCoverage[] {
    const out: RelayCoverage[] = [];
    for (const [url, relay] of this.relays) {
      if (relay.answer === null) {
        let users = relay.readers.size;
        for (const pubkey of relay.dmReaders) if (!relay.readers.has(pubkey)) users++;
        relay.answer = { url, readers: [...relay.readers].sort(), dmReaders: [...relay.dmReaders].sort(), users };
      }
      out.push(relay.answer);
    }
    return out.sort((a, b) => b.users - a.users || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
  }

  private join(url: string, pubkey: string, role: 'readers' | 'dmReaders'): void {
    let relay = this.relays.get(url);
    if (relay === undefined) this.relays.set(url, (relay = { readers: new Set(), dmReaders: new Set(), answer: null }));
    relay[role].add(pubkey);
    relay.answer = null;
  }

  private leave(url: string, pubkey: string, role: 'readers' | 'dmReaders'): void {
    const relay = this.relays.get(url);
    if (relay === undefined) return;
    relay[role].delete(pubkey);
    relay.answer = null;
    if (relay.readers.size === 0 && relay.dmReaders.size === 0) this.relays.delete(url);
  }
}
