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
export type GateOutcome = 'not_allowlisted' | 'no_tokens' | 'preference_disabled' | 'already_notified' | 'video_without_d' | 'claimed' | 'queued';

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
  if (!(await typeEnabled(store, deps.defaultPreferenceKinds, recipient.pubkey, recipient.type))) return 'preference_disabled';
  if (video) {
    if (video.dTag === '') return 'video_without_d';
    if (await store.hasVideoRecord({ type: recipient.type, owner: video.owner, dTag: video.dTag, recipient: recipient.pubkey })) return 'already_notified';
  }
  return (await store.claimRecipientDelivery(event.id, recipient.pubkey, deps.processedEventTtlSecs)) ?? 'claimed';
}

interface VideoTarget {
  owner: string;
  dTag: string;
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
    const text = await copy.copyFor(recipient.type);
    const message = buildSocialPayload({
      type: recipient.type as SocialNotificationType,
      event,
      recipient: recipient.pubkey,
      senderName: text.senderName,
      copy: { title: text.title, body: text.body },
    });
    const notification: OutboundNotification = { eventId: event.id, recipient: recipient.pubkey, type: recipient.type, message, claim, eventCreatedAt: event.created_at };
    if (video) notification.video = { ...video, recordTypes: satisfiedVideoRecords(recipient.type) };
    await deps.enqueueOutbound(notification);
    return 'queued';
  } catch (err) {
    await deps.store.releaseRecipientDelivery(claim).catch(() => undefined);
    throw err;
  }
}
