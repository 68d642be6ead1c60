/**
 * Device tokens on Redis, in divine-push-service's layout (`user_tokens:{pubkey}`,
 * `token_to_pubkey`, `token_timezone_offsets`, `stale_tokens` in unix seconds) plus
 * `token_devices` for transports other than plain FCM. See `keys.ts` for every key.
 *
 * Activity times are stored in whole seconds as divine stores them, so `tokenActivityMs` returns
 * a multiple of 1000 and the sweep compares at second granularity.
 */
import { StoreError, StoreStatus } from '../errors.ts';
import { tokenActivitySliceStartMs, type DeviceRegistration, type RegisterTokenResult, type Transport } from '../port.ts';
import { redact } from '../../observability/logger.ts';
import { isRecord, parseJson, type RedisContext } from './context.ts';

/** Compare-and-set rounds before a registration gives up on an owner that keeps changing. */
export const REGISTER_MAX_ROUNDS = 5;
/** Tokens the sweep reads and removes per MULTI. */
export const SWEEP_BATCH_SIZE = 500;

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

export async function registerToken(ctx: RedisContext, pubkey: string, device: DeviceRegistration): Promise<RegisterTokenResult> {
  const offset = device.timezoneOffsetMinutes;
  const offsetArg = offset !== undefined && Number.isInteger(offset) ? String(offset) : '';
  if (offset !== undefined && offsetArg === '') {
    ctx.logger.warn({ token: device.token, offset }, 'timezone offset is not an integer; not stored');
  }
  const record = deviceRecord(device);
  let expectedOwner = '';
  for (let round = 0; round < REGISTER_MAX_ROUNDS; round++) {
    const reply = (await ctx.scripts.run(
      'registerToken',
      [
        ctx.keys.tokenToPubkeyKey,
        ctx.keys.userTokensKey(pubkey),
        ctx.keys.staleTokensKey,
        ctx.keys.tokenTimezoneOffsetsKey,
        ctx.keys.tokenDevicesKey,
        ctx.keys.userTokensKey(expectedOwner === '' ? pubkey : expectedOwner),
      ],
      [device.token, pubkey, nowSeconds(ctx), expectedOwner, offsetArg, record],
    )) as [number, string | null];
    const [applied, owner] = reply;
    if (applied === 1) {
      if (owner) ctx.logger.info({ token: device.token, from: owner, to: pubkey }, 'token re-registered to another pubkey');
      return { previousOwner: owner ?? null };
    }
    expectedOwner = owner ?? '';
  }
  throw new StoreError(StoreStatus.NotOwner, 'registerToken', `owner of ${redact(device.token)} kept changing`);
}

export async function removeToken(ctx: RedisContext, pubkey: string, token: string): Promise<boolean> {
  const removed = await ctx.scripts.run(
    'removeToken',
    [
      ctx.keys.tokenToPubkeyKey,
      ctx.keys.userTokensKey(pubkey),
      ctx.keys.staleTokensKey,
      ctx.keys.tokenTimezoneOffsetsKey,
      ctx.keys.tokenDevicesKey,
    ],
    [token, pubkey],
  );
  return removed === 1;
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

export async function listDevices(ctx: RedisContext, pubkey: string): Promise<DeviceRegistration[]> {
  const flat = (await ctx.scripts.run(
    'listDevices',
    [ctx.keys.userTokensKey(pubkey), ctx.keys.tokenTimezoneOffsetsKey, ctx.keys.tokenDevicesKey],
    [],
  )) as (string | null)[];
  return devicesFromListReply(ctx, flat);
}

/** The devices in a `listDevices-3.lua` reply (flat `token, offset, record` triples), unreadable ones skipped. */
export function devicesFromListReply(ctx: RedisContext, flat: readonly (string | null)[]): DeviceRegistration[] {
  const devices: DeviceRegistration[] = [];
  for (let i = 0; i + 2 < flat.length; i += 3) {
    const token = flat[i];
    if (typeof token !== 'string') continue;
    const device = readDevice(ctx, token, flat[i + 1] ?? null, flat[i + 2] ?? null);
    if (device) devices.push(device);
  }
  return devices;
}

export async function tokenOwner(ctx: RedisContext, token: string): Promise<string | null> {
  return ctx.redis.hget(ctx.keys.tokenToPubkeyKey, token);
}

/** The `stale_tokens` score a delivery writes now (whole seconds). */
export function activitySliceStartSecs(ctx: RedisContext): number {
  return tokenActivitySliceStartMs(ctx.clock.nowMs()) / 1000;
}

/**
 * One `ZADD stale_tokens XX GT CH` at the start of the current activity slice: never re-creates a
 * removed token, never lowers a score, and leaves a token already refreshed in this slice alone.
 */
export async function refreshTokenActivity(ctx: RedisContext, tokens: string[]): Promise<number> {
  if (tokens.length === 0) return 0;
  const now = activitySliceStartSecs(ctx);
  const pairs = tokens.flatMap((token) => [now, token]);
  const changed = await ctx.redis.call('ZADD', ctx.keys.staleTokensKey, 'XX', 'GT', 'CH', ...pairs);
  return Number(changed);
}

export async function tokenActivityMs(ctx: RedisContext, token: string): Promise<number | null> {
  const score = await ctx.redis.zscore(ctx.keys.staleTokensKey, token);
  return score === null ? null : Number(score) * 1000;
}

/**
 * Divine's sweep (ZRANGEBYSCORE, HMGET owners, one MULTI removing everything), made safe against
 * concurrent registrations: each removal is a script that re-checks staleness and owner inside
 * the MULTI. Runs in batches of {@link SWEEP_BATCH_SIZE} until nothing stale is left.
 */
export async function sweepStaleTokens(ctx: RedisContext, maxAgeMs: number): Promise<number> {
  if (!Number.isFinite(maxAgeMs) || maxAgeMs < 0) throw new RangeError(`sweepStaleTokens: maxAgeMs must be >= 0, got ${maxAgeMs}`);
  // Stale means activity < now − maxAge; scores are whole seconds, the cutoff may be fractional.
  const cutoffSecs = (ctx.clock.nowMs() - maxAgeMs) / 1000;
  let removed = 0;
  for (;;) {
    const tokens = await ctx.redis.zrangebyscore(ctx.keys.staleTokensKey, '-inf', `(${cutoffSecs}`, 'LIMIT', 0, SWEEP_BATCH_SIZE);
    if (tokens.length === 0) break;
    const owners = await ctx.redis.hmget(ctx.keys.tokenToPubkeyKey, ...tokens);
    await ctx.scripts.load('sweepStaleToken');
    const multi = ctx.redis.multi();
    let ownerless = 0;
    tokens.forEach((token, i) => {
      const owner = owners[i] ?? '';
      if (owner === '') ownerless++;
      ctx.scripts.addTo(
        multi,
        'sweepStaleToken',
        [
          ctx.keys.staleTokensKey,
          ctx.keys.tokenToPubkeyKey,
          ctx.keys.tokenTimezoneOffsetsKey,
          ctx.keys.tokenDevicesKey,
          ctx.keys.userTokensKey(owner),
        ],
        [token, owner, cutoffSecs],
      );
    });
    const results = (await multi.exec()) ?? [];
    let batchRemoved = 0;
    for (const [error, value] of results) {
      if (error) throw error;
      if (value === 1) batchRemoved++;
    }
    if (ownerless > 0) ctx.logger.warn({ ownerless }, 'stale tokens without an owner mapping removed');
    removed += batchRemoved;
    if (tokens.length < SWEEP_BATCH_SIZE || batchRemoved === 0) break;
  }
  return removed;
}
