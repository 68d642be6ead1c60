/**
 * The shared VAPID key on Redis (port-vapid.ts): one STRING, `webpush:vapid`, set if absent by
 * `claimVapidKeys-1` (so processes starting at once agree), never expiring.
 */
import type { StoredVapidKeys } from '../port-vapid.ts';
import { isRecord, parseJson, type RedisContext } from './context.ts';

export async function claimVapidKeys(ctx: RedisContext, candidate: StoredVapidKeys): Promise<StoredVapidKeys> {
  const candidateJson = JSON.stringify({ publicKey: candidate.publicKey, privateKey: candidate.privateKey });
  const stored = await ctx.scripts.run('claimVapidKeys', [ctx.keys.vapidKeysKey], [candidateJson]);
  const parsed = typeof stored === 'string' ? parseJson(stored) : undefined;
  if (!isRecord(parsed) || typeof parsed.publicKey !== 'string' || typeof parsed.privateKey !== 'string') {
    // Written by hand or by something else: nothing can sign with it, and replacing it silently
    // would break every subscription made with it. The operator decides.
    throw new Error(`the VAPID key pair stored at ${ctx.keys.vapidKeysKey} is not {"publicKey","privateKey"} JSON; fix or delete it`);
  }
  return { publicKey: parsed.publicKey, privateKey: parsed.privateKey };
}
