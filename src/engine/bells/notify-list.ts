/**
 * Notify lists (kind 30000, `d=notify`; seed 000 "New-post subscriptions", reference §4.3): a
 * subscriber's public list of creators whose new videos they want to hear about ("bells").
 *
 * The router sends them here for historical and live events alike, outside the control events'
 * p-tag gate (a list is addressed to the world) and past the replay horizon (a list published
 * months ago is still the current one). No event claim is taken: the store's replacement rejects
 * stale lists and applies an exact replay as a repair, so a list handled twice is harmless, and
 * a claim left by a failed attempt would lose the list for the claim's TTL.
 */
import type { NostrEvent } from '../../nostr/event.ts';
import { isHexPubkey } from '../../nostr/tags.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Metrics } from '../../observability/metrics.ts';
import type { NotifyListOutcome, NotifyListStore } from '../../store/port-bells.ts';

export interface NotifyListDeps {
  store: NotifyListStore;
  /** `service.notify_list_max_creators`: creators honoured from one list. */
  maxCreators: number;
  logger: Logger;
  metrics: Metrics;
}

/** The creators a list bells and how many were cut by the cap. */
export interface CollectedCreators {
  creators: string[];
  /** Distinct valid creators past the cap, dropped. */
  dropped: number;
}

/**
 * The creators of a notify list: its `p` tags in order, invalid ones and the subscriber itself
 * skipped, duplicates removed before counting (so a repeated tag never uses up the cap), then at
 * most `maxCreators`. The tail past the cap is dropped rather than the whole list refused, so the
 * subscriber keeps the bells that fit.
 */
export function collectNotifyCreators(event: NostrEvent, maxCreators: number): CollectedCreators {
  const creators: string[] = [];
  const seen = new Set<string>([event.pubkey]);
  let dropped = 0;
  for (const tag of event.tags) {
    const value = tag[1];
    if (tag[0] !== 'p' || !isHexPubkey(value) || seen.has(value)) continue;
    seen.add(value);
    if (creators.length < maxCreators) creators.push(value);
    else dropped++;
  }
  return { creators, dropped };
}

/** Apply one notify list; store errors propagate so the inbound queue retries the event. */
export async function handleNotifyList(deps: NotifyListDeps, event: NostrEvent): Promise<NotifyListOutcome> {
  const { creators, dropped } = collectNotifyCreators(event, deps.maxCreators);
  const log = deps.logger.child({ eventId: event.id, subscriber: event.pubkey });
  if (dropped > 0) {
    log.warn({ cap: deps.maxCreators, dropped }, 'Notify list exceeds the creator cap; ignoring the remainder');
  }
  const outcome = await deps.store.replaceNotifySubscriptions({
    subscriber: event.pubkey,
    creators,
    createdAt: event.created_at,
    eventId: event.id,
  });
  deps.metrics.notifyLists.inc({ outcome });
  if (outcome === 'applied') log.debug({ creators: creators.length }, 'notify list applied');
  else log.debug({ createdAt: event.created_at }, 'notify list older than the applied one; ignored');
  return outcome;
}
