/**
 * One page of bells (`newPost`) for one video, as the fan-out worker delivers it. The gates are
 * divine's, in its order (reference §4.5): allowlist, tokens, preference (category 34236), the
 * video's `newPost` coordinate record, the bell rate limit, the recipient claim; then the send,
 * and the bookkeeping of §4.5 step 11.
 *
 * The store work is batched per page (DESIGN §5: one pipeline or one transaction per step): one
 * read of every watcher's gate state, one claim of everyone who passed, the sends with at most
 * `concurrency` in flight (straight to the transports, not through the outbound queue, so the page
 * is done only once its sends are), and the outcomes written in batches while sends go on. The
 * send and its outcome classification are `deliverNotification`'s own (`sendToDevices`,
 * `classifyOutcomes`).
 *
 * Claims are taken short-lived ({@link inFlightClaimSecs}) and extended to the processed-event TTL
 * only when the outcome is written. A worker killed mid-page leaves claims that expire before its
 * page returns, so those watchers are belled on the retry instead of being skipped as claimed:
 * nobody is lost, and only bells sent but not yet recorded can go out twice.
 */
import { classifyOutcomes, sendToDevices, stillDeadAfterRegistration } from '../../delivery/deliver.ts';
import type { PushTransport } from '../../delivery/types.ts';
import { redact, type Logger } from '../../observability/logger.ts';
import type { Metrics } from '../../observability/metrics.ts';
import type { NostrEvent } from '../../nostr/event.ts';
import type { BellBatch, BellWatcherState } from '../../store/port-bells.ts';
import type { RecipientClaim, StorePort } from '../../store/port.ts';
import { forEachLimited } from '../../roles/queue-worker.ts';
import { PREFERENCE_CATEGORY } from '../content.ts';
import type { NotificationCopy } from '../copy.ts';
import { buildSocialPayload, withBadge } from '../payload.ts';
import { countRouted } from '../inbox/count.ts';
import type { BellVideo } from './rules.ts';

export interface BellRecipientDeps {
  store: StorePort;
  /** The push transports (FCM, APNs, Web Push, local ntfy topics). */
  transports: readonly PushTransport[];
  /** Recipient allowlist; empty means everyone. */
  allowedPubkeys: ReadonlySet<string>;
  defaultPreferenceKinds: readonly number[];
  processedEventTtlSecs: number;
  /** Life of a bell's claim while its send is in flight ({@link inFlightClaimSecs}). */
  inFlightClaimSecs: number;
  /** `service.new_post_rate_limit_secs`. */
  rateLimitSecs: number;
  /** `service.video_coordinate_dedup_ttl_secs`. */
  videoRecordTtlSecs: number;
  /** Sends in flight at once. */
  concurrency: number;
  /** Count each watcher's new post into the inbox counters (issue 13); default true. */
  countInbox?: boolean;
  logger: Logger;
  metrics: Metrics;
}

/**
 * What became of one watcher: the `outcome` label of `push_content_recipients_total` for type
 * `newPost`. `retryable`: every device failed retryably; the claim is released and the page retried.
 */
export type BellOutcome =
  | 'not_allowlisted'
  | 'no_tokens'
  | 'preference_disabled'
  | 'already_notified'
  | 'rate_limited'
  | 'claimed'
  | 'delivered'
  | 'failed'
  | 'retryable';

/** The bell's text and sender name, resolved once per page. */
export type BellCopy = () => Promise<NotificationCopy & { senderName: string }>;

export interface BellPageResult {
  /** Shutdown began before every claimed watcher was sent to (their claims were given back). */
  cancelled: boolean;
  /** Some watcher should be tried again (a retryable provider answer, or a store failure). */
  failed: boolean;
  /** The longest Retry-After a provider asked for, in seconds (0 when none). */
  providerDelaySecs: number;
}

/**
 * How long a bell's claim lives while its send is in flight: half the page lease, so a crashed
 * worker's claims have expired by the time its page returns. A page must therefore finish within
 * half its lease, which the lease guidance (`ceil(page_size / concurrency) × 45 s` plus headroom)
 * leaves room for.
 */
export function inFlightClaimSecs(leaseSecs: number): number {
  return Math.max(1, Math.floor(leaseSecs / 2));
}

/** The gates before the claim, from the batched state; null when the watcher passes them. */
function gate(deps: BellRecipientDeps, state: BellWatcherState): BellOutcome | null {
  if (deps.allowedPubkeys.size > 0 && !deps.allowedPubkeys.has(state.watcher)) return 'not_allowlisted';
  if (state.devices.length === 0) return 'no_tokens';
  if (!(state.preferenceKinds ?? deps.defaultPreferenceKinds).includes(PREFERENCE_CATEGORY.newPost)) return 'preference_disabled';
  if (state.alreadyNotified) return 'already_notified';
  if (state.rateLimited) return 'rate_limited';
  return null;
}

/** Outcomes written together once this many are waiting. */
export const BELL_BOOKKEEPING_BATCH = 256;
/** Longest an outcome waits for its batch to fill before it is written anyway. */
export const BELL_BOOKKEEPING_DELAY_MS = 10;

/**
 * Outcomes waiting to be written, in batches of up to {@link BELL_BOOKKEEPING_BATCH} or every
 * {@link BELL_BOOKKEEPING_DELAY_MS}, one write at a time: per-bell writes would cost the store
 * several commits per push. What a crash can leave unrecorded is bounded by that window (those
 * bells may go out again on the page's retry).
 */
class BellBookkeeper {
  private pending: BellBatch;
  private writing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly dead: Array<{ recipient: string; token: string; sinceMs: number | undefined }> = [];

  constructor(
    private readonly deps: BellRecipientDeps,
    private readonly video: BellVideo,
    private readonly log: Logger,
  ) {
    this.pending = this.emptyBatch();
  }

  private emptyBatch(): BellBatch {
    const { deps } = this;
    return {
      video: this.video,
      delivered: [],
      failed: [],
      released: [],
      rateLimited: [],
      claimTtlSecs: deps.processedEventTtlSecs,
      rateLimitSecs: deps.rateLimitSecs,
      videoRecordTtlSecs: deps.videoRecordTtlSecs,
    };
  }

  delivered(claim: RecipientClaim, tokens: string[]): void {
    this.pending.delivered.push({ claim, tokens });
    this.kick();
  }
  failed(claim: RecipientClaim): void {
    this.pending.failed.push(claim);
    this.kick();
  }
  released(claim: RecipientClaim): void {
    this.pending.released.push(claim);
    this.kick();
  }
  rateLimited(recipient: string): void {
    this.pending.rateLimited.push(recipient);
  }
  deadToken(recipient: string, token: string, sinceMs?: number): void {
    this.dead.push({ recipient, token, sinceMs });
  }

  private kick(): void {
    if (this.size() >= BELL_BOOKKEEPING_BATCH) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), BELL_BOOKKEEPING_DELAY_MS);
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.writing ??= this.drain().finally(() => (this.writing = null));
  }

  private async drain(): Promise<void> {
    while (this.size() > 0) {
      const batch = this.pending;
      this.pending = this.emptyBatch();
      try {
        await this.deps.store.recordBellBatch(batch);
      } catch (err) {
        // Log and carry on: the pushes are out. An unextended claim expires and may send again on
        // a page retry; a missing record or window only loosens a later suppression.
        this.log.warn({ err: (err as Error).message, bells: batch.delivered.length }, 'bell bookkeeping failed; carrying on');
      }
    }
  }

  private size(): number {
    const p = this.pending;
    return p.delivered.length + p.failed.length + p.released.length + p.rateLimited.length;
  }

  /** Write everything still pending, then prune the tokens the provider no longer knows. */
  async finish(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.writing;
    await this.drain();
    for (const { recipient, token, sinceMs } of this.dead) {
      try {
        if (!(await stillDeadAfterRegistration(this.deps.store, token, sinceMs))) continue;
        if (await this.deps.store.removeToken(recipient, token)) {
          this.deps.metrics.tokensPruned.inc({ reason: 'invalid' });
          this.log.info({ token: redact(token) }, 'pruned a token the provider no longer knows');
        }
      } catch (err) {
        this.log.warn({ token: redact(token), err: (err as Error).message }, 'could not prune a token; carrying on');
      }
    }
  }
}

/**
 * Bell `targets` (watchers of `event`'s author, mentioned users already removed) for one page.
 * Store failures of the batched read or the claim propagate (nothing was sent then); everything
 * after is an outcome.
 */
export async function deliverBellPage(
  deps: BellRecipientDeps,
  event: NostrEvent,
  video: BellVideo,
  targets: readonly string[],
  copy: BellCopy,
  signal: AbortSignal,
): Promise<BellPageResult> {
  const result: BellPageResult = { cancelled: false, failed: false, providerDelaySecs: 0 };
  if (targets.length === 0) return result;
  const count = (outcome: BellOutcome, n = 1) => deps.metrics.contentRecipients.inc({ type: 'newPost', outcome }, n);
  const log = deps.logger.child({ eventId: event.id });
  const bookkeeper = new BellBookkeeper(deps, video, log);

  // The inbox counters (issue 13): every known watcher counts a new post once, pushed or not.
  if (deps.countInbox !== false)
    await countRouted(
      deps,
      event,
      targets.map((pubkey) => ({ pubkey, type: 'newPost' as const })),
    );
  const states = await deps.store.readBellWatchers(video, targets);
  const eligible: BellWatcherState[] = [];
  for (const state of states) {
    const stopped = gate(deps, state);
    if (stopped === null) eligible.push(state);
    else count(stopped);
    if (stopped === 'rate_limited') bookkeeper.rateLimited(state.watcher);
  }
  // Every push carries the watcher's badge as it is now, read for the page at once (before the
  // claims, so a failed read leaves no claim behind).
  const badgeList =
    eligible.length === 0 || deps.countInbox === false ? [] : await deps.store.readInboxBadges(eligible.map((s) => s.watcher));
  const badges = new Map(eligible.map((s, i) => [s.watcher, badgeList[i] ?? 0]));
  const claims =
    eligible.length === 0
      ? []
      : await deps.store.claimRecipientDeliveries(
          event.id,
          eligible.map((s) => s.watcher),
          deps.inFlightClaimSecs,
        );
  const claimed: Array<{ state: BellWatcherState; claim: RecipientClaim }> = [];
  claims.forEach((claim, i) => {
    const state = eligible[i];
    if (!state) return;
    if (claim) claimed.push({ state, claim });
    else count('claimed');
  });

  await forEachLimited(claimed, deps.concurrency, async ({ state, claim }) => {
    if (signal.aborted) {
      result.cancelled = true;
      bookkeeper.released(claim);
      return;
    }
    try {
      const text = await copy();
      const built = buildSocialPayload({
        type: 'newPost',
        event,
        recipient: state.watcher,
        senderName: text.senderName,
        copy: { title: text.title, body: text.body },
      });
      const badge = badges.get(state.watcher);
      const message = badge === undefined ? built : withBadge(built, badge);
      const outcomes = await sendToDevices(deps.transports, state.devices, message);
      const { delivered, dead, deadSinceMs, retryAfterSecs } = classifyOutcomes(outcomes, log);
      for (const token of dead) bookkeeper.deadToken(state.watcher, token, deadSinceMs.get(token));
      if (delivered.length > 0) {
        bookkeeper.delivered(claim, delivered);
        count('delivered');
      } else if (retryAfterSecs !== null) {
        bookkeeper.released(claim);
        result.failed = true;
        result.providerDelaySecs = Math.max(result.providerDelaySecs, retryAfterSecs);
        count('retryable');
      } else {
        bookkeeper.failed(claim);
        count('failed');
      }
    } catch (err) {
      bookkeeper.released(claim);
      result.failed = true;
      log.warn({ recipient: state.watcher, err: (err as Error).message }, 'bell delivery failed');
    }
  });
  await bookkeeper.finish();
  return result;
}
