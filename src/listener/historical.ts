/**
 * The startup replay of one relay (divine-push-service §6.2): control events within the process
 * window once, then every notify list, paged backwards. Delivery itself (verification, dedupe,
 * the sink) is the session's job; this module only decides which REQs to send and when to stop.
 */
import type { Logger } from '../observability/logger.ts';
import type { EventIntake } from './intake.ts';
import {
  HISTORY_CONTROL_SUBSCRIPTION_ID,
  HISTORY_NOTIFY_LISTS_SUBSCRIPTION_PREFIX,
  historyControlFilter,
  notifyListPageFilter,
  type RelayFilter,
} from './subscriptions.ts';

/** How long one replay page may take before the replay gives up with a warning (60 s). */
export const HISTORY_PAGE_TIMEOUT_MS = 60_000;

/** How a one-shot request ended. */
export type FetchEnd =
  | { end: 'eose' }
  | { end: 'closed'; reason: string }
  | { end: 'timeout' }
  /** The connection went away; the replay is retried on the next connection. */
  | { end: 'disconnected' };

/**
 * A one-shot REQ on the current connection, provided by the session. `onEvent` sees every
 * EVENT of the subscription with what intake made of it (after an accepted one was delivered),
 * in order, before the returned promise resolves. The subscription is closed when it ends.
 */
export interface HistoryChannel {
  fetch(id: string, filter: RelayFilter, onEvent: (intake: EventIntake) => void, timeoutMs: number): Promise<FetchEnd>;
}

export interface ReplayOptions {
  relay: string;
  nowSecs: number;
  processWindowDays: number;
  notifyListHistoryLimit: number;
  pageTimeoutMs?: number;
  logger: Logger;
}

export type ReplayResult = 'complete' | 'disconnected';

function endDetail(end: FetchEnd): Record<string, unknown> {
  return end.end === 'closed' ? { end: end.end, reason: end.reason } : { end: end.end };
}

export async function replayHistory(channel: HistoryChannel, options: ReplayOptions): Promise<ReplayResult> {
  const { logger, relay } = options;
  const pageTimeoutMs = options.pageTimeoutMs ?? HISTORY_PAGE_TIMEOUT_MS;

  let controlEvents = 0;
  const controlEnd = await channel.fetch(
    HISTORY_CONTROL_SUBSCRIPTION_ID,
    historyControlFilter(options.nowSecs, options.processWindowDays),
    (intake) => {
      if (intake.outcome === 'accept') controlEvents++;
    },
    pageTimeoutMs,
  );
  if (controlEnd.end === 'disconnected') return 'disconnected';
  if (controlEnd.end !== 'eose')
    logger.warn({ relay, ...endDetail(controlEnd) }, 'historical control-event fetch failed; proceeding without historical events');

  const lists = await replayNotifyLists(channel, options, pageTimeoutMs);
  if (lists === null) return 'disconnected';
  logger.info({ relay, controlEvents, notifyLists: lists.delivered, pages: lists.pages }, 'historical replay done');
  return 'complete';
}

/**
 * Pages `{kinds:[30000], #d:[notify], limit, until}` backwards with no `since`. `until` is the
 * oldest created_at of the previous page, inclusive: several lists may share that second, and the
 * `seen` set absorbs the overlap. Stops on a short page, or on a full page with nothing new (a
 * relay ignoring `until`), except when that page is all one second (see below).
 */
async function replayNotifyLists(
  channel: HistoryChannel,
  options: ReplayOptions,
  pageTimeoutMs: number,
): Promise<{ delivered: number; pages: number } | null> {
  const { logger, relay, notifyListHistoryLimit: limit } = options;
  const seen = new Set<string>();
  let until: number | undefined;
  let delivered = 0;
  for (let page = 1; ; page++) {
    let frames = 0;
    let fresh = 0;
    let oldest: number | undefined;
    const end = await channel.fetch(
      `${HISTORY_NOTIFY_LISTS_SUBSCRIPTION_PREFIX}${page}`,
      notifyListPageFilter(limit, until),
      (intake) => {
        // Every EVENT counts toward the page size, even a malformed one: it took a slot of `limit`.
        frames++;
        if (intake.event === null) return;
        if (oldest === undefined || intake.event.created_at < oldest) oldest = intake.event.created_at;
        if (seen.has(intake.event.id)) return;
        seen.add(intake.event.id);
        fresh++;
        if (intake.outcome === 'accept') delivered++;
      },
      pageTimeoutMs,
    );
    if (end.end === 'disconnected') return null;
    if (end.end !== 'eose') {
      logger.warn({ relay, page, ...endDetail(end) }, 'proceeding with partial historical notify-list replay');
      return { delivered, pages: page };
    }
    if (frames < limit || oldest === undefined) return { delivered, pages: page };
    if (fresh === 0) {
      if (oldest === until && oldest > 0) {
        // A full page from one second: at least `limit` lists share it and since/until cannot
        // reach past them. Stopping (as divine does) would lose every older list; stepping one
        // second back loses only that second's lists beyond the page.
        logger.warn({ relay, page, until }, 'a full notify-list page shares one created_at; stepping past that second');
        until = oldest - 1;
        continue;
      }
      logger.warn({ relay, page, until }, 'historical notify-list pagination made no progress; stopping');
      return { delivered, pages: page };
    }
    until = oldest;
  }
}
