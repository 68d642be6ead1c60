/**
 * Turning a parsed `since=` into where a subscription starts: a cursor to drain after, plus the
 * messages `since=latest` sends first.
 */
import type { NtfyMessage } from '../store/port-ntfy.ts';
import type { StorePort } from '../store/port.ts';
import { ntfyIdBefore } from '../store/ntfy-ids.ts';
import type { SinceSpec } from './since.ts';

export interface SubscriptionStart {
  /** Drain the messages after this position (null: every cached message). */
  cursor: string | null;
  /** Sent before draining (`since=latest`); all at or before {@link cursor}. */
  preload: NtfyMessage[];
  /** `since=latest`: a poll returns the preload and nothing else. */
  latest: boolean;
  /** Pending scheduled messages (`scheduled=1`) a poll returns after the rest (a stream has them in its preload). */
  scheduled?: NtfyMessage[];
}

/**
 * - `none`: the store head, so only messages appended from now on follow;
 * - `all`: from the start;
 * - an id: after it when the store holds it (whatever its topic: ids are globally ordered),
 *   otherwise (expired, or from another server) every cached message, as ntfy does; the ntfy app
 *   drops what it already has by id;
 * - a time: after the last position before it, but never past the head, so a time in the future
 *   does not hold back messages published from now on;
 * - `latest`: the newest message of each topic up to the head, then from the head.
 */
export async function subscriptionStart(store: StorePort, topics: readonly string[], since: SinceSpec): Promise<SubscriptionStart> {
  switch (since.kind) {
    case 'none':
      return { cursor: await store.ntfyHeadId(), preload: [], latest: false };
    case 'all':
      return { cursor: null, preload: [], latest: false };
    case 'id':
      return { cursor: (await store.hasNtfyMessage(since.id)) ? since.id : null, preload: [], latest: false };
    case 'time': {
      const before = ntfyIdBefore(since.ms);
      const head = await store.ntfyHeadId();
      // Nothing stored yet, or a time past the newest message: start at the head.
      const cursor = head === null ? null : before !== null && before > head ? head : before;
      return { cursor, preload: [], latest: false };
    }
    case 'latest': {
      const head = await store.ntfyHeadId();
      return { cursor: head, preload: head === null ? [] : await store.latestNtfyMessages(topics, head), latest: true };
    }
  }
}

/** Every message a poll (`poll=1`) returns, in id order: bounded reads until one is complete. */
export async function* pollMessages(
  store: StorePort,
  topics: readonly string[],
  start: SubscriptionStart,
  batchSize: number,
): AsyncGenerator<NtfyMessage> {
  if (start.latest) yield* start.preload;
  else {
    let cursor = start.cursor;
    for (;;) {
      const result = await store.readNtfyMessages(topics, cursor, batchSize);
      yield* result.messages;
      if (result.complete) break;
      cursor = result.position;
    }
  }
  // ntfy orders a poll by time: pending messages are due later than everything stored.
  if (start.scheduled) yield* start.scheduled;
}
