import type { Database, Statement } from 'better-sqlite3';
import { tokenActivitySliceStartMs, type Clock, type DeviceRegistration, type RegisterTokenResult, type Transport } from '../port.ts';

/** Device tokens, their owners and activity times: one row of `devices` per token. */

const SELECT_OWNER = `SELECT pubkey FROM devices WHERE token = ?`;

/** A re-registration replaces the whole device description and takes the token over. */
const UPSERT_DEVICE = `
  INSERT INTO devices (token, pubkey, transport, endpoint, p256dh, auth, timezone_offset_minutes, apns_sandbox, encrypt_to, locale, activity_ms)
  VALUES (@token, @pubkey, @transport, @endpoint, @p256dh, @auth, @timezoneOffsetMinutes, @sandbox, @encryptTo, @locale, @nowMs)
  ON CONFLICT (token) DO UPDATE SET
    pubkey = excluded.pubkey,
    transport = excluded.transport,
    endpoint = excluded.endpoint,
    p256dh = excluded.p256dh,
    auth = excluded.auth,
    timezone_offset_minutes = excluded.timezone_offset_minutes,
    apns_sandbox = excluded.apns_sandbox,
    encrypt_to = excluded.encrypt_to,
    locale = excluded.locale,
    activity_ms = excluded.activity_ms`;

const DELETE_OWNED = `DELETE FROM devices WHERE token = ? AND pubkey = ?`;

const SELECT_DEVICES_OF = `
  SELECT token, transport, endpoint, p256dh, auth, timezone_offset_minutes, apns_sandbox, encrypt_to, locale
  FROM devices WHERE pubkey = ?`;

/** Every device of many pubkeys in one statement (`?` is a JSON array of pubkeys). */
const SELECT_DEVICES_OF_MANY = `
  SELECT pubkey, token, transport, endpoint, p256dh, auth, timezone_offset_minutes, apns_sandbox, encrypt_to, locale
  FROM devices WHERE pubkey IN (SELECT value FROM json_each(?))`;

const SELECT_ACTIVITY = `SELECT activity_ms FROM devices WHERE token = ?`;

/** Only existing rows, only upwards: a removed token stays removed, a slow clock cannot age a live one. */
const RAISE_ACTIVITY = `UPDATE devices SET activity_ms = @nowMs WHERE token = @token AND activity_ms < @nowMs`;

const DELETE_STALE = `DELETE FROM devices WHERE activity_ms < ?`;

interface DeviceRow {
  token: string;
  transport: Transport;
  endpoint: string | null;
  p256dh: string | null;
  auth: string | null;
  timezone_offset_minutes: number | null;
  apns_sandbox: number | null;
  encrypt_to: string | null;
  locale: string | null;
}

interface DeviceParams {
  token: string;
  pubkey: string;
  transport: Transport;
  endpoint: string | null;
  p256dh: string | null;
  auth: string | null;
  timezoneOffsetMinutes: number | null;
  sandbox: number | null;
  encryptTo: string | null;
  locale: string | null;
  nowMs: number;
}

/** Optional fields that were never given are absent from the result, not `undefined`. */
function toDevice(row: DeviceRow): DeviceRegistration {
  const device: DeviceRegistration = { token: row.token, transport: row.transport };
  if (row.endpoint !== null) device.endpoint = row.endpoint;
  if (row.p256dh !== null) device.p256dh = row.p256dh;
  if (row.auth !== null) device.auth = row.auth;
  if (row.timezone_offset_minutes !== null) device.timezoneOffsetMinutes = row.timezone_offset_minutes;
  if (row.apns_sandbox === 1) device.sandbox = true;
  if (row.encrypt_to !== null) device.encryptTo = row.encrypt_to;
  if (row.locale !== null) device.locale = row.locale;
  return device;
}

export class TokenTable {
  private readonly selectOwner: Statement<[string], { pubkey: string }>;
  private readonly upsertDevice: Statement<[DeviceParams]>;
  private readonly deleteOwned: Statement<[string, string]>;
  private readonly selectDevicesOf: Statement<[string], DeviceRow>;
  private readonly selectDevicesOfMany: Statement<[string], DeviceRow & { pubkey: string }>;
  private readonly selectActivity: Statement<[string], { activity_ms: number }>;
  private readonly raiseActivity: Statement<[{ token: string; nowMs: number }]>;
  private readonly deleteStale: Statement<[number]>;

  readonly register: (pubkey: string, device: DeviceRegistration) => RegisterTokenResult;
  readonly remove: (pubkey: string, token: string) => boolean;
  readonly refresh: (tokens: readonly string[]) => number;
  readonly sweep: (maxAgeMs: number) => number;

  constructor(
    db: Database,
    private readonly clock: Clock,
  ) {
    this.selectOwner = db.prepare(SELECT_OWNER);
    this.upsertDevice = db.prepare(UPSERT_DEVICE);
    this.deleteOwned = db.prepare(DELETE_OWNED);
    this.selectDevicesOf = db.prepare(SELECT_DEVICES_OF);
    this.selectDevicesOfMany = db.prepare(SELECT_DEVICES_OF_MANY);
    this.selectActivity = db.prepare(SELECT_ACTIVITY);
    this.raiseActivity = db.prepare(RAISE_ACTIVITY);
    this.deleteStale = db.prepare(DELETE_STALE);

    this.register = db.transaction((pubkey: string, device: DeviceRegistration): RegisterTokenResult => {
      const owner = this.selectOwner.get(device.token)?.pubkey ?? null;
      this.upsertDevice.run({
        token: device.token,
        pubkey,
        transport: device.transport,
        endpoint: device.endpoint ?? null,
        p256dh: device.p256dh ?? null,
        auth: device.auth ?? null,
        timezoneOffsetMinutes: device.timezoneOffsetMinutes ?? null,
        sandbox: device.sandbox === true ? 1 : null,
        encryptTo: device.encryptTo ?? null,
        locale: device.locale ?? null,
        nowMs: this.clock.nowMs(),
      });
      return { previousOwner: owner !== null && owner !== pubkey ? owner : null };
    });

    this.remove = db.transaction((pubkey: string, token: string): boolean => this.deleteOwned.run(token, pubkey).changes > 0);

    this.refresh = db.transaction((tokens: readonly string[]): number => {
      const nowMs = tokenActivitySliceStartMs(this.clock.nowMs());
      let changed = 0;
      for (const token of new Set(tokens)) changed += this.raiseActivity.run({ token, nowMs }).changes;
      return changed;
    });

    this.sweep = db.transaction((maxAgeMs: number): number => this.deleteStale.run(this.clock.nowMs() - maxAgeMs).changes);
  }

  listDevices(pubkey: string): DeviceRegistration[] {
    return this.selectDevicesOf.all(pubkey).map(toDevice);
  }

  /** {@link listDevices} of many pubkeys in one statement; a pubkey without devices is absent. */
  listDevicesOfMany(pubkeys: readonly string[]): Map<string, DeviceRegistration[]> {
    const byPubkey = new Map<string, DeviceRegistration[]>();
    for (const row of this.selectDevicesOfMany.all(JSON.stringify(pubkeys))) {
      const devices = byPubkey.get(row.pubkey);
      if (devices) devices.push(toDevice(row));
      else byPubkey.set(row.pubkey, [toDevice(row)]);
    }
    return byPubkey;
  }

  owner(token: string): string | null {
    return this.selectOwner.get(token)?.pubkey ?? null;
  }

  activityMs(token: string): number | null {
    return this.selectActivity.get(token)?.activity_ms ?? null;
  }
}
