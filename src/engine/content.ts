import type { NostrEvent } from '../nostr/event.ts';
import { VIDEO } from '../nostr/kinds.ts';
import { dTag } from '../nostr/tags.ts';
import type { Clock, RecipientClaim, StorePort } from '../store/port.ts';
import type { NotificationType } from '../delivery/types.ts';
import type { OutboundNotification } from '../delivery/deliver.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { contentRecipients, type ContentRecipient } from './recipients.ts';
import { LazyEventCopy } from './event-copy.ts';
import { buildSocialPayload, type SocialNotificationType } from './payload.ts';
import type { ProfileResolver } from './profiles.ts';
import type { InboundEnvelope } from './router.ts';
import type { CoalesceIngester } from './coalesce/ingest.ts';
import { bellDelivery, bellRateLimited, watchesAuthor } from './bells/rules.ts';

/** The preference category (kind 3083 `kinds`) that enables each notification type. */
export const PREFERENCE_CATEGORY: Readonly<Record<NotificationType, number>> = {
  comment: 1,
  mention: 1,
  like: 7,
  repost: 16,
  directMessage: 1059,
  newPost: 34236,
};

/**
 * The coordinate records a delivered push of `type` writes: naming someone in a video already
 * tells them it exists, which is the whole content of a bell, so a mention satisfies both.
 */
export function satisfiedVideoRecords(type: NotificationType): string[] {
  return type === 'mention' ? ['mention', 'newPost'] : [type];
}

/** Why a recipient got nothing; also the `outcome` label of `push_content_recipients_total`. */
export type GateOutcome = 'not_allowlisted' | 'no_tokens' | 'preference_disabled' | 'already_notified' | 'video_without_d' | 'rate_limited' | 'claimed' | 'buffered' | 'queued';

export interface ContentDeps {
  store: StorePort;
  profiles: ProfileResolver;
  /** Recipient allowlist; empty means everyone. */
  allowedPubkeys: ReadonlySet<string>;
  defaultPreferenceKinds: readonly number[];
  processedEventTtlSecs: number;
  maxEventAgeSecs: number;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** Hand a claimed notification to the delivery stage (the outbound queue). */
  enqueueOutbound: (notification: OutboundNotification) => Promise<void>;
  /** Bell rules for the fallback of a muted video mention to `newPost`; absent turns the fallback off. */
  bells?: { rateLimitSecs: number; videoRecordTtlSecs: number };
  /**
   * Like/repost coalescing, decided after the claim is held: an immediate push gets the group's
   * collapse key, a buffered one ends here (`buffered`, the claim kept) and is sent by the
   * scheduler's summary flush. Absent, every like and repost is sent at once.
   */
  coalesce?: CoalesceIngester;
}

/** Whether the user's preferences (or the defaults) enable `type`. */
export async function typeEnabled(store: StorePort, defaults: readonly number[], pubkey: string, type: NotificationType): Promise<boolean> {
  const preferences = await store.getPreferences(pubkey);
  return (preferences?.kinds ?? defaults).includes(PREFERENCE_CATEGORY[type]);
}

/**
 * The per-recipient gates, in divine's order (reference §4.5): allowlist, tokens, preferences,
 * the video coordinate record, and last the recipient claim, taken only when everything else passed.
 */
async function passGates(deps: ContentDeps, event: NostrEvent, recipient: ContentRecipient, video: VideoTarget | null): Promise<GateOutcome | RecipientClaim> {
  const { store } = deps;
  if (deps.allowedPubkeys.size > 0 && !deps.allowedPubkeys.has(recipient.pubkey)) return 'not_allowlisted';
  if ((await store.listDevices(recipient.pubkey)).length === 0) return 'no_tokens';
  if (!(await typeEnabled(store, deps.defaultPreferenceKinds, recipient.pubkey, recipient.type))) {
    if (!(await bellFallbackApplies(deps, event, recipient))) return 'preference_disabled';
    // The bell fallback (reference §4.5 step 3): from here on the recipient is a bell, with the
    // bell's coordinate record, rate limit, copy and payload type.
    recipient.type = 'newPost';
  }
  if (video) {
    if (video.dTag === '') return 'video_without_d';
    if (await store.hasVideoRecord({ type: recipient.type, owner: video.owner, dTag: video.dTag, recipient: recipient.pubkey })) return 'already_notified';
    if (recipient.type === 'newPost' && deps.bells && (await bellRateLimited(store, video, recipient.pubkey, deps.bells.videoRecordTtlSecs, deps.logger))) return 'rate_limited';
  }
  return (await store.claimRecipientDelivery(event.id, recipient.pubkey, deps.processedEventTtlSecs)) ?? 'claimed';
}

interface VideoTarget {
  owner: string;
  dTag: string;
}

/** A muted mention on a video goes out as a bell when bells are on and the recipient watches the author. */
async function bellFallbackApplies(deps: ContentDeps, event: NostrEvent, recipient: ContentRecipient): Promise<boolean> {
  if (!deps.bells || event.kind !== VIDEO || recipient.type !== 'mention') return false;
  if (!(await typeEnabled(deps.store, deps.defaultPreferenceKinds, recipient.pubkey, 'newPost'))) return false;
  return watchesAuthor(deps.store, event.pubkey, recipient.pubkey, deps.logger);
}

/**
 * A live like, comment, mention or repost (kinds 7, 16, 1111, 30023, 34236): every tagged user
 * who passes the gates gets one claimed notification on the outbound queue. The sender's name
 * is resolved once per event, and only once some recipient passed every gate.
 */
export async function handleContentEvent(deps: ContentDeps, envelope: InboundEnvelope): Promise<Map<string, GateOutcome>> {
  const { event } = envelope;
  const outcomes = new Map<string, GateOutcome>();
  const nowSecs = Math.floor(deps.clock.nowMs() / 1000);
  if (event.created_at < nowSecs - deps.maxEventAgeSecs) {
    deps.metrics.contentEventsStale.inc();
    deps.logger.debug({ eventId: event.id, ageSecs: nowSecs - event.created_at }, 'content event too old to push');
    return outcomes;
  }
  const recipients = contentRecipients(event);
  if (recipients.length === 0) return outcomes;

  const copy = new LazyEventCopy({ event, types: recipients.map((r) => r.type), profiles: deps.profiles, logger: deps.logger });
  const video: VideoTarget | null = event.kind === VIDEO ? { owner: event.pubkey, dTag: dTag(event) } : null;
  if (video?.dTag === '') deps.logger.warn({ eventId: event.id }, 'video without a d tag: treated as already notified');

  let firstError: unknown = null;
  for (const recipient of recipients) {
    try {
      const outcome = await deliverToRecipient(deps, event, recipient, copy, video);
      outcomes.set(recipient.pubkey, outcome);
      deps.metrics.contentRecipients.inc({ type: recipient.type, outcome });
    } catch (err) {
      // Every recipient is attempted; the first error fails the event so the queue retries it,
      // and the claims taken make the retry skip the recipients already queued.
      firstError ??= err;
    }
  }
  if (firstError) throw firstError;
  return outcomes;
}

async function deliverToRecipient(deps: ContentDeps, event: NostrEvent, recipient: ContentRecipient, copy: LazyEventCopy, video: VideoTarget | null): Promise<GateOutcome> {
  const gate = await passGates(deps, event, recipient, video);
  if (typeof gate === 'string') return gate;
  const claim = gate;
  try {
    const coalesced = deps.coalesce ? await deps.coalesce.decide(event, recipient.pubkey, recipient.type) : null;
    if (coalesced?.kind === 'buffered') return 'buffered';
    const text = await copy.copyFor(recipient.type);
    const message = buildSocialPayload({
      type: recipient.type as SocialNotificationType,
      event,
      recipient: recipient.pubkey,
      senderName: text.senderName,
      copy: { title: text.title, body: text.body },
      ...(coalesced?.kind === 'immediate' ? { collapseKey: coalesced.collapseKey } : {}),
    });
    const notification: OutboundNotification = { eventId: event.id, recipient: recipient.pubkey, type: recipient.type, message, claim, eventCreatedAt: event.created_at };
    if (video) notification.video = { ...video, recordTypes: satisfiedVideoRecords(recipient.type) };
    if (video && recipient.type === 'newPost' && deps.bells) Object.assign(notification, bellDelivery(video, recipient.pubkey, deps.bells.rateLimitSecs));
    await deps.enqueueOutbound(notification);
    return 'queued';
  } catch (err) {
    await deps.store.releaseRecipientDelivery(claim).catch(() => undefined);
    throw err;
  }
}
