/**
 * The backfill of users' relay lists (issue 36): users who had devices before user relays were on
 * (or before this version), and users registered in a process that does not fetch, have no stored
 * 10002 or 10050 and would never be looked up. The engine walks them
 * ({@link StorePort.usersWithoutRelayLists}) and asks the relays for their lists through the same
 * {@link UserRelayListFetcher} as a registration does.
 *
 * - It never holds up start-up: it is a task of its own, its first walk starting
 *   {@link USER_RELAY_BACKFILL_START_DELAY_MS} after start.
 * - Bounded: one page ({@link RELAY_LIST_FETCH_BATCH} users, one REQ per relay) at a time, the next
 *   after the last one's fetch is done and a pause of {@link USER_RELAY_BACKFILL_PAUSE_MS}.
 * - Resumable: a user looked up is no longer in the walk (their lists are stored, or
 *   `NO_RELAY_LIST_FOUND` when the relays answered and had none), so a walk cut short by a restart
 *   goes on with the users not yet looked up. Users whose lookup got no complete answer (every
 *   relay down) are asked again on the next walk.
 * - Repeated every {@link USER_RELAY_BACKFILL_INTERVAL_MS}: a later walk finds only the users no
 *   walk or registration has looked up yet, so it is cheap; it also picks up registrations whose
 *   fetch was lost (a process stopped before its gathered requests ran).
 *
 * Replicas with the engine role each walk; a user looked up twice costs one REQ more, nothing else.
 */
import type { Logger } from '../observability/logger.ts';
import type { StorePort } from '../store/port.ts';
import { sleep } from '../util/async.ts';
import { RELAY_LIST_FETCH_BATCH, type UserRelayListFetcher } from './user-relay-lists.ts';

export const TASK_USER_RELAY_BACKFILL = 'user_relay_backfill';

/** Wait after start before the first walk: start-up's own reads and connections go first. */
export const USER_RELAY_BACKFILL_START_DELAY_MS = 2_000;
/** Pause between pages: 50 users a page, so at most some 50 lookups a second from one process. */
export const USER_RELAY_BACKFILL_PAUSE_MS = 1_000;
/** Time between the start of one walk and the next. */
export const USER_RELAY_BACKFILL_INTERVAL_MS = 15 * 60_000;

export interface UserRelayBackfillOptions {
  store: Pick<StorePort, 'usersWithoutRelayLists'>;
  fetcher: Pick<UserRelayListFetcher, 'requestAll' | 'flush'>;
  logger: Logger;
  /** Overrides of the delays above (tests). */
  startDelayMs?: number;
  pauseMs?: number;
  intervalMs?: number;
}

/** One whole walk: every page asked for and fetched, one at a time. The users asked for. */
export async function backfillUserRelayLists(options: UserRelayBackfillOptions, signal: AbortSignal): Promise<number> {
  const pauseMs = options.pauseMs ?? USER_RELAY_BACKFILL_PAUSE_MS;
  let cursor: string | null = null;
  let asked = 0;
  do {
    const page: { pubkeys: string[]; cursor: string | null } = await options.store.usersWithoutRelayLists(cursor, RELAY_LIST_FETCH_BATCH);
    cursor = page.cursor;
    if (page.pubkeys.length > 0) {
      options.fetcher.requestAll(page.pubkeys);
      await options.fetcher.flush();
      asked += page.pubkeys.length;
      if (cursor !== null) await sleep(pauseMs, signal);
    }
  } while (cursor !== null && !signal.aborted);
  return asked;
}

/** The backfill task: a walk after the start delay, then one every interval, until `signal`. A failed walk is logged and retried at the next. */
export async function runUserRelayBackfill(options: UserRelayBackfillOptions, signal: AbortSignal): Promise<void> {
  await sleep(options.startDelayMs ?? USER_RELAY_BACKFILL_START_DELAY_MS, signal);
  while (!signal.aborted) {
    try {
      const asked = await backfillUserRelayLists(options, signal);
      if (asked > 0) options.logger.info({ users: asked }, "backfill: asked the relays for users' relay lists");
    } catch (err) {
      if ((err as Error).name === 'AbortError') return;
      options.logger.warn({ err: (err as Error).message }, "backfill of users' relay lists failed; retried at the next walk");
    }
    await sleep(options.intervalMs ?? USER_RELAY_BACKFILL_INTERVAL_MS, signal);
  }
}
