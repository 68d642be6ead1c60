/**
 * End to end for campaigns and suppressions (issue 15 items 1 and 5): the real binary (roles
 * without a listener), keys made with the real CLI, the FCM fake speaking HTTP/2, the binary's
 * store clock moved by the test (NOSTR_PUSH_TEST_CLOCK_FILE), on each store adapter:
 * - a campaign reaches consenting users with a registered offset only, and a suppressed user
 *   gets nothing;
 * - a device at 23:00 local is pushed at 07:00 local and not before;
 * - the same idempotency key twice sends once;
 * - SIGKILL mid-campaign of CAMPAIGN_CRASH_DEVICES devices (default the 20,000, 8–13 s a
 *   store; fewer for a quick local run) and a restart: every consenting device gets a push, at
 *   most two for those the killed delivery stage had in flight.
 *
 * The in-flight window is configured to 2 s (`campaign_delivery.claim_ttl_secs`): Redis expires
 * claims by its own clock, and a claim killed mid-send must lapse within the test.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StorePort } from '../../src/store/port.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { generateSecretKey } from '../../src/nostr/keys.ts';
import { DELIVERY_WINDOW } from '../../src/roles/roles.ts';
import { startRedisServer } from '../support/redis-server.ts';
import { startFcmFake, type FcmFake } from '../support/fcm-fake.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { TestClockFile } from '../support/test-clock.ts';

const BIN = fileURLToPath(new URL('../../bin/nostr-push.js', import.meta.url));
const CRASH_DEVICES = Number(process.env.CAMPAIGN_CRASH_DEVICES ?? 20_000);
const SLOW_FCM_MS = 40;
/** Longer than the 2 s claim window, far shorter than the 60 s leases. */
const CLOCK_STEP_MS = 3000;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** 12:00Z: daytime at offset 0, 23:00 at +660. */
const START_MS = Date.UTC(2026, 5, 1, 12);

const ALICE = 'a1'.repeat(32); // consents, offset 0
const BOB = 'b2'.repeat(32); // never consented
const CAROL = 'c3'.repeat(32); // consents, registered no offset
const DAVE = 'd4'.repeat(32); // consents, +660: 23:00 local at the start
const ERIN = 'e5'.repeat(32); // consents, suppressed by support staff

function cli(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

interface CampaignCounts {
  state: string;
  consenting: number;
  deferred: number;
  sent: number;
  failed: number;
  opened: number;
}

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`campaigns end to end (${adapter})`, () => {
    let fcm: FcmFake;
    let dataDir: string;
    let reader: StorePort;
    let service: ServiceProcess;
    let env: Record<string, string>;
    let serviceEnv: Record<string, string>;
    const clock = new TestClockFile(START_MS);
    const cleanup: Array<() => Promise<unknown>> = [];
    const keys = { send: '', admin: '' };

    const createKey = async (role: 'send' | 'admin') => {
      const out = await cli(['apps', 'keys', 'create', 'default', '--role', role], env);
      assert.equal(out.status, 0, out.stderr);
      return new RegExp(`^key:\\s+(\\S+)$`, 'm').exec(out.stdout)?.[1] ?? '';
    };
    const request = (method: string, path: string, key: string, body?: unknown) =>
      fetch(`${service.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const createCampaign = async (idempotencyKey: string, extra: Record<string, unknown> = {}) => {
      const res = await request('POST', '/v1/campaigns', keys.send, {
        idempotencyKey,
        title: 'Spring sale',
        body: '21% off',
        audience: 'all',
        ...extra,
      });
      assert.equal(res.status, 202, await res.clone().text());
      return (await res.json()) as { id: string; duplicate: boolean };
    };
    const readCampaign = async (id: string) => {
      const res = await request('GET', `/v1/campaigns/${id}`, keys.send);
      assert.equal(res.status, 200);
      return (await res.json()) as CampaignCounts;
    };
    const pushesOf = (id: string) => fcm.messages.filter((m) => m.body.message.data.campaignId === id);
    const tokensOf = (id: string) => pushesOf(id).map((m) => m.token);
    const outboundSettled = async () => {
      const stats = await reader.queueStats('outbound');
      return stats.ready + stats.leased === 0;
    };
    const start = async () => {
      service = await startServiceProcess({ env: serviceEnv });
    };

    before(async () => {
      fcm = await startFcmFake();
      cleanup.push(() => fcm.stop());
      dataDir = mkdtempSync(join(tmpdir(), `np-campaign-${adapter}-`));
      cleanup.push(async () => rmSync(dataDir, { recursive: true, force: true }));
      let storeUrl = `sqlite:${join(dataDir, 'nostr-push.sqlite')}`;
      if (adapter === 'redis') {
        const redis = await startRedisServer();
        cleanup.push(() => redis.stop());
        storeUrl = redis.url;
      }
      env = {
        NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: generateSecretKey(),
        NOSTR_PUSH__STORE__URL: storeUrl,
        NOSTR_PUSH__DATA_DIR: dataDir,
        NOSTR_PUSH__LOG__LEVEL: 'info',
      };
      serviceEnv = {
        ...env,
        NOSTR_PUSH__ROLES: 'api,engine,delivery,scheduler,janitor',
        NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
        // A claim killed mid-send is retried each time the test moves the clock, until Redis lapses it.
        NOSTR_PUSH__QUEUE__MAX_ATTEMPTS: '200',
        NOSTR_PUSH__SEND_API__POLL_MILLIS: '20',
        NOSTR_PUSH__CAMPAIGN_DELIVERY__POLL_MILLIS: '20',
        NOSTR_PUSH__CAMPAIGN_DELIVERY__CLAIM_TTL_SECS: '2',
        NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: fcm.writeCredentials(dataDir),
        NOSTR_PUSH__FIREBASE__PROJECT_ID: 'fake-project',
        NOSTR_PUSH__FIREBASE__API_BASE_URL: fcm.baseUrl,
        ...clock.env(),
      };
      await start();
      cleanup.push(() => service.stop());
      reader =
        adapter === 'redis' ? await openRedisStore({ url: storeUrl }) : await openSqliteStore({ path: join(dataDir, 'nostr-push.sqlite') });
      cleanup.push(() => reader.close());
      const users: Array<[string, boolean, number | undefined]> = [
        [ALICE, true, 0],
        [BOB, false, 0],
        [CAROL, true, undefined],
        [DAVE, true, 660],
        [ERIN, true, 0],
      ];
      for (const [pubkey, consent, offset] of users) {
        await reader.setPreferences(pubkey, { kinds: [7], campaignsEnabled: consent });
        await reader.registerToken(pubkey, {
          token: `${pubkey.slice(0, 4)}-phone`,
          transport: 'fcm',
          ...(offset === undefined ? {} : { timezoneOffsetMinutes: offset }),
        });
      }
      keys.send = await createKey('send');
      keys.admin = await createKey('admin');
    });

    after(async () => {
      for (const stop of cleanup.reverse()) await stop();
      clock.remove();
    });

    let first = '';

    test('a campaign reaches consenting users with an offset only; a suppressed user gets nothing; 23:00 local is deferred', async () => {
      const suppressed = await request('POST', '/v1/admin/suppressions', keys.admin, { pubkey: ERIN });
      assert.equal(suppressed.status, 201, await suppressed.clone().text());
      assert.equal((await request('POST', '/v1/admin/suppressions', keys.send, { pubkey: ERIN })).status, 403, 'admin keys only');
      const listed = (await (await request('GET', '/v1/admin/suppressions', keys.admin)).json()) as {
        suppressions: Array<{ value: string }>;
      };
      assert.deepEqual(
        listed.suppressions.map((s) => s.value),
        [ERIN],
      );

      const campaign = await createCampaign('spring-sale');
      first = campaign.id;
      assert.equal(campaign.duplicate, false);
      await eventually(() => (tokensOf(first).length > 0 ? true : undefined), 20_000, 'the push to alice');
      const counts = await eventually(
        async () => {
          // The queue first: counts are written before an item is acknowledged, so read after it.
          if (!(await outboundSettledExceptDeferred())) return undefined;
          const c = await readCampaign(first);
          return c.state === 'done' ? c : undefined;
        },
        20_000,
        'the campaign expanded and every due push settled',
      );
      assert.deepEqual(tokensOf(first), ['a1a1-phone']);
      assert.equal(counts.consenting, 3, 'alice, dave, erin');
      assert.equal(counts.deferred, 1, 'dave');
      assert.equal(counts.sent, 1);
      // The delivery log is written a turn after the attempt, off the delivery's path.
      const log = await eventually(
        async () => {
          const res = await request('GET', `/v1/admin/deliveries?recipient=${ERIN}`, keys.admin);
          const body = (await res.json()) as { entries: Array<{ status: string; error?: string }> };
          return body.entries.length > 0 ? body.entries : undefined;
        },
        20_000,
        "erin's delivery log entry",
      );
      assert.deepEqual(
        log.map((e) => [e.status, e.error]),
        [['suppressed', 'suppression']],
      );
      const opened = await request('POST', `/v1/campaigns/${first}/opened`, keys.send, { recipient: ALICE });
      assert.deepEqual(await opened.json(), { recorded: true });
      assert.deepEqual(await (await request('POST', `/v1/campaigns/${first}/opened`, keys.send, { recipient: ALICE })).json(), {
        recorded: false,
      });
      assert.equal((await readCampaign(first)).opened, 1);
    });

    /** The outbound queue holds only dave's deferred push. */
    async function outboundSettledExceptDeferred(): Promise<boolean> {
      const stats = await reader.queueStats('outbound');
      return stats.leased === 0 && stats.ready === 1;
    }

    test('a device at 23:00 local is pushed at 07:00 local and not before', async () => {
      // 06:59 local at +660: a later campaign's push to alice going out proves the delivery stage looked after the move.
      await clock.advance(8 * HOUR - MINUTE, [service]);
      const probe = await createCampaign('probe-0659');
      await eventually(() => (tokensOf(probe.id).length > 0 ? true : undefined), 20_000, 'the probe push');
      assert.deepEqual(tokensOf(first), ['a1a1-phone'], 'dave not yet');
      await clock.advance(MINUTE, [service]);
      await eventually(() => (tokensOf(first).includes('d4d4-phone') ? true : undefined), 20_000, 'the push to dave at 07:00 local');
      const dave = pushesOf(first).find((m) => m.token === 'd4d4-phone');
      assert.equal(dave?.body.message.data.type, 'campaign');
      assert.equal(dave.body.message.data.receiverPubkey, DAVE);
      await eventually(async () => ((await readCampaign(first)).sent === 2 ? true : undefined), 20_000, 'sent counted');
    });

    test('the same idempotency key twice sends once; with another request it is 409', async () => {
      const again = await createCampaign('spring-sale');
      assert.deepEqual(again, { id: first, duplicate: true });
      const conflict = await request('POST', '/v1/campaigns', keys.send, {
        idempotencyKey: 'spring-sale',
        title: 'Other',
        body: 'x',
        audience: 'all',
      });
      assert.equal(conflict.status, 409);
      const later = await createCampaign('later');
      await eventually(() => (tokensOf(later.id).length > 0 ? true : undefined), 20_000, 'a later campaign pushed');
      await eventually(outboundSettled, 20_000, 'nothing left to send');
      assert.deepEqual(tokensOf(first).sort(), ['a1a1-phone', 'd4d4-phone']);
    });

    test(`SIGKILL mid-campaign of ${CRASH_DEVICES} devices: after a restart every consenting device has one push, at most two for those in flight`, async (t) => {
      // 20:00Z now: offsets −720…−300 are 08:00–15:00 local, daytime for hours to come.
      const offsets = [-720, -600, -480, -420, -360, -300];
      const devices = Array.from({ length: CRASH_DEVICES }, (_, i) => ({
        pubkey: `${i.toString(16).padStart(8, '0')}${'f'.repeat(56)}`,
        token: `crash-${i}`,
        offset: offsets[i % offsets.length] as number,
      }));
      await service.stop();
      for (let i = 0; i < devices.length; i += 500) {
        await Promise.all(
          devices.slice(i, i + 500).map(async (d) => {
            await reader.setPreferences(d.pubkey, { kinds: [7], campaignsEnabled: true });
            await reader.registerToken(d.pubkey, { token: d.token, transport: 'fcm', timezoneOffsetMinutes: d.offset });
          }),
        );
      }
      await start();
      fcm.setLatency(SLOW_FCM_MS);
      const baseline = fcm.messages.length;
      const crash = await createCampaign('crash');
      await fcm.waitForMessages(baseline + CRASH_DEVICES / 5, 90_000);
      await service.kill();
      const beforeCrash = new Set(tokensOf(crash.id)).size;
      assert.ok(beforeCrash < CRASH_DEVICES, `killed mid-campaign (${beforeCrash} pushed)`);

      fcm.setLatency(0);
      await start();
      // The killed process's leases (queue items, the campaign page: 60 s) run out by the store
      // clock, its claims by the configured 2 s window. Move time on in steps longer than a claim
      // and far shorter than a lease (a step never expires a live lease of the running process)
      // until the campaign is done and nothing waits.
      await eventually(
        async () => {
          if ((await readCampaign(crash.id)).state === 'done' && (await outboundSettled())) return true;
          await clock.advance(CLOCK_STEP_MS, [service]);
          return undefined;
        },
        120_000,
        'the campaign finished after the restart',
      );
      const counts = new Map<string, number>();
      for (const token of tokensOf(crash.id)) counts.set(token, (counts.get(token) ?? 0) + 1);
      const missing = devices.filter((d) => !counts.has(d.token));
      assert.deepEqual(
        missing.map((d) => d.token),
        [],
        'no consenting device lost',
      );
      const twice = [...counts.values()].filter((n) => n === 2).length;
      assert.ok(
        [...counts.values()].every((n) => n <= 2),
        'nobody pushed more than twice',
      );
      assert.ok(twice <= DELIVERY_WINDOW, `only devices the killed delivery stage held went out twice (${twice})`);
      for (const user of [BOB, CAROL, ERIN])
        assert.ok(!tokensOf(crash.id).includes(`${user.slice(0, 4)}-phone`), `${user.slice(0, 4)} got nothing`);
      const final = await readCampaign(crash.id);
      // Counters are written after the push: the killed process's in-flight ones may be counted twice or not at all.
      assert.ok(Math.abs(final.sent - (CRASH_DEVICES + 2)) <= DELIVERY_WINDOW, `sent ${final.sent}`);
      t.diagnostic(`killed after ${beforeCrash} pushes; ${twice} devices pushed twice`);
    });
  });
}
