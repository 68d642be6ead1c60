import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TOKEN_ACTIVITY_RESOLUTION_MS, type DeviceRegistration, type StorePort } from '../../../src/store/port.ts';
import { assertSameSecond, DAY_MS, MINUTE_MS, type ContractContext } from './context.ts';

const ALICE = 'a1'.repeat(32);
const BOB = 'b2'.repeat(32);

const FCM_DEVICE: DeviceRegistration = { token: 'fcm-token-1', transport: 'fcm', timezoneOffsetMinutes: -300 };
const APNS_DEVICE: DeviceRegistration = { token: 'apns-token-1', transport: 'apns' };
const WEBPUSH_DEVICE: DeviceRegistration = {
  token: 'https://push.example.com/wpush/v2/subscription-1',
  transport: 'webpush',
  endpoint: 'https://push.example.com/wpush/v2/subscription-1',
  p256dh: 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM',
  auth: 'tBHItJI5svbpez7KI4CCXg',
  timezoneOffsetMinutes: 600,
};

function apnsDevice(token: string): DeviceRegistration {
  return { token, transport: 'apns' };
}

function byToken(devices: DeviceRegistration[]): DeviceRegistration[] {
  return [...devices].sort((a, b) => (a.token < b.token ? -1 : a.token > b.token ? 1 : 0));
}

async function assertGone(store: StorePort, pubkey: string, token: string): Promise<void> {
  assert.equal(await store.tokenOwner(token), null, 'owner mapping removed');
  assert.equal(await store.tokenActivityMs(token), null, 'activity time removed');
  assert.ok(!(await store.listDevices(pubkey)).some((d) => d.token === token), 'device listing removed');
}

export function tokenContract(ctx: ContractContext): void {
  describe('device tokens', () => {
    test('the APNs sandbox flag and the encryptTo key round-trip, on APNs and FCM devices alike', async () => {
      const store = ctx.store();
      const sandboxed: DeviceRegistration = { token: 'apns-sandbox-1', transport: 'apns', sandbox: true, encryptTo: 'e1'.repeat(32) };
      const encryptedFcm: DeviceRegistration = { token: 'fcm-encrypted-1', transport: 'fcm', encryptTo: 'e2'.repeat(32) };
      await store.registerToken(ALICE, sandboxed);
      await store.registerToken(ALICE, encryptedFcm);
      assert.deepEqual(byToken(await store.listDevices(ALICE)), byToken([sandboxed, encryptedFcm]));
      // A re-registration without them clears them: the registration is the whole description.
      await store.registerToken(ALICE, { token: 'apns-sandbox-1', transport: 'apns' });
      await store.registerToken(ALICE, { token: 'fcm-encrypted-1', transport: 'fcm' });
      assert.deepEqual(
        byToken(await store.listDevices(ALICE)),
        byToken([apnsDevice('apns-sandbox-1'), { token: 'fcm-encrypted-1', transport: 'fcm' }]),
      );
    });

    test('a device locale round-trips on every transport, through listDevices and readRecipients, and a re-registration without it clears it', async () => {
      const store = ctx.store();
      const phone: DeviceRegistration = { token: 'fcm-pt-1', transport: 'fcm', locale: 'pt-BR' };
      const iphone: DeviceRegistration = { token: 'apns-ja-1', transport: 'apns', locale: 'ja', timezoneOffsetMinutes: 540 };
      const browser: DeviceRegistration = { ...WEBPUSH_DEVICE, token: 'https://push.example.com/wpush/v2/locale', locale: 'zh-Hant-TW' };
      for (const device of [phone, iphone, browser]) await store.registerToken(BOB, device);
      assert.deepEqual(byToken(await store.listDevices(BOB)), byToken([phone, iphone, browser]));
      const [state] = await store.readRecipients([BOB]);
      assert.deepEqual(byToken(state?.devices ?? []), byToken([phone, iphone, browser]));
      await store.registerToken(BOB, { token: 'fcm-pt-1', transport: 'fcm' });
      assert.deepEqual(
        (await store.listDevices(BOB)).find((d) => d.token === 'fcm-pt-1'),
        { token: 'fcm-pt-1', transport: 'fcm' },
      );
    });

    test('registerToken then listDevices round-trips every field, absent optional fields stay absent', async () => {
      const store = ctx.store();
      for (const device of [FCM_DEVICE, APNS_DEVICE, WEBPUSH_DEVICE]) {
        assert.deepEqual(await store.registerToken(ALICE, device), { previousOwner: null });
      }
      assert.deepEqual(byToken(await store.listDevices(ALICE)), byToken([FCM_DEVICE, APNS_DEVICE, WEBPUSH_DEVICE]));
      assert.equal(await store.tokenOwner(WEBPUSH_DEVICE.token), ALICE);
      assert.deepEqual(await store.listDevices(BOB), []);
    });

    test('unknown tokens and pubkeys have no owner, no activity and no devices', async () => {
      const store = ctx.store();
      assert.equal(await store.tokenOwner('never-registered'), null);
      assert.equal(await store.tokenActivityMs('never-registered'), null);
      assert.deepEqual(await store.listDevices(ALICE), []);
    });

    test('registration sets the activity time to now, and a re-registration moves it again', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      await store.registerToken(ALICE, FCM_DEVICE);
      assertSameSecond(await store.tokenActivityMs(FCM_DEVICE.token), clock.nowMs());
      clock.advance(10 * DAY_MS);
      await store.registerToken(ALICE, FCM_DEVICE);
      assertSameSecond(await store.tokenActivityMs(FCM_DEVICE.token), clock.nowMs());
    });

    test('re-registering a token by its owner replaces its fields and keeps one device', async () => {
      const store = ctx.store();
      await store.registerToken(ALICE, WEBPUSH_DEVICE);
      const updated: DeviceRegistration = {
        token: WEBPUSH_DEVICE.token,
        transport: 'unifiedpush',
        endpoint: 'https://ntfy.example.org/upAbc123?up=1',
        p256dh: 'BOther-key',
        auth: 'other-auth',
        timezoneOffsetMinutes: -480,
      };
      assert.deepEqual(await store.registerToken(ALICE, updated), { previousOwner: null });
      assert.deepEqual(await store.listDevices(ALICE), [updated]);

      // A registration describes the whole device: a field it omits is cleared, not kept.
      const bare: DeviceRegistration = { token: WEBPUSH_DEVICE.token, transport: 'fcm' };
      await store.registerToken(ALICE, bare);
      assert.deepEqual(await store.listDevices(ALICE), [bare]);
    });

    test("registering another owner's token transfers it", async () => {
      const store = ctx.store();
      await store.registerToken(ALICE, FCM_DEVICE);
      await store.registerToken(ALICE, APNS_DEVICE);
      assert.deepEqual(await store.registerToken(BOB, FCM_DEVICE), { previousOwner: ALICE });

      assert.deepEqual(await store.listDevices(ALICE), [APNS_DEVICE]);
      assert.deepEqual(await store.listDevices(BOB), [FCM_DEVICE]);
      assert.equal(await store.tokenOwner(FCM_DEVICE.token), BOB);

      assert.equal(await store.removeToken(ALICE, FCM_DEVICE.token), false, 'the former owner can no longer remove it');
      assert.equal(await store.tokenOwner(FCM_DEVICE.token), BOB);
      assert.deepEqual(await store.listDevices(BOB), [FCM_DEVICE]);
    });

    test('removeToken by the owner removes device, owner and activity', async () => {
      const store = ctx.store();
      await store.registerToken(ALICE, FCM_DEVICE);
      await store.registerToken(ALICE, APNS_DEVICE);
      assert.equal(await store.removeToken(ALICE, FCM_DEVICE.token), true);
      await assertGone(store, ALICE, FCM_DEVICE.token);
      assert.deepEqual(await store.listDevices(ALICE), [APNS_DEVICE]);
      assert.equal(await store.removeToken(ALICE, FCM_DEVICE.token), false, 'a second removal finds nothing');
    });

    test('removeToken by a non-owner is refused and keeps the token', async () => {
      const store = ctx.store();
      await store.registerToken(ALICE, FCM_DEVICE);
      assert.equal(await store.removeToken(BOB, FCM_DEVICE.token), false);
      assert.equal(await store.tokenOwner(FCM_DEVICE.token), ALICE);
      assert.deepEqual(await store.listDevices(ALICE), [FCM_DEVICE]);
      assert.notEqual(await store.tokenActivityMs(FCM_DEVICE.token), null);
    });

    test('removeToken of an unknown token returns false', async () => {
      assert.equal(await ctx.store().removeToken(ALICE, 'never-registered'), false);
    });

    test('refreshTokenActivity moves an old activity time to the start of the current hour', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      await store.registerToken(ALICE, FCM_DEVICE);
      const registeredAt = clock.nowMs();
      clock.advance(80 * DAY_MS);
      assert.equal(await store.refreshTokenActivity([FCM_DEVICE.token]), 1);
      const activity = await store.tokenActivityMs(FCM_DEVICE.token);
      assertSameSecond(activity, Math.floor(clock.nowMs() / TOKEN_ACTIVITY_RESOLUTION_MS) * TOKEN_ACTIVITY_RESOLUTION_MS);
      assert.ok((activity ?? 0) > registeredAt);
    });

    test('refreshTokenActivity counts only tokens it changed; a token refreshed this hour is left alone', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      await store.registerToken(ALICE, FCM_DEVICE);
      await store.registerToken(BOB, APNS_DEVICE);
      clock.advance(TOKEN_ACTIVITY_RESOLUTION_MS);
      assert.equal(await store.refreshTokenActivity([FCM_DEVICE.token, APNS_DEVICE.token, 'never-registered']), 2);
      assert.equal(await store.refreshTokenActivity([FCM_DEVICE.token, APNS_DEVICE.token]), 0, 'already in this slice');
      const refreshed = await store.tokenActivityMs(FCM_DEVICE.token);
      clock.advance(TOKEN_ACTIVITY_RESOLUTION_MS - 2000 - (clock.nowMs() % TOKEN_ACTIVITY_RESOLUTION_MS));
      assert.equal(await store.refreshTokenActivity([FCM_DEVICE.token]), 0, 'later in the same hour: no write');
      assert.equal(await store.tokenActivityMs(FCM_DEVICE.token), refreshed);
      clock.advance(3000);
      assert.equal(await store.refreshTokenActivity([FCM_DEVICE.token]), 1, 'the next hour');
      assert.equal(await store.tokenOwner('never-registered'), null);
    });

    test('a registration right after a refresh keeps its exact time (never lowered to the slice start)', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      clock.advance(TOKEN_ACTIVITY_RESOLUTION_MS / 2);
      await store.registerToken(ALICE, FCM_DEVICE);
      const registeredAt = clock.nowMs();
      assert.equal(await store.refreshTokenActivity([FCM_DEVICE.token]), 0);
      assertSameSecond(await store.tokenActivityMs(FCM_DEVICE.token), registeredAt);
    });

    test('refreshTokenActivity never re-creates a removed token', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      await store.registerToken(ALICE, FCM_DEVICE);
      await store.removeToken(ALICE, FCM_DEVICE.token);
      clock.advance(MINUTE_MS);
      assert.equal(await store.refreshTokenActivity([FCM_DEVICE.token]), 0);
      assert.equal(await store.tokenActivityMs(FCM_DEVICE.token), null);
      await assertGone(store, ALICE, FCM_DEVICE.token);
    });

    test('refreshTokenActivity never lowers an activity time', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      await store.registerToken(ALICE, FCM_DEVICE);
      const registeredAt = clock.nowMs();
      clock.set(registeredAt - MINUTE_MS);
      assert.equal(await store.refreshTokenActivity([FCM_DEVICE.token]), 0);
      assertSameSecond(await store.tokenActivityMs(FCM_DEVICE.token), registeredAt);
    });

    test('refreshTokenActivity of [] returns 0', async () => {
      assert.equal(await ctx.store().refreshTokenActivity([]), 0);
    });

    test('sweepStaleTokens removes only tokens older than the max age, with owner and listing', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      await store.registerToken(ALICE, FCM_DEVICE);
      await store.registerToken(BOB, APNS_DEVICE);
      clock.advance(40 * DAY_MS);
      await store.registerToken(ALICE, WEBPUSH_DEVICE);
      clock.advance(40 * DAY_MS);

      assert.equal(await store.sweepStaleTokens(60 * DAY_MS), 2);
      await assertGone(store, ALICE, FCM_DEVICE.token);
      await assertGone(store, BOB, APNS_DEVICE.token);
      assert.deepEqual(await store.listDevices(ALICE), [WEBPUSH_DEVICE]);
      assert.deepEqual(await store.listDevices(BOB), []);
      assert.equal(await store.tokenOwner(WEBPUSH_DEVICE.token), ALICE);

      assert.equal(await store.sweepStaleTokens(60 * DAY_MS), 0, 'nothing left to sweep');
      assert.equal(await store.removeToken(ALICE, FCM_DEVICE.token), false);
    });

    test('a refreshed token survives the sweep', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      await store.registerToken(ALICE, FCM_DEVICE);
      await store.registerToken(ALICE, APNS_DEVICE);
      clock.advance(80 * DAY_MS);
      await store.refreshTokenActivity([APNS_DEVICE.token]);
      clock.advance(DAY_MS);

      assert.equal(await store.sweepStaleTokens(60 * DAY_MS), 1);
      assert.deepEqual(await store.listDevices(ALICE), [APNS_DEVICE]);
      assert.equal(await store.tokenOwner(APNS_DEVICE.token), ALICE);
    });
  });
}
