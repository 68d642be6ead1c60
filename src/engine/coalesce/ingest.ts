/**
 * The coalescing decision at ingest (reference §4.5 step 7, §8.2): called for a like or repost
 * recipient after every gate passed and the recipient claim is held.
 *
 * - Comments, mentions and bells never coalesce (collapsing one can lose it for good), and a
 *   like/repost without a target (no `a` coordinate, no event reference) is not coalesced either,
 *   because a summary must not mix posts in one count: both are `not_coalesced`, sent as before.
 * - `immediate`: send now, with the group's collapse key.
 * - `buffered`: the flush worker sends the summary later; the recipient claim stays held, so a
 *   replay of the event does nothing.
 * A store error propagates: the event's retry decides again, and a decision already stored for
 * the (event, recipient) is replayed, so the retry of a step that was applied decides as before.
 */
import type { NostrEvent } from '../../nostr/event.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Metrics } from '../../observability/metrics.ts';
import type { CoalescePolicy, CoalesceStore, CoalesceType } from '../../store/port-coalesce.ts';
import { coalesceTarget, referenceFields } from '../references.ts';
import { collapseKeyForGroup } from './policy.ts';
import type { NotificationType } from '../../notification/types.ts';

export type CoalesceDecision =
  { kind: 'not_coalesced' } | { kind: 'immediate'; groupId: string; collapseKey: string } | { kind: 'buffered'; groupId: string };

/** The engine's coalescing dependency (`ContentDeps.coalesce`). */
export interface CoalesceIngester {
  /** `actor`: who the event is from when not its signer (a zap's payer); default `event.pubkey`. */
  decide(event: NostrEvent, recipient: string, type: NotificationType, actor?: string): Promise<CoalesceDecision>;
}

export interface CoalesceIngesterDeps {
  store: Pick<CoalesceStore, 'ingestCoalesceEvent'>;
  policy: CoalescePolicy;
  logger: Logger;
  metrics: Metrics;
}

const NOT_COALESCED: CoalesceDecision = { kind: 'not_coalesced' };

export function isCoalescedType(type: string): type is CoalesceType {
  return type === 'like' || type === 'repost' || type === 'zap';
}

export function createCoalesceIngester(deps: CoalesceIngesterDeps): CoalesceIngester {
  return {
    async decide(event, recipient, type, actor = event.pubkey) {
      if (!isCoalescedType(type)) return NOT_COALESCED;
      const target = coalesceTarget(event);
      if (target === null) return NOT_COALESCED;
      const result = await deps.store.ingestCoalesceEvent(
        {
          type,
          owner: recipient,
          target,
          actor,
          eventId: event.id,
          eventKind: event.kind,
          createdAt: event.created_at,
          references: referenceFields(event),
        },
        deps.policy,
      );
      if (result.disposition === 'throttled') {
        deps.metrics.throttledRecipients.inc({ type });
        deps.logger.debug(
          { eventId: event.id, recipient, groupId: result.groupId },
          'recipient budget spent: like/repost buffered for the summary',
        );
      }
      if (result.disposition === 'immediate')
        return { kind: 'immediate', groupId: result.groupId, collapseKey: collapseKeyForGroup(result.groupId) };
      return { kind: 'buffered', groupId: result.groupId };
    },
  };
}
