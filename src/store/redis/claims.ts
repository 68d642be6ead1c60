/**
 * Event and per-recipient claims, as divine-push-service takes them: `SET NX EX` on
 * `dedup:{eventId}` ("1") and `dedup:{eventId}:{recipient}` (an owner uuid). Expiry is Redis's
 * own key expiry; release is a compare-and-delete script so a stale attempt never frees a
 * successor's claim.
 */
import { randomUUID } from 'node:crypto';
import type { RecipientClaim } from '../port.ts';
import { expirySeconds, type RedisContext } from './context.ts';
import type { VideoRecord } from '../port.ts';

/** The value divine stores in a per-event claim. */
const EVENT_CLAIM_VALUE = '1';

export async function claimEvent(ctx: RedisContext, eventId: string, ttlSecs: number): Promise<boolean> {
  const reply = await ctx.redis.set(ctx.keys.eventClaimKey(eventId), EVENT_CLAIM_VALUE, 'EX', expirySeconds('claimEvent', ttlSecs), 'NX');
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
