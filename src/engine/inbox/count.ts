/**
 * Counting routed notifications into the recipients' inbox counters (issue 13). Called where the
 * engine takes per-recipient claims (content events, bell pages); the store counts each
 * (event, recipient) once whatever the number of relays or replays, and only for users it knows.
 */
import type { NostrEvent } from '../../nostr/event.ts';
import type { CountedInboxType } from '../../store/port-inbox.ts';
import type { StorePort } from '../../store/port.ts';
import type { Metrics } from '../../observability/metrics.ts';

export interface InboxCountingDeps {
  store: StorePort;
  /** Recipient allowlist; empty means everyone. A recipient outside it is not served, so not counted. */
  allowedPubkeys: ReadonlySet<string>;
  /** How long a (event, recipient) count mark is kept: `service.processed_event_ttl_secs`, as claims. */
  processedEventTtlSecs: number;
  metrics: Metrics;
}

/**
 * Count `event` for each of `recipients` as `type`s (one store call). Returns, per recipient in
 * order, the total new count after counting, or null when it did not count (unknown user,
 * counted before, or outside the allowlist).
 */
export async function countRouted(
  deps: InboxCountingDeps,
  event: NostrEvent,
  recipients: ReadonlyArray<{ pubkey: string; type: CountedInboxType }>,
): Promise<(number | null)[]> {
  const served = (pubkey: string): boolean => deps.allowedPubkeys.size === 0 || deps.allowedPubkeys.has(pubkey);
  const entries = recipients.filter((r) => served(r.pubkey)).map((r) => ({ countKey: event.id, recipient: r.pubkey, type: r.type }));
  const counted = await deps.store.countInboxNotifications(entries, deps.processedEventTtlSecs);
  const byRecipient = new Map<string, number | null>();
  entries.forEach((entry, i) => {
    const result = counted[i] ?? null;
    byRecipient.set(entry.recipient, result);
    deps.metrics.inboxCounted.inc({ type: entry.type, outcome: result === null ? 'not_counted' : 'counted' });
  });
  return recipients.map((r) => byRecipient.get(r.pubkey) ?? null);
}
