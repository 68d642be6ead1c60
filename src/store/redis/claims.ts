/**
 * Event and per-recipient claims, as divine-push-service takes them: `SET NX EX` on
 * `dedup:{eventId}` ("1") and `dedup:{eventId}:{recipient}` (an owner uuid). Expiry is Redis's
 * own key expiry; release and extension are compare-and-delete / compare-and-expire scripts
 * (`releaseClaim-1`, `extendClaim-1`) so a stale attempt never frees or extends a successor's
 * claim.
 *
 * Cluster layout: a recipient claim is `dedup:{eventId}:{u:RECIPIENT}`, in the recipient's slot
 * with the rest of the recipient's data; an event claim `dedup:{eventId}` is a key of its own.
 * Every operation here touches one key, so each is one-slot; the batch of
 * {@link claimRecipientDeliveries} is one `SET NX EX` per recipient, issued together (ioredis
 * pipelines them, per node on a cluster). Claiming and queueing a delivery together is
 * `claimAndEnqueue` in `deliveries.ts`.
 */
import { randomUUID } from 'node:crypto';
import type { RecipientClaim } from '../port.ts';
import { expirySeconds, type RedisContext } from './context.ts';
import type { VideoRecord } from '../port.ts';

/** The value divine stores in a per-event claim. */
const EVENT_CLAIM_VALUE = '1';

/**
 * What an owned event claim holds: "1:" and the owner. The "1" keeps it an event claim to the
 * layout migration (`migrate/placement.ts`), which tells event claims from recipient claims
 * (a uuid or a work owner, never with a colon) by their value.
 */
export function ownedEventClaimValue(owner: string): string {
  return `${EVENT_CLAIM_VALUE}:${owner}`;
}

export async function claimEvent(ctx: RedisContext, eventId: string, ttlSecs: number, owner?: string): Promise<boolean> {
  const ttl = expirySeconds('claimEvent', ttlSecs);
  if (owner !== undefined)
    return (await ctx.scripts.run('takeClaim', [ctx.keys.eventClaimKey(eventId)], [ownedEventClaimValue(owner), ttl])) === 1;
  const reply = await ctx.redis.set(ctx.keys.eventClaimKey(eventId), EVENT_CLAIM_VALUE, 'EX', ttl, 'NX');
  return reply === 'OK';
}

export async function claimRecipientDelivery(
  ctx: RedisContext,
  eventId: string,
  recipient: string,
  ttlSecs: number,
): Promise<RecipientClaim | null> {
  const owner = randomUUID();
  const ttl = expirySeconds('claimRecipientDelivery', ttlSecs);
  const reply = await ctx.redis.set(ctx.keys.recipientClaimKey(eventId, recipient), owner, 'EX', ttl, 'NX');
  return reply === 'OK' ? { eventId, recipient, owner } : null;
}

export async function isRecipientClaimed(ctx: RedisContext, eventId: string, recipient: string): Promise<boolean> {
  return (await ctx.redis.exists(ctx.keys.recipientClaimKey(eventId, recipient))) === 1;
}

/** `SET dedup:{eventId}:{recipient} owner EX ttl NX` for many recipients, each as {@link claimRecipientDelivery} alone; one answer per recipient, in order. */
export async function claimRecipientDeliveries(
  ctx: RedisContext,
  eventId: string,
  recipients: readonly string[],
  ttlSecs: number,
): Promise<Array<RecipientClaim | null>> {
  const ttl = expirySeconds('claimRecipientDeliveries', ttlSecs);
  return Promise.all(
    recipients.map(async (recipient) => {
      const owner = randomUUID();
      const reply = await ctx.redis.set(ctx.keys.recipientClaimKey(eventId, recipient), owner, 'EX', ttl, 'NX');
      return reply === 'OK' ? { eventId, recipient, owner } : null;
    }),
  );
}

export async function releaseRecipientDelivery(ctx: RedisContext, claim: RecipientClaim): Promise<boolean> {
  const deleted = await ctx.scripts.run('releaseClaim', [ctx.keys.recipientClaimKey(claim.eventId, claim.recipient)], [claim.owner]);
  return deleted === 1;
}

export async function releaseEvent(ctx: RedisContext, eventId: string): Promise<void> {
  await ctx.redis.del(ctx.keys.eventClaimKey(eventId));
}

/** The value divine stores in a video coordinate record. */
const VIDEO_RECORD_VALUE = '1';

export async function hasVideoRecord(ctx: RedisContext, record: VideoRecord): Promise<boolean> {
  const found = await ctx.redis.exists(
    ctx.keys.videoRecordKey(record.type, record.owner, record.dTag, record.recipient),
    ctx.keys.legacyVideoRecordKey(record.owner, record.dTag, record.recipient),
  );
  return found > 0;
}

export async function writeVideoRecords(
  ctx: RedisContext,
  video: Omit<VideoRecord, 'type'>,
  types: string[],
  ttlSecs: number,
): Promise<void> {
  if (types.length === 0) return;
  const ttl = expirySeconds('writeVideoRecords', ttlSecs);
  const multi = ctx.redis.multi();
  for (const type of types)
    multi.set(ctx.keys.videoRecordKey(type, video.owner, video.dTag, video.recipient), VIDEO_RECORD_VALUE, 'EX', ttl);
  await multi.exec();
}
