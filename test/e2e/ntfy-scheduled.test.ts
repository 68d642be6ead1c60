/**
 * Scheduled ntfy delivery end to end, on each store: the real binary (roles api, pusher, janitor)
 * on a test clock file. A delayed message is not seen by a live subscriber before its time, is
 * listed with `scheduled=1`, and is seen once after it; one still pending when its process is
 * killed (SIGKILL) is delivered once after a restart; with two pusher processes over one store it
 * is delivered once, and each process's subscriber sees it once.
 *
 * "Not before its time" is shown without waiting a window: each pusher exports the store-clock
 * time of its last completed pass (`push_ntfy_scheduled_pass_clock_ms`); once that is at or past a
 * time before the due time, the pusher has looked and found nothing due.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { eventually, ntfyServiceEnv, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { TestClockFile } from '../support/test-clock.ts';
import { openStream, poll, publish, type HttpStream } from '../ntfy/client.ts';

const SECOND_MS = 1000;
const WAIT_MS = 30_000;

type Json = Record<string, unknown>;

/** The store-clock time of the service's last completed scheduled-delivery pass. */
async function passClock(service: ServiceProcess): Promise<number> {
  const text = await (await fetch(`${service.baseUrl}/metrics`)).text();
  const match = /^push_ntfy_scheduled_pass_clock_ms (\d+(?:\.\d+)?(?:e\+\d+)?)$/m.exec(text);
  return match?.[1] ? Number(match[1]) : 0;
}

/** Resolves once each service has looked for due messages at or after the clock's time. */
async function lookedAtNow(clock: TestClockFile, services: readonly ServiceProcess[]): Promise<void> {
  for (const service of services)
    await eventually(
      async () => ((await passClock(service)) >= clock.nowMs() ? true : undefined),
      WAIT_MS,
      'a scheduled pass at the current time',
    );
}

async function messagesOf(baseUrl: string, topic: string, query = ''): Promise<Json[]> {
  return (await poll(`${baseUrl}/${topic}/json?poll=1${query}`)).messages;
}

/** The `message` frames a stream received so far (without waiting). */
function received(stream: HttpStream): Json[] {
  return stream.frames.buffered.map((f) => JSON.parse(f) as Json).filter((f) => f.event === 'message');
}

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`ntfy scheduled delivery end to end (${adapter})`, () => {
    let redis: PrivateRedisServer | undefined;
    let dataDir: string;
    let clock: TestClockFile;
    let env: Record<string, string>;
    const services: ServiceProcess[] = [];

    const start = async (extra: Record<string, string> = {}): Promise<ServiceProcess> => {
      const service = await startServiceProcess({ env: { ...env, ...extra } });
      services.push(service);
      return service;
    };

    before(async () => {
      dataDir = mkdtempSync(join(tmpdir(), `np-ntfy-scheduled-${adapter}-`));
      if (adapter === 'redis') redis = await startRedisServer();
      clock = new TestClockFile(Math.floor(Date.now() / SECOND_MS) * SECOND_MS);
      const base = ntfyServiceEnv({ dataDir, port: 0, redisUrl: redis?.url });
      delete base.NOSTR_PUSH__SERVER__LISTEN_ADDR; // each process its own free port
      env = { ...base, ...clock.env(), NOSTR_PUSH__NTFY__SAFETY_REDRAIN_SECS: '1' };
    });

    after(async () => {
      for (const service of services) await service.kill();
      await redis?.stop();
      clock.remove();
      rmSync(dataDir, { recursive: true, force: true });
    });

    test('not seen by a live subscriber before its time, listed with scheduled=1, seen once after it', async () => {
      const service = await start();
      const topic = 'reminder_live';
      const stream = await openStream(`${service.baseUrl}/${topic}/json`);
      await stream.nextJson('open');
      const answer = await publish(service.baseUrl, `/${topic}`, "It's a minute later now", { headers: { In: '1m' } });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.time, clock.nowSecs() + 60, "the answer's time is the delivery time");
      assert.deepEqual(await messagesOf(service.baseUrl, topic, '&scheduled=1'), [answer.body]);

      await clock.advance(59 * SECOND_MS, [service]);
      await lookedAtNow(clock, [service]);
      const marker = await publish(service.baseUrl, `/${topic}`, 'marker');
      assert.deepEqual(await stream.nextMessage('the marker'), marker.body, 'the marker comes first: nothing was delivered early');
      assert.deepEqual(await messagesOf(service.baseUrl, topic), [marker.body]);

      await clock.advance(SECOND_MS, [service]);
      const delivered = await stream.nextMessage('the scheduled message');
      assert.equal(delivered.message, "It's a minute later now");
      assert.equal(delivered.sequence_id, answer.body.id);
      assert.equal(delivered.time, clock.nowSecs());
      await lookedAtNow(clock, [service]);
      assert.equal(received(stream).length, 0, 'once');
      stream.close();
      assert.deepEqual(await messagesOf(service.baseUrl, topic), [marker.body, delivered]);
      assert.deepEqual(await messagesOf(service.baseUrl, topic, '&scheduled=1'), [marker.body, delivered], 'nothing pending');
      await service.stop();
    });

    test('pending when its process is killed (SIGKILL): delivered once after the restart', async () => {
      const first = await start();
      const topic = 'reminder_crash';
      const answer = await publish(first.baseUrl, `/${topic}`, 'survives a crash', { headers: { Delay: '2m' } });
      assert.equal(answer.status, 200);
      await first.kill();
      const second = await start();
      assert.deepEqual(await messagesOf(second.baseUrl, topic, '&scheduled=1'), [answer.body], 'still pending after the crash');
      await clock.advance(2 * 60 * SECOND_MS, [second]);
      const [delivered] = await eventually(
        async () => {
          const messages = await messagesOf(second.baseUrl, topic);
          return messages.length > 0 ? messages : undefined;
        },
        WAIT_MS,
        'the delivery',
      );
      assert.deepEqual([delivered?.message, delivered?.sequence_id], ['survives a crash', answer.body.id]);
      await clock.advance(SECOND_MS, [second]);
      await lookedAtNow(clock, [second]);
      assert.equal((await messagesOf(second.baseUrl, topic)).length, 1, 'once');
      await second.stop();
    });

    test('two pusher processes over one store: delivered once, each subscriber sees it once', async () => {
      const a = await start();
      const b = await start({ NOSTR_PUSH__ROLES: 'pusher' });
      const topic = 'reminder_fleet';
      const [onA, onB] = await Promise.all([openStream(`${a.baseUrl}/${topic}/json`), openStream(`${b.baseUrl}/${topic}/json`)]);
      await Promise.all([onA.nextJson('open on A'), onB.nextJson('open on B')]);
      const answers = [];
      for (let i = 0; i < 5; i++) {
        const answer = await publish(a.baseUrl, `/${topic}`, `fleet ${i}`, { headers: { In: '30s' } });
        assert.equal(answer.status, 200);
        answers.push(answer.body);
      }
      await clock.advance(30 * SECOND_MS, [a, b]);
      const expected = answers.map((answer) => answer.id);
      for (const stream of [onA, onB]) {
        const got: unknown[] = [];
        for (let i = 0; i < answers.length; i++) got.push((await stream.nextMessage('a delivery')).sequence_id);
        assert.deepEqual(new Set(got), new Set(expected));
      }
      await clock.advance(SECOND_MS, [a, b]);
      await lookedAtNow(clock, [a, b]);
      assert.equal(received(onA).length + received(onB).length, 0, 'no second delivery');
      onA.close();
      onB.close();
      const stored = await messagesOf(a.baseUrl, topic);
      assert.equal(stored.length, answers.length, 'each stored once');
      assert.deepEqual(new Set(stored.map((m) => m.sequence_id)), new Set(expected));
    });
  });
}
