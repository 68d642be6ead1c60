/**
 * A third-party ntfy client, the `ntfy` npm package (ffflorian's publisher), against our server
 * on both stores: it publishes with action buttons (its header simple format), an icon, an
 * attachment URL, a delay and Cache: no, and what it published is read back from a live stream and
 * a poll exactly as ntfy would store it. Its one construct ntfy itself refuses (an http action's
 * body appended without `body=`, an unknown term to ntfy's parser) is refused here the same way.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MessagePriority, NtfyClient, publish as ntfyPublish } from 'ntfy';
import { deliverDueNtfyMessages } from '../../src/ntfy/scheduled.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { openStream, poll } from './client.ts';
import { startNtfyTestServer, type NtfyTestServer } from './harness.ts';

const SECOND_MS = 1000;

let redis: PrivateRedisServer | undefined;
before(async () => {
  redis = await startRedisServer();
});
after(async () => {
  await redis?.stop();
});

type Json = Record<string, unknown>;
const withoutIds = (actions: unknown): Json[] => (actions as Json[]).map(({ id: _id, ...rest }) => rest);

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`the ntfy npm client (${adapter})`, () => {
    let server: NtfyTestServer;
    before(async () => {
      server = await startNtfyTestServer(adapter === 'redis' ? { redisUrl: redis?.url } : {});
    });
    after(() => server.close());

    test('publishes with view, broadcast and http actions; a live subscriber and a poll read them back', async () => {
      const topic = `npm_actions_${adapter}`;
      const stream = await openStream(`${server.baseUrl}/${topic}/json`);
      await stream.nextJson('open');
      const client = new NtfyClient({ server: server.baseUrl });
      const answer = (await client.publish({
        topic,
        message: 'Remote access to device detected. Act right away.',
        title: 'Unauthorized access detected',
        priority: MessagePriority.MAX,
        tags: ['warning', 'skull'],
        clickURL: 'https://github.com/ffflorian/',
        iconURL: 'https://avatars.githubusercontent.com/ffflorian',
        fileURL: { url: 'https://f-droid.org/F-Droid.apk', filename: 'fdroid.apk' },
        actions: [
          {
            type: 'broadcast',
            label: 'Take picture',
            clear: true,
            extras: { cmd: 'pic', camera: 'front' },
            intent: 'io.heckel.ntfy.USER_ACTION',
          },
          {
            type: 'http',
            label: 'Close door',
            url: 'https://api.mygarage.lan',
            method: 'PUT',
            headers: { Authorization: 'Bearer zAzsx1sk..' },
          },
          { type: 'view', label: 'Open portal', url: 'https://api.nest.com/', clear: true },
        ],
      })) as Json;
      assert.deepEqual(withoutIds(answer.actions), [
        {
          action: 'broadcast',
          label: 'Take picture',
          clear: true,
          intent: 'io.heckel.ntfy.USER_ACTION',
          extras: { cmd: 'pic', camera: 'front' },
        },
        {
          action: 'http',
          label: 'Close door',
          clear: false,
          url: 'https://api.mygarage.lan',
          method: 'PUT',
          headers: { Authorization: 'Bearer zAzsx1sk..' },
        },
        { action: 'view', label: 'Open portal', clear: true, url: 'https://api.nest.com/' },
      ]);
      assert.deepEqual(
        [answer.title, answer.priority, answer.tags, answer.click, answer.icon, answer.attachment],
        [
          'Unauthorized access detected',
          5,
          ['warning', 'skull'],
          // The client takes `clickURL` but never sends it (1.13.3, the last release for Node 20, has no X-Click header).
          undefined,
          'https://avatars.githubusercontent.com/ffflorian',
          { name: 'fdroid.apk', url: 'https://f-droid.org/F-Droid.apk' },
        ],
      );
      assert.deepEqual(await stream.nextMessage('the live message'), answer);
      stream.close();
      assert.deepEqual((await poll(`${server.baseUrl}/${topic}/json?poll=1`)).messages, [answer]);
    });

    test("an http action's body the client appends without body= is refused as ntfy refuses it (40018)", async () => {
      const topic = `npm_body_${adapter}`;
      await assert.rejects(
        ntfyPublish({
          server: server.baseUrl,
          topic,
          message: 'Garage door has been open for 15 minutes. Close it?',
          actions: [{ type: 'http', label: 'Close door', url: 'https://api.mygarage.lan', body: '{"action": "close"}' }],
        }),
        /Bad Request/,
      );
      const direct = await fetch(`${server.baseUrl}/${topic}`, {
        method: 'POST',
        body: 'x',
        headers: { 'X-Actions': 'http, Close door, https://api.mygarage.lan, {"action": "close"}' },
      });
      assert.equal(((await direct.json()) as Json).code, 40018);
      assert.deepEqual((await poll(`${server.baseUrl}/${topic}/json?poll=1`)).messages, []);
    });

    test('delay and disableCache: scheduled until due, and live only', async () => {
      const topic = `npm_delay_${adapter}`;
      const delayed = (await ntfyPublish({ server: server.baseUrl, topic, message: 'later', delay: '1m' })) as Json;
      assert.equal(delayed.time, Math.floor(server.clock.nowMs() / SECOND_MS) + 60);
      assert.deepEqual((await poll(`${server.baseUrl}/${topic}/json?poll=1&scheduled=1`)).messages, [delayed]);
      server.clock.advance(60 * SECOND_MS);
      await deliverDueNtfyMessages(server.store, server.metrics);
      const [delivered] = (await poll(`${server.baseUrl}/${topic}/json?poll=1`)).messages;
      assert.deepEqual([delivered?.message, delivered?.sequence_id], ['later', delayed.id]);
      const uncached = (await ntfyPublish({
        server: server.baseUrl,
        topic,
        message: 'not kept',
        disableCache: true,
        disableFirebase: true,
      })) as Json;
      assert.equal(uncached.expires, undefined);
      assert.equal((await poll(`${server.baseUrl}/${topic}/json?poll=1`)).messages.length, 1);
    });
  });
}
