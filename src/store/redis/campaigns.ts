/**
 * Campaigns, campaign delivery claims and suppressions on Redis (port-campaigns.ts,
 * port-suppressions.ts); the layout is in `keys.ts`.
 *
 * A campaign's record (`campaign:{app}:{id}`), its idempotency record and its member of
 * `campaigns:due` live in three slots: every operation is one-slot steps, the same on a single
 * Redis, in the order of sends.ts (whose header gives the reasoning). The record decides the
 * state; a running campaign always has a due member (possibly at a lease deadline), and a member
 * of a done or removed campaign is dropped by the next claim that meets it.
 *
 * - create: (1) the idempotency key (`claimIdempotencyKey-1`), (2) the record
 *   (`createCampaign-1`), (3) `ZADD NX` its due member. A retry with the same key and request
 *   after a crash completes (2) and (3) for the id the key holds; records never expire, so a
 *   missing one was never written.
 * - claim: (1) lease the due member (`leaseDue-1`), (2) read the running record
 *   (`claimCampaign-1`); a crash between leaves it due at the lease deadline.
 * - advance: (1) cursor, counts and state (`advanceCampaign-1`), (2) the member due now or
 *   removed; a crash between delays the next page to the lease deadline, or leaves a member
 *   the next claim drops.
 *
 * Consent is read per user (`{u:PUBKEY}` slots), one GET each, issued together.
 */
import { StoreError, StoreStatus } from '../errors.ts';
import type {
  CampaignCounter,
  CampaignCounts,
  CampaignRecord,
  CampaignRequest,
  CampaignState,
  ClaimedCampaign,
  CreateCampaignResult,
  DeviceOwnerPage,
  NewCampaign,
} from '../port-campaigns.ts';
import { suppressionId, type Suppression, type SuppressionTarget } from '../port-suppressions.ts';
import { randomUUID } from 'node:crypto';
import { expirySeconds, isRecord, parseJson, type RedisContext } from './context.ts';
import { consentGiven } from './misc.ts';

/** Claims that lose a race with another worker before one is handed out or the schedule is empty. */
const CLAIM_RACE_RETRIES = 5;
const dueMember = (appId: string, id: string): string => `${appId}:${id}`;

function recordFrom(appId: string, id: string, fields: Record<string, string>): CampaignRecord {
  const request = parseJson(fields.request ?? '');
  if (!isRecord(request)) throw new StoreError(StoreStatus.Corrupt, 'getCampaign', `request of campaign ${appId}/${id}`);
  const count = (name: keyof CampaignCounts) => Number(fields[name] ?? 0);
  return {
    appId,
    id,
    request: request as unknown as CampaignRequest,
    requestHash: fields.hash ?? '',
    state: (fields.state === 'done' ? 'done' : 'running') satisfies CampaignState,
    createdAtMs: Number(fields.createdAtMs),
    cursor: fields.cursor ?? '',
    counts: {
      consenting: count('consenting'),
      deferred: count('deferred'),
      sent: count('sent'),
      failed: count('failed'),
      opened: count('opened'),
    },
  };
}

function pairs(flat: readonly string[]): Record<string, string> {
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i] as string] = flat[i + 1] as string;
  return fields;
}

/** Steps (2) and (3) of a create: the record, then its due member. False when the record existed. */
async function writeCampaign(ctx: RedisContext, campaign: NewCampaign): Promise<boolean> {
  const { appId, id, request, requestHash } = campaign;
  const nowMs = ctx.clock.nowMs();
  const created = await ctx.scripts.run('createCampaign', [ctx.keys.campaignKey(appId, id)], [JSON.stringify(request), requestHash, nowMs]);
  // NX: a member already there (a completed first attempt) keeps its due time or lease.
  await ctx.redis.zadd(ctx.keys.campaignsDueKey, 'NX', nowMs, dueMember(appId, id));
  return Number(created) === 1;
}

export async function createCampaign(ctx: RedisContext, campaign: NewCampaign): Promise<CreateCampaignResult> {
  const { appId, id, request, requestHash } = campaign;
  const idemKey = ctx.keys.campaignIdempotencyKey(appId, request.idempotencyKey);
  const reply = (await ctx.scripts.run('claimIdempotencyKey', [idemKey], [JSON.stringify({ id, hash: requestHash }), 0])) as [
    number,
    string?,
  ];
  if (reply[0] === 1) {
    // The key is this id's: a record already there can only be a retry's completion of it.
    await writeCampaign(ctx, campaign);
    return { created: true };
  }
  const held = parseJson(reply[1] ?? '');
  if (!isRecord(held) || typeof held.id !== 'string' || typeof held.hash !== 'string') {
    throw new StoreError(StoreStatus.Corrupt, 'createCampaign', `${idemKey} is not {"id","hash"} JSON`);
  }
  const sameRequest = held.hash === requestHash;
  if (sameRequest) await completeHeldCampaign(ctx, { ...campaign, id: held.id });
  return { created: false, existingId: held.id, sameRequest };
}

/** Complete a campaign whose key is held (its first attempt may have died after step 1 or 2). */
async function completeHeldCampaign(ctx: RedisContext, campaign: NewCampaign): Promise<void> {
  const state = await ctx.redis.hget(ctx.keys.campaignKey(campaign.appId, campaign.id), 'state');
  if (state === null) await writeCampaign(ctx, campaign);
  else if (state === 'running') {
    await ctx.redis.zadd(ctx.keys.campaignsDueKey, 'NX', ctx.clock.nowMs(), dueMember(campaign.appId, campaign.id));
  }
}

export async function getCampaign(ctx: RedisContext, appId: string, id: string): Promise<CampaignRecord | null> {
  const fields = await ctx.redis.hgetall(ctx.keys.campaignKey(appId, id));
  return fields.request === undefined ? null : recordFrom(appId, id, fields);
}

export async function claimDueCampaign(ctx: RedisContext, leaseMs: number): Promise<ClaimedCampaign | null> {
  for (let attempt = 0; attempt < CLAIM_RACE_RETRIES; attempt++) {
    const nowMs = ctx.clock.nowMs();
    const [member] = await ctx.redis.zrangebyscore(ctx.keys.campaignsDueKey, '-inf', nowMs, 'LIMIT', 0, 1);
    if (member === undefined) return null;
    const colon = member.indexOf(':');
    const appId = member.slice(0, colon);
    const id = member.slice(colon + 1);
    const leaseExpiresAtMs = nowMs + leaseMs;
    if (Number(await ctx.scripts.run('leaseDue', [ctx.keys.campaignsDueKey], [member, nowMs, leaseExpiresAtMs])) !== 1) continue;
    const reply = (await ctx.scripts.run('claimCampaign', [ctx.keys.campaignKey(appId, id)], [])) as string[] | null;
    if (!reply) {
      // Done or gone: never due again.
      await ctx.redis.zrem(ctx.keys.campaignsDueKey, member);
      continue;
    }
    return { campaign: recordFrom(appId, id, pairs(reply)), leaseExpiresAtMs };
  }
  return null;
}

export async function advanceCampaign(
  ctx: RedisContext,
  appId: string,
  id: string,
  nextCursor: string | null,
  add: Partial<CampaignCounts>,
): Promise<boolean> {
  const done = nextCursor === null;
  const reply = await ctx.scripts.run(
    'advanceCampaign',
    [ctx.keys.campaignKey(appId, id)],
    [nextCursor ?? '', done ? '1' : '0', add.consenting ?? 0, add.deferred ?? 0],
  );
  if (Number(reply) !== 1) return false;
  if (done) await ctx.redis.zrem(ctx.keys.campaignsDueKey, dueMember(appId, id));
  else await ctx.redis.zadd(ctx.keys.campaignsDueKey, ctx.clock.nowMs(), dueMember(appId, id));
  return true;
}

export async function countCampaign(ctx: RedisContext, appId: string, id: string, counter: CampaignCounter, n: number): Promise<void> {
  if (n === 0) return;
  await ctx.scripts.run('countCampaign', [ctx.keys.campaignKey(appId, id)], [counter, n]);
}

/**
 * The device walk over the token-record shards in order. The cursor is the HSCAN cursor of shard
 * 0 alone (divine's one shard: the cursor as before), `{shard}:{hscan cursor}` past it.
 */
export async function scanDeviceOwners(ctx: RedisContext, cursor: string, count: number): Promise<DeviceOwnerPage> {
  const colon = cursor.indexOf(':');
  let shard = colon < 0 ? 0 : Number(cursor.slice(0, colon));
  let scanCursor = (colon < 0 ? cursor : cursor.slice(colon + 1)) || '0';
  if (!Number.isSafeInteger(shard) || shard < 0) throw new RangeError(`scanDeviceOwners: not a device cursor: ${cursor}`);
  const entries = [];
  // Move on to the next shards until the page is full or the walk ends (a small shard is one HSCAN).
  while (shard < ctx.keys.tokenShards) {
    const [next, flat] = await ctx.redis.hscan(ctx.keys.tokenShardKeys(shard).owners, scanCursor, 'COUNT', count);
    for (let i = 0; i + 1 < flat.length; i += 2) entries.push({ token: flat[i] as string, pubkey: flat[i + 1] as string });
    if (next !== '0') return { entries, next: shard === 0 ? next : `${shard}:${next}` };
    shard += 1;
    scanCursor = '0';
    if (entries.length >= count) break;
  }
  return { entries, next: shard < ctx.keys.tokenShards ? `${shard}:0` : null };
}

export async function readCampaignConsent(ctx: RedisContext, pubkeys: readonly string[]): Promise<boolean[]> {
  if (pubkeys.length === 0) return [];
  // One GET per user, issued together: the users' keys are in their own slots.
  const values = await Promise.all(pubkeys.map((pubkey) => ctx.redis.get(ctx.keys.campaignConsentKey(pubkey))));
  return values.map(consentGiven);
}

export async function claimCampaignDelivery(ctx: RedisContext, key: string, ttlSecs: number): Promise<string | null> {
  const owner = randomUUID();
  const reply = await ctx.redis.set(ctx.keys.campaignDeliveryKey(key), owner, 'EX', expirySeconds('claimCampaignDelivery', ttlSecs), 'NX');
  return reply === 'OK' ? owner : null;
}

/**
 * Many claims in one round trip: one `SET NX EX` per key, all issued in the same turn, so the
 * client's auto-pipelining sends them together (one pipeline per node on a cluster, where the
 * keys hash to different slots and an explicit pipeline would be refused), in order: a key
 * repeated in the batch is refused after its first.
 */
export async function claimCampaignDeliveries(ctx: RedisContext, keys: readonly string[], ttlSecs: number): Promise<Array<string | null>> {
  if (keys.length === 0) return [];
  const ttl = expirySeconds('claimCampaignDeliveries', ttlSecs);
  const owners = keys.map(() => randomUUID());
  const replies = await Promise.all(
    keys.map((key, i) => ctx.redis.set(ctx.keys.campaignDeliveryKey(key), owners[i] as string, 'EX', ttl, 'NX')),
  );
  return replies.map((reply, i) => (reply === 'OK' ? (owners[i] as string) : null));
}

export async function extendCampaignDelivery(ctx: RedisContext, key: string, owner: string, ttlSecs: number): Promise<boolean> {
  const ttl = expirySeconds('extendCampaignDelivery', ttlSecs);
  return Number(await ctx.scripts.run('extendClaim', [ctx.keys.campaignDeliveryKey(key)], [owner, ttl])) === 1;
}

export async function releaseCampaignDelivery(ctx: RedisContext, key: string, owner: string): Promise<boolean> {
  return Number(await ctx.scripts.run('releaseClaim', [ctx.keys.campaignDeliveryKey(key)], [owner])) === 1;
}

export async function campaignDeliveryTtlSecs(ctx: RedisContext, key: string): Promise<number | null> {
  const ms = await ctx.redis.pttl(ctx.keys.campaignDeliveryKey(key));
  return ms < 0 ? null : Math.ceil(ms / 1000);
}

// ---- suppressions ----------------------------------------------------------------------------

function suppressionFrom(appId: string, id: string, raw: string): Suppression | null {
  const value = parseJson(raw);
  if (!isRecord(value) || (value.kind !== 'pubkey' && value.kind !== 'token') || typeof value.value !== 'string') return null;
  return { appId, id, kind: value.kind, value: value.value, createdAtMs: Number(value.createdAtMs) };
}

export async function addSuppression(
  ctx: RedisContext,
  appId: string,
  target: SuppressionTarget,
): Promise<{ suppression: Suppression; created: boolean }> {
  const id = suppressionId(target);
  const createdAtMs = ctx.clock.nowMs();
  const record = JSON.stringify({ kind: target.kind, value: target.value, createdAtMs });
  const created = (await ctx.redis.hsetnx(ctx.keys.suppressionsKey(appId), id, record)) === 1;
  if (created) return { suppression: { appId, id, ...target, createdAtMs }, created };
  const existing = suppressionFrom(appId, id, (await ctx.redis.hget(ctx.keys.suppressionsKey(appId), id)) ?? '');
  return { suppression: existing ?? { appId, id, ...target, createdAtMs }, created };
}

export async function removeSuppression(ctx: RedisContext, appId: string, id: string): Promise<boolean> {
  return (await ctx.redis.hdel(ctx.keys.suppressionsKey(appId), id)) === 1;
}

export async function listSuppressions(ctx: RedisContext, appId: string, limit: number): Promise<Suppression[]> {
  // Suppressions are a support tool's short list, not a mailing list: one HGETALL reads them.
  const all = await ctx.redis.hgetall(ctx.keys.suppressionsKey(appId));
  return Object.entries(all)
    .map(([id, raw]) => suppressionFrom(appId, id, raw))
    .filter((s): s is Suppression => s !== null)
    .sort((a, b) => a.createdAtMs - b.createdAtMs || (a.id < b.id ? -1 : 1))
    .slice(0, limit);
}

export async function suppressedAmong(ctx: RedisContext, appId: string, targets: readonly SuppressionTarget[]): Promise<boolean[]> {
  if (targets.length === 0) return [];
  const values = await ctx.redis.hmget(ctx.keys.suppressionsKey(appId), ...targets.map(suppressionId));
  return values.map((v) => v !== null);
}
