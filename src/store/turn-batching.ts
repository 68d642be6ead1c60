/**
 * A store whose hot calls, made by many concurrent handlers in one turn of the event loop, reach
 * the adapter as one call each: every `enqueue` of a turn becomes one `enqueueMany` per queue,
 * every `readRecipients` (and `getSocialFilters`, and `readRecipientsCountingInbox` per count
 * lifetime) one read, every `claimAndEnqueueDeliveries` one claim step per queue and claim
 * lifetime, every `readNtfyMessages` one `readNtfyMessagesMany`, and every `ntfyHeadId` of
 * the turn shares one read of the head (these two also wait for the call out before them).
 *
 * Why: one Redis script or one SQLite transaction costs about the same for one item as for a
 * hundred, and the engine handles dozens of events side by side. Every caller still gets its own
 * result once the merged call is done, so a caller that awaits a write knows it is recorded,
 * exactly as with the plain store; the batched operations are independent per entry, so merging
 * changes no outcome. (A read answered at the end of the turn sees what a read made at the call
 * would have seen, and possibly more that was committed since: what a reader sees of concurrent
 * writes is never promised more precisely than that.)
 *
 * The ntfy reads are merged for the pusher: a burst of subscriptions (thousands of phones
 * reconnecting) starts as many head reads and catch-up reads in a few turns, and one store call
 * each left behind a command, its buffers and promises per subscriber on Redis, tens of MiB of
 * garbage that an idle process keeps resident.
 */
import { TurnBatcher } from '../util/turn-batcher.ts';
import type { ClaimedDelivery, EnqueueItem, QueueName, RecipientGateState, StorePort } from './port.ts';
import type { NtfyReadRequest, NtfyReadResult } from './port-ntfy.ts';
import type { SocialFilters } from './port-social-filters.ts';
import type { InboxCountEntry, RecipientsCountedInbox } from './port-inbox.ts';
import { requireNtfyReadRequest } from './ntfy-shared.ts';

/**
 * A batcher for a call that takes a list and answers one result per entry, in order: the lists of
 * one turn go out as one call, and each caller gets back the slice of results for its own list.
 */
function listCallsMerged<Entry, Result>(call: (entries: Entry[]) => Promise<Result[]>): TurnBatcher<readonly Entry[], Result[]> {
  return new TurnBatcher(async (lists) => {
    const results = await call(lists.flat());
    let offset = 0;
    return lists.map((list) => results.slice(offset, (offset += list.length)));
  });
}

/** `store` with its hot calls merged per turn; every other operation is the store's own. */
export function withTurnBatching(store: StorePort): StorePort {
  const enqueues = new Map<QueueName, TurnBatcher<EnqueueItem, boolean>>();
  const enqueuerFor = (queue: QueueName): TurnBatcher<EnqueueItem, boolean> => {
    let batcher = enqueues.get(queue);
    if (!batcher) {
      batcher = new TurnBatcher((items) => store.enqueueMany(queue, items));
      enqueues.set(queue, batcher);
    }
    return batcher;
  };

  const reads = listCallsMerged((pubkeys: string[]) => store.readRecipients(pubkeys));
  const filterReads = listCallsMerged((pubkeys: string[]) => store.getSocialFilters(pubkeys));

  const claims = new Map<string, TurnBatcher<ReadonlyArray<ClaimedDelivery>, boolean[]>>();
  const claimerFor = (queue: QueueName, ttlSecs: number): TurnBatcher<ReadonlyArray<ClaimedDelivery>, boolean[]> => {
    const key = `${queue}:${ttlSecs}`;
    let batcher = claims.get(key);
    if (!batcher) {
      batcher = listCallsMerged((entries: Array<ClaimedDelivery>) => store.claimAndEnqueueDeliveries(queue, ttlSecs, entries));
      claims.set(key, batcher);
    }
    return batcher;
  };

  const counts = new Map<number, TurnBatcher<readonly InboxCountEntry[], (number | null)[]>>();
  const counterFor = (ttlSecs: number): TurnBatcher<readonly InboxCountEntry[], (number | null)[]> => {
    let batcher = counts.get(ttlSecs);
    if (!batcher) {
      batcher = listCallsMerged((entries: InboxCountEntry[]) => store.countInboxNotifications(entries, ttlSecs));
      counts.set(ttlSecs, batcher);
    }
    return batcher;
  };

  /** A read-and-count of one caller: its users and its entries. */
  interface ReadAndCount {
    pubkeys: readonly string[];
    entries: readonly InboxCountEntry[];
  }
  const readsCounting = new Map<number, TurnBatcher<ReadAndCount, RecipientsCountedInbox>>();
  const readerCountingFor = (ttlSecs: number): TurnBatcher<ReadAndCount, RecipientsCountedInbox> => {
    let batcher = readsCounting.get(ttlSecs);
    if (!batcher) {
      batcher = new TurnBatcher(async (calls) => {
        const { states, counted } = await store.readRecipientsCountingInbox(
          calls.flatMap((call) => call.pubkeys),
          calls.flatMap((call) => call.entries),
          ttlSecs,
        );
        let stateOffset = 0;
        let countOffset = 0;
        return calls.map((call) => ({
          states: states.slice(stateOffset, (stateOffset += call.pubkeys.length)),
          counted: counted.slice(countOffset, (countOffset += call.entries.length)),
        }));
      });
      readsCounting.set(ttlSecs, batcher);
    }
    return batcher;
  };

  // A burst of subscriptions arrives a connection or two per turn: these reads wait for the one
  // out (so each is still issued after its call) and go together, so the burst makes a few
  // hundred reads, not ten thousand.
  const ntfyReads = new TurnBatcher((requests: NtfyReadRequest[]) => store.readNtfyMessagesMany(requests), { oneInFlight: true });
  const ntfyHeads = new TurnBatcher(
    async (callers: null[]) => {
      const head = await store.ntfyHeadId();
      return callers.map(() => head);
    },
    { oneInFlight: true },
  );

  const merged: Partial<Record<keyof StorePort, unknown>> = {
    enqueue: <T>(queue: QueueName, item: EnqueueItem<T>): Promise<boolean> => enqueuerFor(queue).add(item),
    readRecipients: (pubkeys: readonly string[]): Promise<RecipientGateState[]> =>
      pubkeys.length === 0 ? Promise.resolve([]) : reads.add(pubkeys),
    getSocialFilters: (pubkeys: readonly string[]): Promise<Array<SocialFilters | null>> =>
      pubkeys.length === 0 ? Promise.resolve([]) : filterReads.add(pubkeys),
    claimAndEnqueueDeliveries: <T>(queue: QueueName, ttlSecs: number, entries: ReadonlyArray<ClaimedDelivery<T>>): Promise<boolean[]> =>
      entries.length === 0 ? Promise.resolve([]) : claimerFor(queue, ttlSecs).add(entries),
    readNtfyMessages: (topics: readonly string[], afterId: string | null, limit: number): Promise<NtfyReadResult> => {
      const request: NtfyReadRequest = { topics, afterId, limit };
      try {
        // Refused here, alone: in the merged call it would fail every read of the turn.
        requireNtfyReadRequest(request);
      } catch (err) {
        return Promise.reject(err);
      }
      return ntfyReads.add(request);
    },
    ntfyHeadId: (): Promise<string | null> => ntfyHeads.add(null),
    countInboxNotifications: (entries: readonly InboxCountEntry[], ttlSecs: number): Promise<(number | null)[]> =>
      entries.length === 0 ? Promise.resolve([]) : counterFor(ttlSecs).add(entries),
    readRecipientsCountingInbox: (
      pubkeys: readonly string[],
      entries: readonly InboxCountEntry[],
      ttlSecs: number,
    ): Promise<RecipientsCountedInbox> =>
      pubkeys.length === 0 && entries.length === 0
        ? Promise.resolve({ states: [], counted: [] })
        : readerCountingFor(ttlSecs).add({ pubkeys, entries }),
  };
  // Every other member is the store's own, bound to it (so an adapter's lazily made state stays
  // on the adapter), and bound once.
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, property) {
      if (Object.hasOwn(merged, property)) return merged[property as keyof StorePort];
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      let method = bound.get(property);
      if (method === undefined) {
        method = (value as (...args: unknown[]) => unknown).bind(target);
        bound.set(property, method);
      }
      return method;
    },
  });
}
