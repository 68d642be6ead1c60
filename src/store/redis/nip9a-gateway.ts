/**
 * The NIP-9a gateway's storage on Redis (port-nip9a-gateway.ts; keys in `keys.ts`). Writes that
 * must check and change several keys at once are the scripts `nip9aPut-4`, `nip9aDelete-4` and
 * `nip9aRecordOutcomes-1`; reads are plain commands.
 */
import type {
  Nip9aDeliveryRef,
  Nip9aDeliveryState,
  Nip9aRegistrationLimits,
  PutNip9aRegistrationResult,
  StoredNip9aRegistration,
} from '../port-nip9a-gateway.ts';
import { StoreError, StoreStatus } from '../errors.ts';
import { isRecord, parseJson, type RedisContext } from './context.ts';
import { nip9aRegistrationField } from './keys.ts';

function registrationKeys(ctx: RedisContext, pubkey: string): string[] {
  return [ctx.keys.nip9aRegistrationsKey, ctx.keys.nip9aAuthorKey(pubkey), ctx.keys.nip9aRelayCountsKey, ctx.keys.nip9aVersionKey];
}

function decode(operation: string, raw: string): StoredNip9aRegistration {
  const value = parseJson(raw);
  if (
    !isRecord(value) ||
    typeof value.pubkey !== 'string' ||
    typeof value.d !== 'string' ||
    typeof value.eventId !== 'string' ||
    typeof value.createdAt !== 'number' ||
    !Array.isArray(value.relays) ||
    typeof value.eventJson !== 'string'
  )
    throw new StoreError(StoreStatus.Corrupt, operation, 'a NIP-9a registration record is not the expected JSON');
  return {
    pubkey: value.pubkey,
    d: value.d,
    eventId: value.eventId,
    createdAt: value.createdAt,
    relays: (value.relays as string[]).slice().sort(),
    eventJson: value.eventJson,
  };
}

export async function putNip9aRegistration(
  ctx: RedisContext,
  registration: StoredNip9aRegistration,
  limits: Nip9aRegistrationLimits,
): Promise<PutNip9aRegistrationResult> {
  const { pubkey, d } = registration;
  const record = JSON.stringify({
    pubkey,
    d,
    eventId: registration.eventId,
    createdAt: registration.createdAt,
    relays: registration.relays,
    eventJson: registration.eventJson,
  });
  const reply = (await ctx.scripts.run('nip9aPut', registrationKeys(ctx, pubkey), [
    nip9aRegistrationField(pubkey, d),
    d,
    registration.eventId,
    registration.createdAt,
    JSON.stringify(registration.relays),
    record,
    limits.perAuthor,
    limits.perAuthorPerRelay,
    limits.maxWatchedRelays,
    pubkey,
  ])) as [string, string?];
  const [outcome, detail = ''] = reply;
  switch (outcome) {
    case 'stored':
      return { outcome };
    case 'replaced':
      return { outcome, previousEventId: detail };
    case 'stale':
      return { outcome, currentEventId: detail };
    case 'author_limit':
      return { outcome };
    case 'author_relay_limit':
    case 'watched_relays_limit':
      return { outcome, relay: detail };
    default:
      throw new StoreError(StoreStatus.Corrupt, 'putNip9aRegistration', `unexpected script reply ${outcome}`);
  }
}

export async function deleteNip9aRegistration(ctx: RedisContext, pubkey: string, d: string, eventId?: string): Promise<boolean> {
  const reply = await ctx.scripts.run('nip9aDelete', registrationKeys(ctx, pubkey), [nip9aRegistrationField(pubkey, d), d, eventId ?? '']);
  return reply === 1;
}

export async function getNip9aRegistration(ctx: RedisContext, pubkey: string, d: string): Promise<StoredNip9aRegistration | null> {
  const raw = await ctx.redis.hget(ctx.keys.nip9aRegistrationsKey, nip9aRegistrationField(pubkey, d));
  return raw === null ? null : decode('getNip9aRegistration', raw);
}

export async function listNip9aRegistrations(ctx: RedisContext, pubkey: string): Promise<StoredNip9aRegistration[]> {
  const ds = await ctx.redis.smembers(ctx.keys.nip9aAuthorKey(pubkey));
  if (ds.length === 0) return [];
  const raws = await ctx.redis.hmget(ctx.keys.nip9aRegistrationsKey, ...ds.map((d) => nip9aRegistrationField(pubkey, d)));
  return raws.filter((raw): raw is string => raw !== null).map((raw) => decode('listNip9aRegistrations', raw));
}

export async function listAllNip9aRegistrations(ctx: RedisContext): Promise<StoredNip9aRegistration[]> {
  const all = await ctx.redis.hvals(ctx.keys.nip9aRegistrationsKey);
  return all.map((raw) => decode('listAllNip9aRegistrations', raw));
}

export async function nip9aRegistrationsVersion(ctx: RedisContext): Promise<number> {
  return Number((await ctx.redis.get(ctx.keys.nip9aVersionKey)) ?? '0');
}

export async function recordNip9aOutcomes(
  ctx: RedisContext,
  keys: readonly string[],
  maxEntries: number,
  maxAgeMs: number,
): Promise<boolean[]> {
  if (keys.length === 0) return [];
  const reply = (await ctx.scripts.run(
    'nip9aRecordOutcomes',
    [ctx.keys.nip9aOutcomesKey],
    [ctx.clock.nowMs(), maxEntries, maxAgeMs, ...keys],
  )) as number[];
  return reply.map((added) => added === 1);
}

/**
 * Two calls side by side (the outcome record and the registrations are different keys, in
 * different slots in the cluster layout): the outcomes' scores, and the versions in force
 * (`nip9aRegistrationVersions-1`: the event ids alone, not the records with their events).
 */
export async function readNip9aDeliveryStates(
  ctx: RedisContext,
  entries: readonly Nip9aDeliveryRef[],
  maxAgeMs: number,
): Promise<Nip9aDeliveryState[]> {
  if (entries.length === 0) return [];
  const after = ctx.clock.nowMs() - maxAgeMs;
  const [scores, versions] = await Promise.all([
    ctx.redis.zmscore(ctx.keys.nip9aOutcomesKey, ...entries.map((entry) => entry.key)),
    ctx.scripts.run(
      'nip9aRegistrationVersions',
      [ctx.keys.nip9aRegistrationsKey],
      entries.map((entry) => nip9aRegistrationField(entry.pubkey, entry.d)),
    ) as Promise<Array<string | null>>,
  ]);
  return entries.map((_, i) => {
    const score = scores[i];
    const version = versions[i];
    return {
      outcomeRecorded: score !== null && score !== undefined && Number(score) > after,
      registrationEventId: typeof version === 'string' ? version : null,
    };
  });
}
