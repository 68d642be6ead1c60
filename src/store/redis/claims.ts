/**
 * Event and per-recipient claims, as divine-push-service takes them: `SET NX EX` on
 * `dedup:{eventId}` ("1") and `dedup:{eventId}:{recipient}` (an owner uuid). Expiry is Redis's
 * own key expiry; release is a compare-and-delete script so a stale attempt never frees a
 * successor's claim.
 */
import { randomUUID } from 'node:crypto';
import type { RecipientClaim } from '../port.ts';
import { expirySeconds, type RedisContext } from './context.ts';
import { eventClaimKey, recipientClaimKey } from './keys.ts';

/** The value divine stores in a per-event claim. */
const EVENT_CLAIM_VALUE = '1';

export async function claimEvent(ctx: RedisContext, eventId: string, ttlSecs: number): Promise<boolean> {
  const reply = await ctx.redis.set(eventClaimKey(eventId), EVENT_CLAIM_VALUE, 'EX', expirySeconds('claimEvent', ttlSecs), 'NX');
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
  const reply = await ctx.redis.set(recipientClaimKey(eventId, recipient), owner, 'EX', ttl, 'NX');
  return reply === 'OK' ? { eventId, recipient, owner } : null;
}

export async function releaseRecipientDelivery(ctx: RedisContext, claim: RecipientClaim): Promise<boolean> {
  const deleted = await ctx.scripts.run('releaseClaim', [recipientClaimKey(claim.eventId, claim.recipient)], [claim.owner]);
  return deleted === 1;
}
