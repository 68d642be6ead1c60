/**
 * The quiet-hours digest sender (scheduler role, issue 15 item 2): when a user's quiet hours
 * end, the social pushes held during them (`src/delivery/quiet-hours-gate.ts`) go out as one
 * push, "While you were away: 5 likes, 2 comments".
 *
 * A due digest is claimed from the store under a lease, its push queued on the outbound queue's
 * normal lane, then completed with the counts it carried (`completeDigest` subtracts them, so
 * pushes held in between wait for a digest of their own). A worker killed between queueing and
 * completing sends the digest again after the lease: at least once, never lost.
 */
import { npubEncode } from '../nostr/nip19.ts';
import type { Logger } from '../observability/logger.ts';
import type { DueDigest } from '../store/port-quiet-hours.ts';
import type { StorePort } from '../store/port.ts';
import type { OutboundNotification, PushMessage } from '../notification/types.ts';
import { sleep } from '../util/async.ts';

/** Health flag of the digest task. */
export const TASK_QUIET_HOURS_DIGEST = 'quiet_hours_digest';
/** The `data.type` of a digest push. */
export const DIGEST_PUSH_TYPE = 'digest';
/** The digest's title (English; the copy templates may take it over). */
export const DIGEST_TITLE = 'While you were away';

/** Each held type's noun, singular and plural, in the order a digest lists them. */
const NOUNS: ReadonlyArray<[type: string, one: string, many: string]> = [
  ['like', 'like', 'likes'],
  ['comment', 'comment', 'comments'],
  ['mention', 'mention', 'mentions'],
  ['repost', 'repost', 'reposts'],
  ['newPost', 'new post', 'new posts'],
  ['keyword', 'alert word match', 'alert word matches'],
];

/** "While you were away: 5 likes, 2 comments" for the held counts. */
export function digestBody(counts: Readonly<Record<string, number>>): string {
  const parts: string[] = [];
  for (const [type, one, many] of NOUNS) {
    const n = counts[type] ?? 0;
    if (n > 0) parts.push(`${n} ${n === 1 ? one : many}`);
  }
  const known = new Set(NOUNS.map(([type]) => type));
  const other = Object.entries(counts).reduce((sum, [type, n]) => (known.has(type) ? sum : sum + n), 0);
  if (other > 0) parts.push(`${other} other ${other === 1 ? 'notification' : 'notifications'}`);
  return `${DIGEST_TITLE}: ${parts.join(', ')}`;
}

export function digestPushMessage(digest: DueDigest): PushMessage {
  const data: Record<string, string> = {
    type: DIGEST_PUSH_TYPE,
    title: DIGEST_TITLE,
    body: digestBody(digest.counts),
    receiverPubkey: digest.pubkey,
    receiverNpub: npubEncode(digest.pubkey),
  };
  for (const [type, n] of Object.entries(digest.counts)) data[`count_${type}`] = String(n);
  return { data };
}

export interface DigestWorkerDeps {
  store: StorePort;
  leaseMs: number;
  pollMs: number;
  onQueued: () => void;
  logger: Logger;
}

/** Queue one claimed digest and complete it. */
export async function sendDigest(deps: DigestWorkerDeps, digest: DueDigest): Promise<void> {
  if (Object.keys(digest.counts).length > 0) {
    const eventId = `digest:${digest.pubkey}:${digest.leaseExpiresAtMs}`;
    const notification: OutboundNotification = {
      eventId,
      recipient: digest.pubkey,
      type: `app:${DIGEST_PUSH_TYPE}`,
      message: digestPushMessage(digest),
      claim: null,
      eventCreatedAt: Math.floor(deps.store.clock.nowMs() / 1000),
    };
    await deps.store.enqueue('outbound', { id: eventId, payload: notification });
    deps.onQueued();
  }
  await deps.store.completeDigest(digest.pubkey, digest.counts);
}

export async function runDigestWorker(deps: DigestWorkerDeps, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    let digest: DueDigest | null = null;
    try {
      digest = await deps.store.claimDueDigest(deps.leaseMs);
      if (digest) {
        await sendDigest(deps, digest);
        deps.logger.debug({ recipient: digest.pubkey, counts: digest.counts }, 'quiet-hours digest queued');
        continue;
      }
    } catch (err) {
      deps.logger.error({ recipient: digest?.pubkey, err: (err as Error).message }, 'digest failed; it returns after its lease');
    }
    await sleep(deps.pollMs, signal).catch(() => undefined);
  }
}
