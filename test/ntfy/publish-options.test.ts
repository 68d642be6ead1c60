/**
 * ntfy's publishing options beyond UnifiedPush, black-box over HTTP on both stores: the examples of
 * ntfy's publishing documentation (docs.ntfy.sh/publish), each as the request its curl line makes,
 * and the refusals, each with ntfy's code. Every option of the documentation's parameter table is
 * here: honoured as ntfy honours it, or refused with ntfy's error (docs/ntfy.md).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deliverDueNtfyMessages } from '../../src/ntfy/scheduled.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { openStream, poll, publish } from './client.ts';
import { startNtfyTestServer, type NtfyTestServer } from './harness.ts';

const SECOND_MS = 1000;
const HOUR_MS = 3_600_000;
const CACHE_SECS = 12 * 3600;

let redis: PrivateRedisServer | undefined;
before(async () => {
  redis = await startRedisServer();
});
after(async () => {
  await redis?.stop();
});

let counter = 0;
/** A fresh topic per test: tests sharing a server never see each other's messages. */
const fresh = (name: string): string => `${name}_${(counter += 1)}`;

type Json = Record<string, unknown>;
const withoutIds = (actions: unknown): Json[] => (actions as Json[]).map(({ id: _id, ...rest }) => rest);

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`ntfy publishing options (${adapter})`, () => {
    let server: NtfyTestServer;
    before(async () => {
      server = await startNtfyTestServer(adapter === 'redis' ? { redisUrl: redis?.url } : {});
    });
    after(() => server.close());

    const post = (path: string, body = '', headers: Record<string, string> = {}) => publish(server.baseUrl, path, body, { headers });
    const postJson = (body: Json) => publish(server.baseUrl, '/', JSON.stringify(body));
    const polled = async (topic: string, query = '') => (await poll(`${server.baseUrl}/${topic}/json?poll=1${query}`)).messages;
    const refusedWith = async (answer: Promise<{ status: number; body: Json }>, code: number) => {
      const { status, body } = await answer;
      assert.equal(status, Math.floor(code / 100), JSON.stringify(body));
      assert.equal(body.code, code, JSON.stringify(body));
      assert.equal(body.http, status);
      assert.equal(typeof body.error, 'string');
    };

    test('title, priority and tags (the first example), with their aliases', async () => {
      const topic = fresh('phil_alerts');
      const answer = await post(`/${topic}`, 'Remote access to phils-laptop detected. Act right away.', {
        Title: 'Unauthorized access detected',
        Priority: 'urgent',
        Tags: 'warning,skull',
      });
      assert.equal(answer.status, 200);
      assert.deepEqual(
        [answer.body.title, answer.body.priority, answer.body.tags],
        ['Unauthorized access detected', 5, ['warning', 'skull']],
      );
      for (const name of ['X-Title', 't'])
        assert.equal(
          (await post(`/${topic}`, 'Oh my ...', { [name]: 'Dogs are better than cats' })).body.title,
          'Dogs are better than cats',
        );
      assert.equal((await post(`/${topic}`, 'A high priority message', { p: '4' })).body.priority, 4);
      assert.deepEqual((await post(`/${topic}`, 'Dogs are awesome', { ta: 'dog' })).body.tags, ['dog']);
      assert.deepEqual((await polled(topic))[0], answer.body, 'stored as answered');
    });

    test('markdown (Markdown: yes, or Content-Type: text/markdown), click and icon', async () => {
      const topic = fresh('mytopic');
      assert.equal(
        (await post(`/${topic}`, 'Look ma, **bold text**, *italics*, ...', { Markdown: 'yes' })).body.content_type,
        'text/markdown',
      );
      assert.equal((await post(`/${topic}`, '# md', { 'Content-Type': 'text/markdown' })).body.content_type, 'text/markdown');
      const click = await post(`/${topic}`, 'New messages on Reddit', { Click: 'https://www.reddit.com/message/messages' });
      assert.equal(click.body.click, 'https://www.reddit.com/message/messages');
      const icon = 'https://styles.redditmedia.com/t5_32uhe/styles/communityIcon_xnt6chtnr2j21.png';
      const withIcon = await post(`/${topic}`, 'The Wire, S01E01', { Icon: icon, Title: 'Kodi: Resuming Playback', Tags: 'arrow_forward' });
      assert.equal(withIcon.body.icon, icon);
      await refusedWith(post(`/${topic}`, 'x', { Icon: 'ftp://example.com/icon.png' }), 40021);
    });

    test('an attachment by URL: the name from the URL (or Filename), the default text; uploads refused', async () => {
      const topic = fresh('mydownloads');
      const answer = await post(`/${topic}`, '', { Attach: 'https://f-droid.org/F-Droid.apk' });
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.body.attachment, { name: 'F-Droid.apk', url: 'https://f-droid.org/F-Droid.apk' });
      assert.equal(answer.body.message, 'You received a file: F-Droid.apk');
      const named = await post(`/${topic}?a=${encodeURIComponent('https://example.com/')}&f=flower.jpg`, 'A flower');
      assert.deepEqual([named.body.attachment, named.body.message], [{ name: 'flower.jpg', url: 'https://example.com/' }, 'A flower']);
      assert.deepEqual((await post(`/${topic}`, '', { 'X-Attach': 'https://example.com/' })).body.attachment, {
        name: 'attachment',
        url: 'https://example.com/',
      });
      assert.deepEqual((await polled(topic))[0], answer.body);
      await refusedWith(post(`/${topic}`, '', { Attach: 'file:///etc/passwd' }), 40013);
      await refusedWith(post(`/${topic}`, 'binary-ish', { Filename: 'flower.jpg' }), 40014);
      const notUtf8 = Uint8Array.from([0x68, 0xff, 0x69]);
      await refusedWith(publish(server.baseUrl, `/${topic}`, notUtf8, { headers: { Attach: 'https://example.com/a' } }), 40011);
    });

    test('action buttons in the header (short and long forms): stored and delivered with generated ids', async () => {
      const topic = fresh('myhome');
      const stream = await openStream(`${server.baseUrl}/${topic}/json`);
      await stream.nextJson('open');
      const answer = await post(`/${topic}`, 'You left the house. Turn down the A/C?', {
        Actions: `view, Open portal, https://home.nest.com/, clear=true; http, Turn down, https://api.nest.com/, body='{"temperature": 65}'`,
      });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.deepEqual(withoutIds(answer.body.actions), [
        { action: 'view', label: 'Open portal', clear: true, url: 'https://home.nest.com/' },
        { action: 'http', label: 'Turn down', clear: false, url: 'https://api.nest.com/', body: '{"temperature": 65}' },
      ]);
      for (const action of answer.body.actions as Json[]) assert.match(String(action.id), /^[A-Za-z0-9]{10}$/);
      assert.deepEqual(await stream.nextMessage(), answer.body, 'live, with the same ids');
      stream.close();
      assert.deepEqual((await polled(topic))[0], answer.body, 'stored, with the same ids');
      const broadcast = await post(`/${topic}`, 'Your wife requested you send a picture of yourself.', {
        Actions: 'broadcast, Take picture, extras.cmd=pic, extras.camera=front',
      });
      assert.deepEqual(withoutIds(broadcast.body.actions), [
        { action: 'broadcast', label: 'Take picture', clear: false, extras: { cmd: 'pic', camera: 'front' } },
      ]);
      const http = await post(`/${topic}`, 'Garage door has been open for 15 minutes. Close it?', {
        Actions:
          'http, Close door, https://api.mygarage.lan/, method=PUT, headers.Authorization=Bearer zAzsx1sk.., body={"action": "close"}',
      });
      assert.deepEqual(withoutIds(http.body.actions), [
        {
          action: 'http',
          label: 'Close door',
          clear: false,
          url: 'https://api.mygarage.lan/',
          method: 'PUT',
          headers: { Authorization: 'Bearer zAzsx1sk..' },
          body: '{"action": "close"}',
        },
      ]);
      const view = await post(`/${topic}?actions=${encodeURIComponent('action=view, url=https://google.com, label=Open Google')}`, 'q');
      assert.deepEqual(withoutIds(view.body.actions), [{ action: 'view', label: 'Open Google', clear: false, url: 'https://google.com' }]);
      const copy = await post(`/${topic}`, 'Your one-time passcode is 123456', { Actions: 'copy, Copy code, 123456' });
      assert.deepEqual(withoutIds(copy.body.actions), [{ action: 'copy', label: 'Copy code', clear: false, value: '123456' }]);
    });

    test('action buttons as a JSON array, in the header and in a JSON publish to /', async () => {
      const topic = fresh('myhome');
      const actions = [
        { action: 'view', label: 'Open portal', url: 'https://home.nest.com/', clear: true },
        { action: 'http', label: 'Turn down', url: 'https://api.nest.com/', body: '{"temperature": 65}' },
      ];
      const expected = [
        { action: 'view', label: 'Open portal', clear: true, url: 'https://home.nest.com/' },
        { action: 'http', label: 'Turn down', clear: false, url: 'https://api.nest.com/', body: '{"temperature": 65}' },
      ];
      const viaJson = await postJson({ topic, message: 'You left the house. Turn down the A/C?', actions });
      assert.equal(viaJson.status, 200, JSON.stringify(viaJson.body));
      assert.deepEqual(withoutIds(viaJson.body.actions), expected);
      const viaHeader = await post(`/${topic}`, 'again', { 'X-Actions': JSON.stringify(actions) });
      assert.deepEqual(withoutIds(viaHeader.body.actions), expected);
      // PowerShell's ConvertTo-Json capitalises keys; Go's decoder (and so ntfy) matches them in any case.
      const powershell = await postJson({
        Topic: topic,
        Message: 'Your wife requested you send a picture of yourself.',
        Actions: [{ Action: 'broadcast', Label: 'Take picture', Extras: { CMD: 'pic', Camera: 'front' } }],
      });
      assert.deepEqual(withoutIds(powershell.body.actions), [
        { action: 'broadcast', label: 'Take picture', clear: false, extras: { CMD: 'pic', Camera: 'front' } },
      ]);
      const stored = await polled(topic);
      assert.deepEqual(
        stored.map((m) => m.actions),
        [viaJson.body.actions, viaHeader.body.actions, powershell.body.actions],
      );
    });

    test("malformed actions are ntfy's 40018", async () => {
      const topic = fresh('actions');
      for (const bad of [
        'view, A, https://a; view, B, https://b; view, C, https://c; view, D, https://d',
        'dance, Party',
        'view, Open',
        'http, Get, https://x, method=GET, body=nope',
        'view, Open, https://x, clear=maybe',
        '[{"action":"view"',
      ])
        await refusedWith(post(`/${topic}`, 'x', { Actions: bad }), 40018);
      await refusedWith(postJson({ topic, message: 'x', actions: [{ action: 'view', label: 'No URL' }] }), 40018);
      assert.deepEqual(await polled(topic), [], 'nothing stored');
    });

    test('scheduled delivery: the docs examples, time the delivery time, listed with scheduled=1, delivered when due', async () => {
      const topic = fresh('reminder');
      const now = server.clock.nowMs();
      const in30 = await post(`/${topic}`, "It's 30 minutes later now", { In: '30min' });
      assert.equal(in30.status, 200, JSON.stringify(in30.body));
      const deliverAt = Math.floor(now / SECOND_MS) + 30 * 60;
      assert.equal(in30.body.time, deliverAt, 'time is the delivery time');
      assert.equal(in30.body.expires, deliverAt + CACHE_SECS);
      assert.equal(in30.body.sequence_id, undefined);
      assert.equal((await post(`/${topic}`, 'Good morning', { At: 'tomorrow, 10am' })).status, 200);
      const rfc = new Date(now + 2 * HOUR_MS).toISOString().replace(/\.\d+Z$/, 'Z');
      const rfcAnswer = await post(`/${topic}`, 'RFC3339 timestamps are awesome', { Delay: rfc });
      assert.equal(rfcAnswer.body.time, Math.floor(Date.parse(rfc) / SECOND_MS));
      const unix = Math.floor(now / SECOND_MS) + 3600;
      assert.equal((await post(`/${topic}`, 'Unix timestamps are awesome', { Delay: String(unix) })).body.time, unix);
      assert.equal((await post(`/${topic}?delay=2h`, 'query')).body.time, Math.floor(now / SECOND_MS) + 2 * 3600);
      assert.equal((await post(`/${topic}?x-in=1d`, 'query alias')).body.time, Math.floor(now / SECOND_MS) + 86_400);

      assert.deepEqual(await polled(topic), [], 'not delivered yet');
      const listed = await polled(topic, '&scheduled=1');
      assert.equal(listed.length, 6);
      assert.deepEqual(listed[0], in30.body, 'the earliest first, as answered');
      assert.equal((await polled(topic, '&sched=1')).length, 6);

      const stream = await openStream(`${server.baseUrl}/${topic}/json`);
      await stream.nextJson('open');
      server.clock.advance(30 * 60 * SECOND_MS);
      assert.equal((await deliverDueNtfyMessages(server.store, server.metrics)).length, 1);
      const live = await stream.nextMessage('the delivered message');
      stream.close();
      assert.equal(live.message, "It's 30 minutes later now");
      assert.equal(live.sequence_id, in30.body.id, 'shows as the notification the publisher was answered with');
      assert.notEqual(live.id, in30.body.id);
      assert.deepEqual(await polled(topic), [live]);
      assert.equal((await polled(topic, '&scheduled=1')).length, 6, 'one stored, five still pending');
      assert.equal((await deliverDueNtfyMessages(server.store, server.metrics)).length, 0, 'never twice');
    });

    test("scheduled delivery refusals: ntfy's 40002, 40004, 40005, 40006", async () => {
      const topic = fresh('delays');
      await refusedWith(post(`/${topic}`, 'a message', { Cache: 'no', In: '30 min' }), 40002);
      await refusedWith(post(`/${topic}?delay=INVALID`, 'a message'), 40004);
      await refusedWith(post(`/${topic}`, 'a message', { Delay: '1639194738' }), 40004);
      await refusedWith(post(`/${topic}`, 'a message', { In: '1h', Timezone: 'Unknown/Timezone' }), 40004);
      await refusedWith(post(`/${topic}`, 'a message', { In: '1s' }), 40005);
      await refusedWith(post(`/${topic}`, 'a message', { In: '99999999h' }), 40006);
      await refusedWith(post(`/${topic}?x-in=99999h`, 'a message'), 40006);
      assert.deepEqual(await polled(topic, '&scheduled=1'), []);
      const tokyo = await post(`/${topic}`, 'a message', { Delay: 'tomorrow 10am', Timezone: 'Asia/Tokyo' });
      assert.equal(tokyo.status, 200);
      const at = new Date(Number(tokyo.body.time) * SECOND_MS);
      assert.deepEqual([at.getUTCHours(), at.getUTCMinutes()], [1, 0], '10am in Tokyo is 01:00 UTC');
    });

    test('Cache: no reaches a live subscriber, never a poll; its answer has no expires', async () => {
      const topic = fresh('mytopic');
      const stream = await openStream(`${server.baseUrl}/${topic}/json`);
      await stream.nextJson('open');
      const answer = await post(`/${topic}`, 'this message is not cached', { Cache: 'no' });
      assert.equal(answer.status, 200);
      assert.equal(answer.body.expires, undefined);
      assert.deepEqual(await stream.nextMessage(), answer.body);
      stream.close();
      assert.deepEqual(await polled(topic), []);
      const cached = await post(`/${topic}`, 'cached', { 'X-Cache': 'yes' });
      assert.deepEqual(await polled(topic), [cached.body]);
    });

    test('Firebase: no is accepted and changes nothing here; Poll-ID is a live poll_request event', async () => {
      const topic = fresh('mytopic');
      const noFirebase = await post(`/${topic}`, "This message won't be forwarded to FCM", { Firebase: 'no' });
      assert.equal(noFirebase.status, 200);
      assert.deepEqual(await polled(topic), [noFirebase.body]);
      const stream = await openStream(`${server.baseUrl}/${topic}/json`);
      await stream.nextJson('open');
      const pollRequest = await post(`/${topic}`, 'ignored', { 'X-Poll-ID': 'abc123' });
      assert.deepEqual(
        [pollRequest.body.event, pollRequest.body.message, pollRequest.body.poll_id, pollRequest.body.expires],
        ['poll_request', 'New message', 'abc123', undefined],
      );
      assert.deepEqual(await stream.nextJson('the poll request'), pollRequest.body);
      stream.close();
      assert.equal((await polled(topic)).length, 1, 'a poll request is never stored');
    });

    test("e-mail, calls, templates and sequence IDs are refused with ntfy's codes", async () => {
      const topic = fresh('refused');
      for (const name of ['X-Email', 'X-E-Mail', 'Email', 'E-Mail', 'mail', 'e'])
        await refusedWith(post(`/${topic}`, 'x', { [name]: 'phil@example.com' }), 40001);
      await refusedWith(post(`/${topic}?email=phil@example.com`, 'x'), 40001);
      await refusedWith(post(`/${topic}`, 'x', { Call: '+12223334444' }), 40032);
      await refusedWith(post(`/${topic}`, 'x', { 'X-Call': 'yes' }), 40032);
      await refusedWith(post(`/${topic}`, '{"a":1}', { Template: 'yes' }), 40000);
      await refusedWith(post(`/${topic}?tpl=github`, '{}'), 40000);
      await refusedWith(post(`/${topic}`, 'x', { 'X-Sequence-ID': 'heartbeat' }), 40000);
      await refusedWith(postJson({ topic, message: 'x', email: 'phil@example.com' }), 40001);
      assert.equal((await post(`/${topic}`, 'x', { Template: 'no' })).status, 200, 'templating switched off is fine');
    });

    test("ntfy's title (1 KB) and tags (512 bytes) limits: 40057, 40058", async () => {
      const topic = fresh('limits');
      assert.equal((await post(`/${topic}`, 'x', { Title: 't'.repeat(1024) })).status, 200);
      await refusedWith(post(`/${topic}`, 'x', { Title: 't'.repeat(1025) }), 40057);
      assert.equal((await post(`/${topic}`, 'x', { Tags: `${'a'.repeat(256)},${'b'.repeat(256)}` })).status, 200);
      await refusedWith(post(`/${topic}`, 'x', { Tags: `${'a'.repeat(256)},${'b'.repeat(257)}` }), 40058);
      await refusedWith(postJson({ topic, message: 'x', title: 'é'.repeat(513) }), 40057);
    });

    test('publishing via GET (webhooks): publish, send and trigger, one topic only', async () => {
      const topic = fresh('mytopic');
      const trigger = await fetch(`${server.baseUrl}/${topic}/trigger`);
      assert.equal(((await trigger.json()) as Json).message, 'triggered');
      const send = await fetch(`${server.baseUrl}/${topic}/send?message=Hi&priority=high&tags=warning`);
      const sent = (await send.json()) as Json;
      assert.deepEqual([sent.message, sent.priority, sent.tags], ['Hi', 4, ['warning']]);
      const published = (await (await fetch(`${server.baseUrl}/${topic}/publish?m=Backup&t=Done`)).json()) as Json;
      assert.deepEqual([published.message, published.title], ['Backup', 'Done']);
      assert.equal((await polled(topic)).length, 3);
      assert.equal((await fetch(`${server.baseUrl}/${topic},other/publish?m=hi`)).status, 404);
    });

    test('a JSON publish to / takes every documented field', async () => {
      const topic = fresh('mytopic');
      const answer = await postJson({
        topic,
        message: 'Disk space is low at 5.1 GB',
        title: 'Low disk space alert',
        tags: ['warning', 'cd'],
        priority: 4,
        attach: 'https://filesrv.lan/space.jpg',
        filename: 'diskspace.jpg',
        click: 'https://homecamera.lan/xasds1h2xsSsa/',
        icon: 'https://example.com/icon.png',
        markdown: true,
        cache: true,
        firebase: false,
        actions: [{ action: 'view', label: 'Admin panel', url: 'https://filesrv.lan/admin' }],
      });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const { id: _id, time: _time, expires: _expires, actions, ...rest } = answer.body;
      assert.deepEqual(rest, {
        event: 'message',
        topic,
        title: 'Low disk space alert',
        message: 'Disk space is low at 5.1 GB',
        priority: 4,
        tags: ['warning', 'cd'],
        click: 'https://homecamera.lan/xasds1h2xsSsa/',
        icon: 'https://example.com/icon.png',
        attachment: { name: 'diskspace.jpg', url: 'https://filesrv.lan/space.jpg' },
        content_type: 'text/markdown',
      });
      assert.deepEqual(withoutIds(actions), [{ action: 'view', label: 'Admin panel', clear: false, url: 'https://filesrv.lan/admin' }]);
      const delayed = await postJson({ topic, message: 'later', delay: '10m' });
      assert.equal(delayed.body.time, Math.floor(server.clock.nowMs() / SECOND_MS) + 600);
      const uncached = await postJson({ topic, message: 'not kept', cache: 'no' });
      assert.equal(uncached.body.expires, undefined);
      await refusedWith(postJson({ topic, message: 'x', priority: [1] }), 40024);
      await refusedWith(postJson({ topic, message: 'x', delay: 'INVALID' }), 40004);
    });

    test('UnifiedPush publishes stay immediate and answer as before', async () => {
      const topic = 'upAbCdEf987654';
      const answer = await post(`/${topic}?up=1`, 'push');
      assert.equal(answer.status, 200);
      assert.equal(answer.body.time, Math.floor(server.clock.nowMs() / SECOND_MS));
      assert.deepEqual((await polled(topic))[0], answer.body);
    });
  });
}
