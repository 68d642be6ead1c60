/**
 * One summary flush (reference §8.6 `flush_group`): a claimed group becomes one push, or is
 * deferred or dropped — each with its reason counted. The order matters and is divine's: read,
 * lifetime, sanity, gates again (they may have changed since buffering), budget, name, then the
 * summary claimed and queued on the outbound queue in one store step, then complete. The delivery
 * stage sends it (the outbound queue is the only way to a transport): its retries, dead letters
 * and give-up after `notification.max_event_age_secs` apply to summaries as to every push.
 *
 * The summary's claim is `(summaryClaimEventId(group), owner)`: a flush recovered after a crash
 * between queueing and completing finds the claim taken and only completes the group, so a group
 * is summarised once.
 */
import { randomUUID } from 'node:crypto';
import { isHexPubkey } from '../../nostr/tags.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Metrics } from '../../observability/metrics.ts';
import type { CoalescePolicy, CoalesceType, CompleteGroupResult, GroupClaim } from '../../store/port-coalesce.ts';
import type { StorePort } from '../../store/port.ts';
import { typeEnabled } from '../content.ts';
import type { OutboundQueue } from '../outbound-queue.ts';
import { senderNameOrFallback, type ProfileResolver } from '../profiles.ts';
import { isCoalescedType } from './ingest.ts';
import { collapseKeyForGroup, type FlushSettings } from './policy.ts';
import { buildSummaryMessage } from './summary.ts';
import { checkSocialGate } from '../social-gate.ts';
import type { SocialListCache } from '../social-lists.ts';
import type { OutboundNotification } from '../../notification/types.ts';

/** `push_coalesce_skipped_total` reasons of a group that is not worth a summary. */
export type EmptyReason = 'missing_group' | 'unknown_type' | 'no_pending' | 'missing_actor_count' | 'unparseable_owner';
/** `push_coalesce_skipped_total` reasons of a recipient whose gates now refuse the summary. */
export type SuppressReason = 'not_allowlisted' | 'no_tokens' | 'preference_disabled';

export type FlushOutcome =
  | { kind: 'queued'; actorCount: number }
  | { kind: 'already_queued' }
  | { kind: 'throttled'; afterSecs: number }
  | { kind: 'expired' }
  | { kind: 'suppressed'; reason: SuppressReason }
  | { kind: 'empty'; reason: EmptyReason };

/** The flush was stopped by shutdown or its timeout before it could finish; the caller decides about the lease. */
export class FlushCancelled extends Error {
  constructor() {
    super('coalescing flush cancelled');
    this.name = 'FlushCancelled';
  }
}

export interface FlushDeps {
  store: StorePort;
  /** Where summaries go: the outbound queue (normal lane). */
  outbound: OutboundQueue;
  /** Life of a summary's claim (`service.processed_event_ttl_secs`). */
  processedEventTtlSecs: number;
  profiles: ProfileResolver;
  policy: CoalescePolicy;
  settings: FlushSettings;
  /** Recipient allowlist; empty means everyone. */
  allowedPubkeys: ReadonlySet<string>;
  defaultPreferenceKinds: readonly number[];
  logger: Logger;
  metrics: Metrics;
  /**
   * The recipient's mute and follow gate (`social-gate.ts`), checked again at flush time for the
   * actor a summary names: muted actors never enter a group, but a mute added while the group
   * waited must not see them named. Absent, nothing is checked.
   */
  social?: { lists: SocialListCache | null };
}

/**
 * Flush one claimed group. Returns how it ended; every path that ends the flush completes or
 * requeues the group with the claim's token. Throws {@link FlushCancelled} when `signal` aborted
 * before the summary was queued (the group is then left as it is, under its lease), and any store
 * error as it is.
 */

/** The claim's event id of a group's summary: one summary per group (a group id names its bucket). */
export function summaryClaimEventId(groupId: string): string {
  return `coalesce:${groupId}`;
}

export async function flushGroup(deps: FlushDeps, claim: GroupClaim, signal: AbortSignal): Promise<FlushOutcome> {
  const { store, metrics } = deps;
  const log = deps.logger.child({ groupId: claim.groupId });
  const finish = async (result: CompleteGroupResult | Promise<CompleteGroupResult>): Promise<void> => {
    const settled = await result;
    if (settled === 'not_owner' || settled === 'missing') log.warn({ result: settled }, 'coalescing group changed hands during its flush');
  };
  const drop = async <T extends FlushOutcome>(reason: string, outcome: T): Promise<T> => {
    metrics.coalesceSkipped.inc({ reason });
    await finish(store.completeCoalesceGroup(claim));
    return outcome;
  };

  const group = await store.readCoalesceGroup(claim.groupId);
  if (!group) return drop('missing_group', { kind: 'empty', reason: 'missing_group' });
  if (group.expiresAtSecs > 0 && group.expiresAtSecs <= claim.claimedAtSecs) {
    log.warn(
      { owner: group.owner, type: group.type, target: group.target, pending: group.pending },
      'coalescing group reached its lifetime unsent: dropped',
    );
    return drop('expired', { kind: 'expired' });
  }
  const type = group.type;
  if (!isCoalescedType(type)) return drop('unknown_type', { kind: 'empty', reason: 'unknown_type' });
  if (group.pending <= 0) return drop('no_pending', { kind: 'empty', reason: 'no_pending' });
  if (group.distinctActors <= 0) {
    log.warn({ owner: group.owner, pending: group.pending }, 'coalescing group lost its actor count: dropped');
    return drop('missing_actor_count', { kind: 'empty', reason: 'missing_actor_count' });
  }
  if (!isHexPubkey(group.owner)) return drop('unparseable_owner', { kind: 'empty', reason: 'unparseable_owner' });

  const suppressed = await refusedByGates(deps, group.owner, type);
  if (suppressed) return drop(suppressed, { kind: 'suppressed', reason: suppressed });
  if (signal.aborted) throw new FlushCancelled();

  const budget = await store.consumeRecipientToken(group.owner, claim.groupId, deps.policy);
  if (budget.status !== 'spent') {
    metrics.coalesceDeferred.inc({ reason: budget.status === 'bucket_empty' ? 'recipient_throttled' : 'recipient_daily_capped' });
    const requeued = await store.completeCoalesceGroup(claim, budget.retryAfterSecs);
    if (requeued === 'expired') {
      metrics.coalesceSkipped.inc({ reason: 'expired_throttled' });
      log.warn(
        { owner: group.owner, type, target: group.target },
        'coalescing group reached its lifetime while its recipient was at the limit: dropped',
      );
      return { kind: 'expired' };
    }
    await finish(requeued);
    return { kind: 'throttled', afterSecs: budget.retryAfterSecs };
  }

  // The named actor, unless the recipient has muted (or, with onlyFollowing, unfollowed) them
  // since the group began: then the summary names nobody ("Someone and 6 others").
  const named = group.firstActor !== null && (await mayBeNamed(deps, group.owner, group.firstActor, type)) ? group.firstActor : null;
  const firstActorName = named !== null && isHexPubkey(named) ? await senderNameOrFallback(deps.profiles, named) : '';
  const message = buildSummaryMessage({
    group: named === group.firstActor ? group : { ...group, firstActor: null },
    type,
    firstActorName,
    collapseKey: collapseKeyForGroup(claim.groupId),
  });
  const notification: OutboundNotification = {
    eventId: group.firstEvent ?? group.target,
    recipient: group.owner,
    type,
    message,
    claim: { eventId: summaryClaimEventId(claim.groupId), recipient: group.owner, owner: randomUUID() },
    eventCreatedAt: group.lastAt ?? group.dueAtSecs,
  };
  // Checked again: the name lookup above may have taken a while (a narrowing of `aborted` would not see that).
  if (aborted(signal)) throw new FlushCancelled();
  const [taken] = await deps.outbound.claimAndEnqueue([notification], deps.processedEventTtlSecs);
  await finish(store.completeCoalesceGroup(claim));
  if (!taken) {
    log.info({ owner: group.owner, type }, 'the summary of this group was queued by an earlier flush; group completed');
    return { kind: 'already_queued' };
  }
  metrics.coalescedSends.inc({ type });
  return { kind: 'queued', actorCount: group.distinctActors };
}

function aborted(signal: AbortSignal): boolean {
  return signal.aborted;
}

/** The gates of reference §4.5 steps 1–3, checked again at flush time. */
async function refusedByGates(deps: FlushDeps, owner: string, type: CoalesceType): Promise<SuppressReason | null> {
  if (deps.allowedPubkeys.size > 0 && !deps.allowedPubkeys.has(owner)) return 'not_allowlisted';
  if ((await deps.store.listDevices(owner)).length === 0) return 'no_tokens';
  if (!(await typeEnabled(deps.store, deps.defaultPreferenceKinds, owner, type))) return 'preference_disabled';
  return null;
}

/** Whether the summary of `owner` may name `actor`: not when the recipient's lists now filter them out. */
async function mayBeNamed(deps: FlushDeps, owner: string, actor: string, type: CoalesceType): Promise<boolean> {
  if (!deps.social) return true;
  const [filters] = await deps.store.getSocialFilters([owner]);
  return (await checkSocialGate(deps.social.lists, filters ?? null, owner, actor, type)) === null;
}
