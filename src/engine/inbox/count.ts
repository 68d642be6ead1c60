/**
 * Counting routed notifications into the recipients' inbox counters (issue 13). Called where the
 * engine takes per-recipient claims (content events, bell pages); the store counts each
 * (event, recipient) once whatever the number of relays or replays, and only for users it knows.
 */
import type { NostrEvent } from '../../nostr/event.ts';
import type { CountedInboxType, InboxCountEntry } from '../../store/port-inbox.ts';
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

/** What counting `event` for `recipients` asks of the store: one entry per recipient the service serves. */
export function routedInboxEntries(
  deps: Pick<InboxCountingDeps, 'allowedPubkeys'>,
  event: NostrEvent,
  recipients: ReadonlyArray<{ pubkey: string; type: CountedInboxType }>,
): InboxCountEntry[] {
  const served = (pubkey: string): boolean => deps.allowedPubkeys.size === 0 || deps.allowedPubkeys.has(pubkey);
  return recipients.filter((r) => served(r.pubkey)).map((r) => ({ countKey: event.id, recipient: r.pubkey, type: r.type }));
}

/**
 * The store's answers for `entries` (from {@link routedInboxEntries}) per recipient in order,
 * with each entry's outcome counted in the metrics: the total new count after counting, or null
 * when it did not count (unknown user, counted before, or outside the allowlist).
 */
export function countedPerRecipient(
  deps: Pick<InboxCountingDeps, 'metrics'>,
  recipients: ReadonlyArray<{ pubkey: string }>,
  entries: readonly InboxCountEntry[],
  counted: readonly (number | null)[],
): (number | null)[] {
  const byRecipient = new Map<string, number | null>();
  entries.forEach((entry, i) => {
    const result = counted[i] ?? null;
    byRecipient.set(entry.recipient, result);
    deps.metrics.inboxCounted.inc({ type: entry.type, outcome: result === null ? 'not_counted' : 'counted' });
  });
  return recipients.map((r) => byRecipient.get(r.pubkey) ?? null);
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
  const entries = routedInboxEntries(deps, event, recipients);
  const counted = await deps.store.countInboxNotifications(entries, deps.processedEventTtlSecs);
  return countedPerRecipient(deps, recipients, entries, counted);
}
