/**
 * Device tokens on Redis, in divine-push-service's layout (`user_tokens:{pubkey}`,
 * `token_to_pubkey`, `token_timezone_offsets`, `stale_tokens` in unix seconds) plus
 * `token_devices` for transports other than plain FCM. See `keys.ts` for every key, in both layouts.
 *
 * Activity times are stored in whole seconds as divine stores them, so `tokenActivityMs` returns
 * a multiple of 1000 and the sweep compares at second granularity.
 *
 * ## Two kinds of record, two slots
 *
 * The token record (owner, activity, timezone offset, description) is keyed by the token; in the
 * cluster it lives in the token's shard (`{k:N}`). The user's token set `user_tokens:{pubkey}` is
 * keyed by the user (`{u:PUBKEY}`). No script can write both, so:
 *
 * - the token record is the truth. `tokenOwner`, the sweep, the device scan read only it;
 * - the user's set is an index of candidate tokens. Every reader of a user's devices reads the set
 *   (and the user's removal intents, below), then the candidates' records, and keeps a token only
 *   when its record names that user. A stale member (left by a crash, or by a race between two
 *   registrations of one token) therefore never lists another user's device; the reader takes
 *   it out ("forgetting", below), so the index heals where it is read.
 *
 * The invariant the steps keep (I): once a registration of token T by user U has finished its
 * step 2, and as long as T's record names U, T is in U's set or in U's intent hash.
 *
 * ## Registration (registerToken)
 *
 * 1. `registerTokenRecord-4` writes T's record (owner U) in T's shard; returns the previous owner P.
 * 2. `SADD user_tokens:U T`.
 * 3. when P ≠ U, forget T in P's set (below); concurrently with step 2 (another slot).
 *
 * A crash after step 1 leaves T owned by U but maybe not listed: the registration was not
 * acknowledged, and its retry (steps 1 and 2 again, idempotent: the same record, SADD) completes
 * it. P's stale member is never listed for P (its record names U) and is forgotten by P's next
 * read. Step 2 comes after step 1 on purpose: a forget of T in U's set that runs concurrently
 * either reads T's record after step 1 (sees U, puts T back) or before it — and then its SREM
 * came before step 1 too, so step 2's SADD lands after it. With the order reversed, a forget
 * could read the old owner after step 2 and drop the member step 1 then makes U's.
 *
 * ## Forgetting T in user X's set (forgetTokens)
 *
 * Removing a member blindly could undo a concurrent re-registration of T by X (X's step 2 just
 * before the removal). So a removal is an intent first:
 * a. `forgetUserTokens-2`: SREM T from X's set and HSET `user_tokens_forgetting:X` T → a fresh id,
 *    atomically (one slot);
 * b. read T's record;
 * c. `settleForgottenTokens-2`: SADD T back when the record (read in b, after a) names X; delete
 *    the intent if it still holds this attempt's id.
 * (I) holds through it: T leaves the set only into the intent hash (a); the intent is dropped in
 * c either with T put back, or after a read (b) that saw another owner after T left the set — then
 * any registration of T by X has its step 1 after that read, so its step 2 SADD comes after a.
 * A crash between a and c leaves the intent: readers list intent tokens like members (checked
 * against the record the same way) and settle them, so nothing is hidden. Every step may be
 * retried: SREM/SADD/HDEL are idempotent and c deletes only its own intent.
 *
 * ## Deregistration and the sweep
 *
 * `removeToken`: `removeTokenRecord-4` deletes T's record if the caller owns it, then T is forgotten
 * in the caller's set. The sweep walks the shards: `sweepStaleTokens-4` deletes up to a batch of
 * stale records of one shard (staleness and owner read in the same script) and returns their
 * owners; the tokens are then forgotten in the owners' sets. A crash between the two leaves stale
 * members, which no reader lists and the owners' next reads forget.
 */
import { randomUUID } from 'node:crypto';
import { tokenActivitySliceStartMs, type DeviceRegistration, type RegisterTokenResult, type Transport } from '../port.ts';
import { isRecord, parseJson, type RedisContext } from './context.ts';

/** Stale token records one sweep script removes per call. */
export const SWEEP_BATCH_SIZE = 500;
/** Tokens per `readTokenRecords-3` call: bounds one call's time and Lua's `unpack`. */
const RECORD_READ_CHUNK = 500;

const TRANSPORTS: readonly Transport[] = ['fcm', 'apns', 'webpush', 'unifiedpush'];

/**
 * The `token_devices` JSON; '' for a plain FCM token, which divine's layout already describes. An
 * FCM token with a `locale` gets a record too, so divine's own keys stay exactly as divine wrote them.
 */
function deviceRecord(device: DeviceRegistration): string {
  const { transport, endpoint, p256dh, auth, encryptTo, locale } = device;
  const sandbox = device.sandbox === true ? true : undefined;
  const plainFcm = endpoint === undefined && p256dh === undefined && auth === undefined && encryptTo === undefined && locale === undefined;
  if (transport === 'fcm' && plainFcm) return '';
  return JSON.stringify({ transport, endpoint, p256dh, auth, sandbox, encryptTo, locale });
}

function nowSeconds(ctx: RedisContext): number {
  return Math.floor(ctx.clock.nowMs() / 1000);
}

/** The four keys of a token's shard, in the KEYS order of the token-record scripts. */
function recordKeys(ctx: RedisContext, token: string): string[] {
  const keys = ctx.keys.tokenShardKeys(ctx.keys.tokenShardOf(token));
  return [keys.owners, keys.activity, keys.offsets, keys.devices];
}

/** Distinct tokens grouped by their shard. */
function byShard(ctx: RedisContext, tokens: Iterable<string>): Map<number, string[]> {
  const groups = new Map<number, string[]>();
  for (const token of new Set(tokens)) {
    const shard = ctx.keys.tokenShardOf(token);
    const group = groups.get(shard);
    if (group) group.push(token);
    else groups.set(shard, [token]);
  }
  return groups;
}

/** What a token's record holds, as stored. */
export interface TokenRecord {
  owner: string | null;
  rawOffset: string | null;
  rawDevice: string | null;
}

/** The records of `tokens`, read per shard concurrently (one atomic script per shard chunk). */
export async function readTokenRecords(ctx: RedisContext, tokens: Iterable<string>): Promise<Map<string, TokenRecord>> {
  const calls: Array<Promise<void>> = [];
  const records = new Map<string, TokenRecord>();
  for (const [shard, group] of byShard(ctx, tokens)) {
    const keys = ctx.keys.tokenShardKeys(shard);
    for (let start = 0; start < group.length; start += RECORD_READ_CHUNK) {
      const chunk = group.slice(start, start + RECORD_READ_CHUNK);
      calls.push(
        (async () => {
          const flat = (await ctx.scripts.run('readTokenRecords', [keys.owners, keys.offsets, keys.devices], chunk)) as (string | null)[];
          chunk.forEach((token, i) => {
            records.set(token, { owner: flat[3 * i] ?? null, rawOffset: flat[3 * i + 1] ?? null, rawDevice: flat[3 * i + 2] ?? null });
          });
        })(),
      );
    }
  }
  await Promise.all(calls);
  return records;
}

/** Settle intents of `pubkey`: put back the tokens whose record names them, drop the intents still `id`'s. */
async function settleIntents(ctx: RedisContext, pubkey: string, intents: ReadonlyArray<{ token: string; id: string; keep: boolean }>) {
  if (intents.length === 0) return;
  await ctx.scripts.run(
    'settleForgottenTokens',
    [ctx.keys.userTokensKey(pubkey), ctx.keys.userTokensForgettingKey(pubkey)],
    intents.flatMap(({ token, id, keep }) => [token, id, keep ? 1 : 0]),
  );
}

/** Take `tokens` out of `pubkey`'s set, unless their record names `pubkey` (see "forgetting" above). */
export async function forgetTokens(ctx: RedisContext, pubkey: string, tokens: readonly string[]): Promise<void> {
  if (tokens.length === 0) return;
  const id = randomUUID();
  const moved = (await ctx.scripts.run(
    'forgetUserTokens',
    [ctx.keys.userTokensKey(pubkey), ctx.keys.userTokensForgettingKey(pubkey)],
    [id, ...tokens],
  )) as string[];
  if (moved.length === 0) return;
  const records = await readTokenRecords(ctx, moved);
  await settleIntents(
    ctx,
    pubkey,
    moved.map((token) => ({ token, id, keep: records.get(token)?.owner === pubkey })),
  );
}

export async function registerToken(ctx: RedisContext, pubkey: string, device: DeviceRegistration): Promise<RegisterTokenResult> {
  const offset = device.timezoneOffsetMinutes;
  const offsetArg = offset !== undefined && Number.isInteger(offset) ? String(offset) : '';
  if (offset !== undefined && offsetArg === '') {
    ctx.logger.warn({ token: device.token, offset }, 'timezone offset is not an integer; not stored');
  }
  const previous = (await ctx.scripts.run('registerTokenRecord', recordKeys(ctx, device.token), [
    device.token,
    pubkey,
    nowSeconds(ctx),
    offsetArg,
    deviceRecord(device),
  ])) as string | null;
  await Promise.all([
    ctx.redis.sadd(ctx.keys.userTokensKey(pubkey), device.token),
    previous ? forgetTokens(ctx, previous, [device.token]) : undefined,
  ]);
  if (previous) ctx.logger.info({ token: device.token, from: previous, to: pubkey }, 'token re-registered to another pubkey');
  return { previousOwner: previous ?? null };
}

export async function removeToken(ctx: RedisContext, pubkey: string, token: string): Promise<boolean> {
  const removed = (await ctx.scripts.run('removeTokenRecord', recordKeys(ctx, token), [token, pubkey])) === 1;
  if (removed) await forgetTokens(ctx, pubkey, [token]);
  return removed;
}

function parseOffset(ctx: RedisContext, token: string, raw: string | null): number | undefined {
  if (raw === null) return undefined;
  const minutes = Number(raw);
  if (raw.trim() !== '' && Number.isInteger(minutes)) return minutes;
  ctx.logger.warn({ token, raw }, 'stored timezone offset is not an integer; ignored');
  return undefined;
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** One device from its stored fields; null (logged) when its device record is unreadable. */
function readDevice(ctx: RedisContext, token: string, rawOffset: string | null, rawRecord: string | null): DeviceRegistration | null {
  const device: DeviceRegistration = { token, transport: 'fcm' };
  if (rawRecord !== null) {
    const record = parseJson(rawRecord);
    const transport = isRecord(record) ? record.transport : undefined;
    if (!isRecord(record) || !TRANSPORTS.includes(transport as Transport)) {
      ctx.logger.warn({ token }, 'token_devices entry is not a valid device record; device skipped');
      return null;
    }
    device.transport = transport as Transport;
    const endpoint = optionalString(record.endpoint);
    const p256dh = optionalString(record.p256dh);
    const auth = optionalString(record.auth);
    if (endpoint !== undefined) device.endpoint = endpoint;
    if (p256dh !== undefined) device.p256dh = p256dh;
    if (auth !== undefined) device.auth = auth;
    if (record.sandbox === true) device.sandbox = true;
    const encryptTo = optionalString(record.encryptTo);
    if (encryptTo !== undefined) device.encryptTo = encryptTo;
    const locale = optionalString(record.locale);
    if (locale !== undefined) device.locale = locale;
  }
  const offset = parseOffset(ctx, token, rawOffset);
  if (offset !== undefined) device.timezoneOffsetMinutes = offset;
  return device;
}

/** A user's candidate tokens: the members of their set and their removal intents (token → id). */
export interface Candidates {
  members: string[];
  intents: Record<string, string>;
}

/** A removal-intent hash as a script's HGETALL answers it (`[token, id, token, id, …]`), as an object. */
export function intentsOf(flat: readonly string[]): Record<string, string> {
  const intents: Record<string, string> = {};
  for (let k = 0; k + 1 < flat.length; k += 2) intents[flat[k] as string] = flat[k + 1] as string;
  return intents;
}

async function readCandidates(ctx: RedisContext, pubkey: string): Promise<Candidates> {
  const [members, intents] = await Promise.all([
    ctx.redis.smembers(ctx.keys.userTokensKey(pubkey)),
    ctx.redis.hgetall(ctx.keys.userTokensForgettingKey(pubkey)),
  ]);
  return { members, intents };
}

/**
 * The devices of each pubkey, in order (a pubkey asked twice is answered twice): per user their
 * candidate tokens (concurrently, one slot each), then the candidates' records (one script per
 * shard); a token counts only when its record names the user. Stale members are forgotten and
 * intents settled before this returns (rare: only after a crash or a race between registrations).
 */
export async function readDevicesOfMany(ctx: RedisContext, pubkeys: readonly string[]): Promise<DeviceRegistration[][]> {
  const distinct = [...new Set(pubkeys)];
  const candidates = await Promise.all(distinct.map((pubkey) => readCandidates(ctx, pubkey)));
  const records = await readTokenRecords(
    ctx,
    candidates.flatMap(({ members, intents }) => [...members, ...Object.keys(intents)]),
  );
  const devicesOf = await devicesFromRecords(ctx, distinct, candidates, records);
  return pubkeys.map((pubkey) => devicesOf.get(pubkey) ?? []);
}

/**
 * The second half of {@link readDevicesOfMany}, shared with the divine layout's one-step read
 * (`deliveries.ts`): each distinct user's devices from their candidates (`candidates[i]` is
 * `distinct[i]`'s) and the candidates' records, stale members forgotten and intents settled.
 */
export async function devicesFromRecords(
  ctx: RedisContext,
  distinct: readonly string[],
  candidates: readonly Candidates[],
  records: ReadonlyMap<string, TokenRecord>,
): Promise<Map<string, DeviceRegistration[]>> {
  const devicesOf = new Map<string, DeviceRegistration[]>();
  const repairs: Array<Promise<void>> = [];
  distinct.forEach((pubkey, i) => {
    const { members, intents } = candidates[i] ?? { members: [], intents: {} };
    const owned = new Set<string>();
    const stale: string[] = [];
    for (const token of members) {
      if (records.get(token)?.owner === pubkey) owned.add(token);
      else stale.push(token);
    }
    const settled = Object.entries(intents).map(([token, id]) => ({ token, id, keep: records.get(token)?.owner === pubkey }));
    for (const { token, keep } of settled) if (keep) owned.add(token);
    const devices: DeviceRegistration[] = [];
    for (const token of owned) {
      const record = records.get(token);
      const device = record ? readDevice(ctx, token, record.rawOffset, record.rawDevice) : null;
      if (device) devices.push(device);
    }
    devicesOf.set(pubkey, devices);
    if (stale.length > 0) repairs.push(forgetTokens(ctx, pubkey, stale));
    if (settled.length > 0) repairs.push(settleIntents(ctx, pubkey, settled));
  });
  await Promise.all(repairs);
  return devicesOf;
}

export async function listDevices(ctx: RedisContext, pubkey: string): Promise<DeviceRegistration[]> {
  const [devices] = await readDevicesOfMany(ctx, [pubkey]);
  return devices ?? [];
}

export async function tokenOwner(ctx: RedisContext, token: string): Promise<string | null> {
  return ctx.redis.hget(ctx.keys.tokenShardKeys(ctx.keys.tokenShardOf(token)).owners, token);
}

/** The `stale_tokens` score a delivery writes now (whole seconds). */
export function activitySliceStartSecs(ctx: RedisContext): number {
  return tokenActivitySliceStartMs(ctx.clock.nowMs()) / 1000;
}

/**
 * One `ZADD stale_tokens XX GT CH` per token shard at the start of the current activity slice:
 * never re-creates a removed token, never lowers a score, and leaves a token already refreshed in
 * this slice alone. The shards are written concurrently.
 */
export async function refreshTokenActivity(ctx: RedisContext, tokens: readonly string[]): Promise<number> {
  if (tokens.length === 0) return 0;
  const now = activitySliceStartSecs(ctx);
  const changed = await Promise.all(
    [...byShard(ctx, tokens)].map(([shard, group]) =>
      ctx.redis.call('ZADD', ctx.keys.tokenShardKeys(shard).activity, 'XX', 'GT', 'CH', ...group.flatMap((token) => [now, token])),
    ),
  );
  return changed.reduce<number>((sum, n) => sum + Number(n), 0);
}

export async function tokenActivityMs(ctx: RedisContext, token: string): Promise<number | null> {
  const score = await ctx.redis.zscore(ctx.keys.tokenShardKeys(ctx.keys.tokenShardOf(token)).activity, token);
  return score === null ? null : Number(score) * 1000;
}

/** Sweep one shard in batches; returns the removed tokens grouped by owner ('' for none). */
async function sweepShard(ctx: RedisContext, shard: number, cutoffSecs: number): Promise<Map<string, string[]>> {
  const keys = ctx.keys.tokenShardKeys(shard);
  const byOwner = new Map<string, string[]>();
  for (;;) {
    const flat = (await ctx.scripts.run(
      'sweepStaleTokens',
      [keys.owners, keys.activity, keys.offsets, keys.devices],
      [cutoffSecs, SWEEP_BATCH_SIZE],
    )) as string[];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const owner = flat[i + 1] ?? '';
      const tokens = byOwner.get(owner);
      if (tokens) tokens.push(flat[i] ?? '');
      else byOwner.set(owner, [flat[i] ?? '']);
    }
    if (flat.length < 2 * SWEEP_BATCH_SIZE) return byOwner;
  }
}

/**
 * Divine's sweep (stale by `stale_tokens`, removed with owner mapping, offset and listing), per
 * shard: each shard's records are deleted in batches by one script that reads staleness and owner
 * as it deletes, then the tokens are forgotten in their owners' sets (see the header).
 */
export async function sweepStaleTokens(ctx: RedisContext, maxAgeMs: number): Promise<number> {
  if (!Number.isFinite(maxAgeMs) || maxAgeMs < 0) throw new RangeError(`sweepStaleTokens: maxAgeMs must be >= 0, got ${maxAgeMs}`);
  // Stale means activity < now − maxAge; scores are whole seconds, the cutoff may be fractional.
  const cutoffSecs = (ctx.clock.nowMs() - maxAgeMs) / 1000;
  const shards = Array.from({ length: ctx.keys.tokenShards }, (_, shard) => shard);
  const swept = await Promise.all(shards.map((shard) => sweepShard(ctx, shard, cutoffSecs)));
  const byOwner = new Map<string, string[]>();
  let removed = 0;
  for (const shardOwners of swept) {
    for (const [owner, tokens] of shardOwners) {
      removed += tokens.length;
      byOwner.set(owner, [...(byOwner.get(owner) ?? []), ...tokens]);
    }
  }
  const ownerless = byOwner.get('')?.length ?? 0;
  if (ownerless > 0) ctx.logger.warn({ ownerless }, 'stale tokens without an owner mapping removed');
  byOwner.delete('');
  await Promise.all([...byOwner].map(([owner, tokens]) => forgetTokens(ctx, owner, tokens)));
  return removed;
}
