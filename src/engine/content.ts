import type { NostrEvent } from '../nostr/event.ts';
import { VIDEO } from '../nostr/kinds.ts';
import { dTag } from '../nostr/tags.ts';
import { randomUUID } from 'node:crypto';
import type { Clock, DeviceRegistration, RecipientClaim, RecipientGateState, StorePort } from '../store/port.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { contentRecipients, type ContentRecipient } from './recipients.ts';
import { LazyEventCopy } from './event-copy.ts';
import type { NotificationCopy } from './copy.ts';
import { buildSocialPayload, type SocialNotificationType } from './payload.ts';
import type { ProfileResolver } from './profiles.ts';
import type { InboundEnvelope } from './router.ts';
import { isCoalescedType, type CoalesceIngester } from './coalesce/ingest.ts';
import type { OutboundQueue } from './outbound-queue.ts';
import { bellDelivery, bellRateLimited, watchesAuthor } from './bells/rules.ts';
import type { SocialFilters } from '../store/port-social-filters.ts';
import { checkSocialGate } from './social-gate.ts';
import { MuteSubject, type MuteReason } from './mute-match.ts';
import type { SocialListCache } from './social-lists.ts';
import { countedPerRecipient, routedInboxEntries } from './inbox/count.ts';
import type { NotificationType, OutboundNotification } from '../notification/types.ts';

/**
 * The preference category of alert-word pushes (issue 13): its own, off by default (not in
 * `notification.default_preferences.kinds`). Alert words have no trigger kind of their own, so the
 * number is one no trigger uses, at the top of the 0–65535 range 3083 payloads accept.
 */
export const KEYWORD_PREFERENCE_CATEGORY = 65_001;

/**
 * The preference category of announcement pushes (issue 13): operator announcements pushed to the
 * users who opted in, off by default like the keyword category and for the same reason the next
 * number up (no trigger kind of its own).
 */
export const ANNOUNCEMENT_PREFERENCE_CATEGORY = 65_002;

/**
 * The preference category (kind 3083 `kinds`) that enables each notification type. `relayEvent`
 * has none: the user asked for those pushes by creating the NIP-9a callback URL and registering
 * it at a relay, and stops them by revoking it.
 */
export const PREFERENCE_CATEGORY = {
  comment: 1,
  mention: 1,
  like: 7,
  repost: 16,
  directMessage: 1059,
  newPost: 34236,
  keyword: KEYWORD_PREFERENCE_CATEGORY,
  relayEvent: null,
  // Issue 21: a note reply shares the comment/mention category; a zap has its own, the receipt's kind.
  reply: 1,
  zap: 9735,
} as const satisfies Readonly<Record<NotificationType, number | null>>;

/**
 * The coordinate records a delivered push of `type` writes: naming someone in a video already
 * tells them it exists, which is the whole content of a bell, so a mention satisfies both.
 */
export function satisfiedVideoRecords(type: NotificationType): string[] {
  return type === 'mention' ? ['mention', 'newPost'] : [type];
}

/** Why a recipient got nothing; also the `outcome` label of `push_content_recipients_total`. */
export type GateOutcome =
  | 'not_allowlisted'
  | 'no_tokens'
  | 'preference_disabled'
  | 'muted'
  | 'not_followed'
  | 'already_notified'
  | 'video_without_d'
  | 'rate_limited'
  | 'claimed'
  | 'buffered'
  | 'queued';

/** A gate's refusal: the outcome, and for a mute what matched (logged and counted). */
interface GateStop {
  outcome: GateOutcome;
  mutedBy?: MuteReason;
}

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
  /** Where claimed notifications go (the outbound queue, the delivery stage's input). */
  outbound: OutboundQueue;
  /** Bell rules for the fallback of a muted video mention to `newPost`; absent turns the fallback off. */
  bells?: { rateLimitSecs: number; videoRecordTtlSecs: number };
  /**
   * Like/repost coalescing, decided after the claim is held: an immediate push gets the group's
   * collapse key, a buffered one ends here (`buffered`, the claim kept) and is sent by the
   * scheduler's summary flush. Absent, every like and repost is sent at once.
   */
  coalesce?: CoalesceIngester;
  /**
   * The mute and "only people I follow" gate: the recipients' kind 3083 filters are read with
   * their devices, and `lists` (null when `nostr.honour_user_lists` is off) gives their kind
   * 10000 and kind 3 lists. Absent, nobody is filtered.
   */
  social?: { lists: SocialListCache | null };
  /** Count routed notifications into the inbox counters (issue 13); default true. */
  countInbox?: boolean;
}

/** What renders one recipient's copy: {@link LazyEventCopy}, or an optional kind's own (`engine/events/`). */
export interface CopySource {
  copyFor(type: NotificationType): Promise<NotificationCopy & { senderName: string; senderPubkey?: string }>;
}

/**
 * How an event of an app's optional kinds (issue 21, `engine/events/`) goes through the same
 * gates, claims, coalescing and counters as divine's kinds: its own recipients and copy, and the
 * person it is from when that is not its signer (a zap is signed by the payee's lnurl provider and
 * is from the payer), which the mute gate and coalescing must see.
 */
export interface ContentPlan {
  recipients: ContentRecipient[];
  copy: CopySource;
  senderPubkey?: string;
  /**
   * The sender's own words, where muted words are looked for, when they are not the event's
   * content (a zap's comment is the content of its zap request); absent, `ownText(event)`.
   */
  senderText?: string;
}

/** Whether `type` is enabled by a user's preference categories (or the defaults when they set none). */
export function typeEnabledBy(preferenceKinds: readonly number[] | null, defaults: readonly number[], type: NotificationType): boolean {
  const category = PREFERENCE_CATEGORY[type];
  return category === null || (preferenceKinds ?? defaults).includes(category);
}

/** Whether the user's preferences (or the defaults) enable `type`. */
export async function typeEnabled(store: StorePort, defaults: readonly number[], pubkey: string, type: NotificationType): Promise<boolean> {
  const preferences = await store.getPreferences(pubkey);
  return typeEnabledBy(preferences?.kinds ?? null, defaults, type);
}

interface VideoTarget {
  owner: string;
  dTag: string;
}

/**
 * The per-recipient gates before the claim, in divine's order (reference §4.5): allowlist,
 * tokens, preferences (with the bell fallback), then nostr-push's mute and "only people I
 * follow" gate (`social-gate.ts`), the video coordinate record, the bell rate limit.
 * `state` is the recipient's devices and preferences, read for the whole event at once. Null when
 * the recipient passes; the claim is taken afterwards, for everyone who passed together.
 */
async function gateBeforeClaim(
  deps: ContentDeps,
  event: NostrEvent,
  recipient: ContentRecipient,
  state: RecipientGateState,
  video: VideoTarget | null,
  filters: SocialFilters | null,
  sender: string,
  subject: MuteSubject,
): Promise<GateStop | null> {
  const { store } = deps;
  if (deps.allowedPubkeys.size > 0 && !deps.allowedPubkeys.has(recipient.pubkey)) return { outcome: 'not_allowlisted' };
  if (state.devices.length === 0) return { outcome: 'no_tokens' };
  if (!typeEnabledBy(state.preferenceKinds, deps.defaultPreferenceKinds, recipient.type)) {
    if (!(await bellFallbackApplies(deps, event, recipient, state))) return { outcome: 'preference_disabled' };
    // The bell fallback (reference §4.5 step 3): from here on the recipient is a bell, with the
    // bell's coordinate record, rate limit, copy and payload type.
    recipient.type = 'newPost';
  }
  if (deps.social) {
    const stopped = await checkSocialGate(deps.social.lists, filters, recipient.pubkey, sender, recipient.type, subject);
    if (stopped) return stopped;
  }
  if (video) {
    if (video.dTag === '') return { outcome: 'video_without_d' };
    if (await store.hasVideoRecord({ type: recipient.type, owner: video.owner, dTag: video.dTag, recipient: recipient.pubkey }))
      return { outcome: 'already_notified' };
    if (
      recipient.type === 'newPost' &&
      deps.bells &&
      (await bellRateLimited(store, video, recipient.pubkey, deps.bells.videoRecordTtlSecs, deps.logger))
    )
      return { outcome: 'rate_limited' };
  }
  return null;
}

/** A muted mention on a video goes out as a bell when bells are on and the recipient watches the author. */
async function bellFallbackApplies(
  deps: ContentDeps,
  event: NostrEvent,
  recipient: ContentRecipient,
  state: RecipientGateState,
): Promise<boolean> {
  if (!deps.bells || event.kind !== VIDEO || recipient.type !== 'mention') return false;
  if (!typeEnabledBy(state.preferenceKinds, deps.defaultPreferenceKinds, 'newPost')) return false;
  return watchesAuthor(deps.store, event.pubkey, recipient.pubkey, deps.logger);
}

/** A recipient who passed the gates, with the devices the gates read (the first send goes to these). */
interface PassedRecipient {
  recipient: ContentRecipient;
  devices: DeviceRegistration[];
}

/**
 * A live like, comment, mention or repost (kinds 7, 16, 1111, 30023, 34236): every tagged user
 * who passes the gates gets one claimed notification on the outbound queue.
 *
 * The store work is batched per event: one read of every recipient's devices and preferences,
 * the gates in divine's order per recipient, then one atomic claim-and-queue for everyone who
 * passed (a claim is never held without its delivery queued). Likes and reposts that coalesce
 * keep divine's step order instead (claim, coalescing decision, queue), because the decision
 * must be made under the claim. The sender's name is resolved once per event, and only once
 * some recipient passed the gates.
 */
export async function handleContentEvent(
  deps: ContentDeps,
  envelope: InboundEnvelope,
  plan?: ContentPlan,
): Promise<Map<string, GateOutcome>> {
  const { event } = envelope;
  const outcomes = new Map<string, GateOutcome>();
  const nowSecs = Math.floor(deps.clock.nowMs() / 1000);
  if (event.created_at < nowSecs - deps.maxEventAgeSecs) {
    deps.metrics.contentEventsStale.inc();
    deps.logger.debug({ eventId: event.id, ageSecs: nowSecs - event.created_at }, 'content event too old to push');
    return outcomes;
  }
  // A NIP-9a callback's event may notify its owner and nobody else (router.ts, `onlyRecipient`).
  const only = envelope.onlyRecipient;
  const routed = plan?.recipients ?? contentRecipients(event);
  const recipients = only === undefined ? routed : routed.filter((r) => r.pubkey === only);
  if (recipients.length === 0) return outcomes;

  const copy: CopySource =
    plan?.copy ?? new LazyEventCopy({ event, types: recipients.map((r) => r.type), profiles: deps.profiles, logger: deps.logger });
  const sender = plan?.senderPubkey ?? event.pubkey;
  const video: VideoTarget | null = event.kind === VIDEO ? { owner: event.pubkey, dTag: dTag(event) } : null;
  if (video?.dTag === '') deps.logger.warn({ eventId: event.id }, 'video without a d tag: treated as already notified');
  // Prepared once, on first use, for every recipient whose mutes look at what the event is about.
  const subject = new MuteSubject(event, plan?.senderText);
  const record = (recipient: ContentRecipient, outcome: GateOutcome, mutedBy?: MuteReason): void => {
    outcomes.set(recipient.pubkey, outcome);
    if (outcome === 'muted' || outcome === 'not_followed')
      deps.logger.info(
        { eventId: event.id, recipient: recipient.pubkey, sender: event.pubkey, outcome, ...(mutedBy ? { mutedBy } : {}) },
        "push withheld by the recipient's own lists",
      );
    if (mutedBy) deps.metrics.mutesMatched.inc({ reason: mutedBy });
    deps.metrics.contentRecipients.inc({ type: recipient.type, outcome });
  };

  const pubkeys = recipients.map((r) => r.pubkey);
  // The inbox counters (issue 13): every known tagged user, whether or not a push follows, once
  // per (event, recipient), before the gates (the bell fallback below may change a type); read
  // with the gate states in one store step (one script per user on Redis Cluster).
  const countEntries = deps.countInbox === false ? [] : routedInboxEntries(deps, event, recipients);
  const [{ states, counted }, filters] = await Promise.all([
    deps.store.readRecipientsCountingInbox(pubkeys, countEntries, deps.processedEventTtlSecs),
    deps.social ? deps.store.getSocialFilters(pubkeys) : Promise.resolve([]),
  ]);
  countedPerRecipient(deps, recipients, countEntries, counted);
  // Boxed, so that whatever was thrown is told apart from no failure at all.
  let firstError: { error: unknown } | null = null;
  const claimTogether: PassedRecipient[] = [];
  for (const [i, recipient] of recipients.entries()) {
    try {
      const state = states[i] ?? { devices: [], preferenceKinds: null };
      const stopped = await gateBeforeClaim(deps, event, recipient, state, video, filters[i] ?? null, sender, subject);
      if (stopped) record(recipient, stopped.outcome, stopped.mutedBy);
      else if (deps.coalesce && isCoalescedType(recipient.type))
        record(recipient, await deliverCoalescible(deps, event, recipient, state.devices, copy, video, sender));
      else claimTogether.push({ recipient, devices: state.devices });
    } catch (err) {
      // Every recipient is attempted; the first error fails the event so the queue retries it,
      // and the claims taken make the retry skip the recipients already queued.
      firstError ??= { error: err };
    }
  }
  if (claimTogether.length > 0) {
    try {
      const notifications = await Promise.all(
        claimTogether.map(({ recipient, devices }) =>
          notificationFor(deps, event, recipient, devices, copy, video, newClaim(event, recipient)),
        ),
      );
      const taken = await deps.outbound.claimAndEnqueue(notifications, deps.processedEventTtlSecs);
      claimTogether.forEach(({ recipient }, i) => record(recipient, taken[i] ? 'queued' : 'claimed'));
    } catch (err) {
      firstError ??= { error: err };
    }
  }
  if (firstError) throw firstError.error;
  return outcomes;
}

/**
 * A fresh claim for {@link OutboundQueue.claimAndEnqueue}: a new owner on every attempt, which is
 * what lets its steps tell a retry that must finish a staged item from one that finds the work
 * done (store/redis/deliveries.ts).
 */
function newClaim(event: NostrEvent, recipient: ContentRecipient): RecipientClaim {
  return { eventId: event.id, recipient: recipient.pubkey, owner: randomUUID() };
}

/** The notification of one recipient who passed the gates. */
async function notificationFor(
  deps: ContentDeps,
  event: NostrEvent,
  recipient: ContentRecipient,
  devices: DeviceRegistration[],
  copy: CopySource,
  video: VideoTarget | null,
  claim: RecipientClaim,
  collapseKey?: string,
): Promise<OutboundNotification> {
  const text = await copy.copyFor(recipient.type);
  const message = buildSocialPayload({
    type: recipient.type as SocialNotificationType,
    event,
    recipient: recipient.pubkey,
    senderName: text.senderName,
    ...(text.senderPubkey === undefined ? {} : { senderPubkey: text.senderPubkey }),
    copy: { title: text.title, body: text.body, ...(text.template ? { template: text.template } : {}) },
    ...(collapseKey === undefined ? {} : { collapseKey }),
  });
  const notification: OutboundNotification = {
    eventId: event.id,
    recipient: recipient.pubkey,
    type: recipient.type,
    message,
    claim,
    eventCreatedAt: event.created_at,
    devices,
  };
  if (video) notification.video = { ...video, recordTypes: satisfiedVideoRecords(recipient.type) };
  if (video && recipient.type === 'newPost' && deps.bells)
    Object.assign(notification, bellDelivery(video, recipient.pubkey, deps.bells.rateLimitSecs));
  return notification;
}

/**
 * A like or repost under coalescing: decide, then queue it with its claim (or claim it for the
 * summary). Each step survives a retry after it was applied but reported failed (issue 42):
 * - a claim already held means the work is done (queued, or left to a summary) or someone
 *   else's: nothing more, so a retry never queues a push that was already delivered;
 * - the decision is replayed for the same (event, recipient), so a retry decides as before;
 * - claim and queue item are taken together ({@link OutboundQueue.claimAndEnqueue}), never one
 *   without the other.
 * The claim is checked before deciding so that a later copy of the event (another relay, a
 * replay) never takes a coalescing slot or counts in a summary twice.
 */
async function deliverCoalescible(
  deps: ContentDeps,
  event: NostrEvent,
  recipient: ContentRecipient,
  devices: DeviceRegistration[],
  copy: CopySource,
  video: VideoTarget | null,
  sender: string,
): Promise<GateOutcome> {
  const queue = async (collapseKey?: string): Promise<boolean> => {
    const notification = await notificationFor(deps, event, recipient, devices, copy, video, newClaim(event, recipient), collapseKey);
    const [taken] = await deps.outbound.claimAndEnqueue([notification], deps.processedEventTtlSecs);
    return taken === true;
  };
  if (await deps.store.isRecipientClaimed(event.id, recipient.pubkey)) {
    // Handled before: by another copy of the event, or by an earlier attempt at this one, whose
    // claim-and-queue may have stopped between its claim and its commit (the cluster layout's
    // steps). Asking again commits the item that attempt staged (its staged payload wins) and
    // otherwise queues nothing, the claim being someone else's.
    return (await queue()) ? 'queued' : 'claimed';
  }
  const coalesced = await (deps.coalesce as CoalesceIngester).decide(event, recipient.pubkey, recipient.type, sender);
  if (coalesced.kind === 'buffered') {
    // The like waits in its group for the summary; the claim keeps a later copy from counting again.
    await deps.store.claimRecipientDelivery(event.id, recipient.pubkey, deps.processedEventTtlSecs);
    return 'buffered';
  }
  return (await queue(coalesced.kind === 'immediate' ? coalesced.collapseKey : undefined)) ? 'queued' : 'claimed';
}
