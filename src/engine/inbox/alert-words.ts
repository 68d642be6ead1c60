/**
 * Alert words (issue 13): a watched word in a video (34236), a comment (1111) or a long-form post
 * (30023) counts once per event, word and watcher in the watcher's `keyword` counter, and, for a
 * watcher who enabled the `keyword` preference category, pushes once per (event, watcher).
 *
 * Matching follows Twitarr's index: the event's distinct tokens are looked up in the global word
 * index (one lookup per token), and only the words somebody watches fetch their watcher sets, so
 * the cost does not grow with the number of users. The author never counts their own event.
 */
import { randomUUID } from 'node:crypto';
import type { NostrEvent } from '../../nostr/event.ts';
import { COMMENT, LONG_FORM, VIDEO } from '../../nostr/kinds.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Clock } from '../../store/port.ts';
import { notificationCopy } from '../copy.ts';
import type { OutboundQueue } from '../outbound-queue.ts';
import { buildSocialPayload } from '../payload.ts';
import { senderNameOrFallback, type ProfileResolver } from '../profiles.ts';
import { typeEnabledBy } from '../content.ts';
import type { InboxCountingDeps } from './count.ts';
import { alertWordTokens } from './words.ts';
import type { OutboundNotification } from '../../notification/types.ts';

/** The kinds whose text is matched against alert words. */
export const ALERT_WORD_KINDS: ReadonlySet<number> = new Set([VIDEO, COMMENT, LONG_FORM]);
/** The tags whose values are matched besides the content. */
const MATCHED_TAGS: ReadonlySet<string> = new Set(['title', 'summary']);

export interface AlertWordDeps extends InboxCountingDeps {
  profiles: ProfileResolver;
  defaultPreferenceKinds: readonly number[];
  outbound: OutboundQueue;
  /** `notification.max_event_age_secs`: older content neither counts nor pushes, as in the content handler. */
  maxEventAgeSecs: number;
  clock: Clock;
  logger: Logger;
}

/**
 * Whether any word is watched, asked of the store at most every `refreshMs`
 * (`inbox.alert_word_refresh_millis`): while no word is watched (a deployment that does not use
 * them) an event costs no tokenising and no lookup.
 */
export class AlertWordPresence {
  private known: { any: boolean; atMs: number } | null = null;

  constructor(
    private readonly deps: Pick<AlertWordDeps, 'store' | 'clock'>,
    private readonly refreshMs: number,
  ) {}

  async any(): Promise<boolean> {
    const nowMs = this.deps.clock.nowMs();
    if (this.known && nowMs - this.known.atMs < this.refreshMs && nowMs >= this.known.atMs) return this.known.any;
    const any = (await this.deps.store.alertWordCount()) > 0;
    this.known = { any, atMs: nowMs };
    return any;
  }
}

/** The text of an event that alert words are matched against: its content and `title`/`summary` tags. */
export function matchedText(event: NostrEvent): string {
  const parts = [event.content];
  for (const tag of event.tags) if (MATCHED_TAGS.has(tag[0] ?? '') && typeof tag[1] === 'string') parts.push(tag[1]);
  return parts.join('\n');
}

export interface AlertWordOutcome {
  /** (word, watcher) pairs counted now. */
  counted: number;
  /** Watchers a push was queued for. */
  pushed: number;
}

/** Match one live event against every watched word; count, and queue the enabled pushes. */
export async function handleAlertWords(deps: AlertWordDeps, event: NostrEvent, presence: AlertWordPresence): Promise<AlertWordOutcome> {
  const outcome: AlertWordOutcome = { counted: 0, pushed: 0 };
  if (!ALERT_WORD_KINDS.has(event.kind)) return outcome;
  if (event.created_at < Math.floor(deps.clock.nowMs() / 1000) - deps.maxEventAgeSecs) return outcome;
  if (!(await presence.any())) return outcome;
  const tokens = alertWordTokens(matchedText(event));
  if (tokens.length === 0) return outcome;
  const watchers = await deps.store.alertWordWatchers(tokens);
  if (watchers.size === 0) return outcome;

  const served = (pubkey: string): boolean =>
    pubkey !== event.pubkey && (deps.allowedPubkeys.size === 0 || deps.allowedPubkeys.has(pubkey));
  const entries: Array<{ countKey: string; recipient: string; type: 'keyword'; word: string }> = [];
  for (const [word, users] of watchers) {
    for (const user of users) if (served(user)) entries.push({ countKey: `${event.id}#${word}`, recipient: user, type: 'keyword', word });
  }
  if (entries.length === 0) return outcome;
  const counted = await deps.store.countInboxNotifications(entries, deps.processedEventTtlSecs);
  // The first word counted now for each watcher is the one their push names.
  const firstWord = new Map<string, string>();
  entries.forEach((entry, i) => {
    const result = counted[i] ?? null;
    deps.metrics.inboxCounted.inc({ type: 'keyword', outcome: result === null ? 'not_counted' : 'counted' });
    if (result === null) return;
    outcome.counted++;
    deps.metrics.alertWordMatches.inc();
    if (!firstWord.has(entry.recipient)) firstWord.set(entry.recipient, entry.word);
  });
  if (firstWord.size > 0) outcome.pushed = await queueKeywordPushes(deps, event, firstWord);
  return outcome;
}

/** Queue a `keyword` push for each watcher who enabled the category and has a device. */
async function queueKeywordPushes(deps: AlertWordDeps, event: NostrEvent, firstWord: ReadonlyMap<string, string>): Promise<number> {
  const watchers = [...firstWord.keys()];
  const states = await deps.store.readRecipients(watchers);
  const enabled = watchers.filter((watcher, i) => {
    const state = states[i];
    return state !== undefined && state.devices.length > 0 && typeEnabledBy(state.preferenceKinds, deps.defaultPreferenceKinds, 'keyword');
  });
  if (enabled.length === 0) return 0;
  const senderName = await senderNameOrFallback(deps.profiles, event.pubkey);
  const notifications = enabled.map((watcher): OutboundNotification => {
    const word = firstWord.get(watcher) ?? '';
    const message = buildSocialPayload({
      type: 'keyword',
      event,
      recipient: watcher,
      senderName,
      copy: notificationCopy('keyword', senderName, word),
    });
    return {
      eventId: event.id,
      recipient: watcher,
      type: 'keyword',
      message,
      // The (event, recipient) delivery claim: a watcher also tagged in the event gets one push, not two.
      claim: { eventId: event.id, recipient: watcher, owner: randomUUID() },
      eventCreatedAt: event.created_at,
      devices: states[watchers.indexOf(watcher)]?.devices ?? [],
    };
  });
  const taken = await deps.outbound.claimAndEnqueue(notifications, deps.processedEventTtlSecs);
  return taken.filter(Boolean).length;
}
