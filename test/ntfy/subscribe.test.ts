/**
 * Subscribing, black-box over HTTP and WebSocket, on both stores, restating ntfy's documented
 * behaviour and what the ntfy Android app relies on (reference §1.4, §1.5, §2): every transport's
 * framing, one connection for several topics, `since=` in each form, `poll=1`, base64 bodies,
 * keepalives and pings on an injected scheduler, and resuming with the last id.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { openStream, openWs, poll, publish, wsRefusal } from './client.ts';
import { startNtfyTestServer, type NtfyTestServer } from './harness.ts';
import { NTFY_WEBSOCKET_KINDS } from '../../src/config/defaults.ts';

const KEEPALIVE_MS = 45_000;
const WS_TIMEOUT_MS = 60_000;

let redis: PrivateRedisServer | undefined;
before(async () => {
  redis = await startRedisServer();
});
after(async () => {
  await redis?.stop();
});

let topicCounter = 0;
/** A fresh UnifiedPush-style topic per test, so tests sharing a server never see each other's messages. */
function freshTopic(): string {
  topicCounter += 1;
  return `up${String(topicCounter).padStart(12, '0')}`;
}

// Over both stores and both WebSocket servers (ntfy.websocket), with the `ws` package as the client.
for (const [adapter, websocket] of ['sqlite', 'redis'].flatMap((store) => NTFY_WEBSOCKET_KINDS.map((kind) => [store, kind] as const))) {
  describe(`ntfy subscribe (${adapter}, ntfy.websocket: ${websocket})`, () => {
    let server: NtfyTestServer;
    before(async () => {
      server = await startNtfyTestServer({ ...(adapter === 'redis' ? { redisUrl: redis?.url } : {}), config: { websocket } });
    });
    after(() => server.close());

    const url = (path: string) => `${server.baseUrl}${path}`;
    const send = async (topic: string, body: string | Uint8Array = 'hello') => {
      const answer = await publish(server.baseUrl, `/${topic}?up=1`, body);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return answer.body;
    };

    test('/json: the open event first, then each message as one JSON line with the published id', async () => {
      const topic = freshTopic();
      const stream = await openStream(url(`/${topic}/json`));
      assert.equal(stream.status, 200);
      assert.equal(stream.headers['content-type'], 'application/x-ndjson; charset=utf-8');
      const open = await stream.nextJson('open');
      assert.deepEqual([open.event, open.topic], ['open', topic]);
      const published = await send(topic, 'first');
      assert.deepEqual(await stream.nextJson('the message'), published);
      stream.close();
    });

    test('/sse: open as an "event: open" block, messages as data blocks', async () => {
      const topic = freshTopic();
      const stream = await openStream(url(`/${topic}/sse`));
      assert.equal(stream.headers['content-type'], 'text/event-stream; charset=utf-8');
      const openBlock = await stream.frames.next('open');
      assert.match(openBlock, /^event: open\ndata: \{/);
      const published = await send(topic, 'over sse');
      const block = await stream.frames.next('message');
      assert.equal(block, `data: ${JSON.stringify(published)}`);
      stream.close();
    });

    test('/raw: an empty line for open, then the message text with newlines as spaces', async () => {
      const topic = freshTopic();
      const stream = await openStream(url(`/${topic}/raw`));
      assert.equal(stream.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(await stream.frames.next('open'), '');
      await send(topic, 'two\nlines');
      assert.equal(await stream.frames.next('message'), 'two lines');
      stream.close();
    });

    test('/ws: an open frame, then each message as a JSON text frame', async () => {
      const topic = freshTopic();
      const ws = await openWs(url(`/${topic}/ws`).replace('http', 'ws'));
      const open = await ws.nextJson('open');
      assert.deepEqual([open.event, open.topic], ['open', topic]);
      const published = await send(topic, 'over ws');
      const frame = await ws.frames.next('message');
      assert.ok(frame.endsWith('}\n'), 'frames end with a newline, as ntfy writes them');
      assert.deepEqual(JSON.parse(frame), published);
      const again = await send(topic, 'second');
      assert.deepEqual(await ws.nextJson('second message'), again);
      ws.close();
      await ws.closed;
    });

    test('one connection for several topics: open carries the list, each message its own topic', async () => {
      const [a, b, other] = [freshTopic(), freshTopic(), freshTopic()];
      for (const transport of ['json', 'ws'] as const) {
        const stream =
          transport === 'ws' ? await openWs(url(`/${a},${b}/ws`).replace('http', 'ws')) : await openStream(url(`/${a},${b}/json`));
        const open = await stream.nextJson('open');
        assert.equal(open.topic, `${a},${b}`);
        const fromA = await send(a, `to a over ${transport}`);
        await send(other, 'to a topic not subscribed');
        const fromB = await send(b, `to b over ${transport}`);
        assert.deepEqual(await stream.nextMessage('from a'), fromA);
        assert.deepEqual(await stream.nextMessage('from b'), fromB);
        stream.close();
      }
    });

    test('since= all, none, latest, an id of another topic, an unknown id, a timestamp and durations', async () => {
      const [a, b] = [freshTopic(), freshTopic()];
      const a1 = await send(a, 'a1');
      server.clock.advance(10_000);
      const b1 = await send(b, 'b1');
      server.clock.advance(10_000);
      const a2 = await send(a, 'a2');
      const ids = async (since: string, topics = `${a},${b}`) =>
        (await poll(url(`/${topics}/json?poll=1&since=${since}`))).messages.map((m) => m.message);
      assert.deepEqual(await ids('all'), ['a1', 'b1', 'a2']);
      assert.deepEqual(await ids('none'), []);
      assert.deepEqual(await ids('latest'), ['b1', 'a2']);
      assert.deepEqual(await ids(String(a1.id)), ['b1', 'a2']);
      assert.deepEqual(await ids(String(b1.id), a), ['a2'], 'an id of topic b is a cursor for topic a');
      assert.deepEqual(await ids('zzzzzzzzzzzz'), ['a1', 'b1', 'a2'], 'an unknown well-formed id replays everything');
      assert.deepEqual(await ids(String(b1.time)), ['b1', 'a2'], 'a unix timestamp is inclusive');
      assert.deepEqual(await ids('15s'), ['b1', 'a2']);
      assert.deepEqual(await ids('10m'), ['a1', 'b1', 'a2']);
      assert.deepEqual(await ids(String(Math.floor(server.clock.nowMs() / 1000) + 3600)), [], 'a time in the future');
      assert.equal(a2.message, 'a2');
      for (const garbage of ['INVALID', 'yesterday', 'AbCdEf12345']) {
        const response = await fetch(url(`/${a}/json?poll=1&since=${garbage}`));
        assert.equal(response.status, 400, garbage);
        assert.equal(((await response.json()) as { code: number }).code, 40008);
      }
    });

    test('a stream with since= replays first, then goes live; a future timestamp holds nothing back', async () => {
      const topic = freshTopic();
      const old = await send(topic, 'cached');
      const stream = await openStream(url(`/${topic}/json?since=all`));
      assert.equal((await stream.nextJson('open')).event, 'open');
      assert.deepEqual(await stream.nextJson('replayed'), old);
      const live = await send(topic, 'live');
      assert.deepEqual(await stream.nextJson('live'), live);
      stream.close();
      const future = await openStream(url(`/${topic}/json?since=${Math.floor(server.clock.nowMs() / 1000) + 3600}`));
      await future.nextJson('open');
      const later = await send(topic, 'after a future since');
      assert.deepEqual(await future.nextMessage('live after a future since'), later);
      future.close();
    });

    test('poll=1 returns the cached messages without an open event and closes; without since it means all', async () => {
      const topic = freshTopic();
      const m1 = await send(topic, 'p1');
      const m2 = await send(topic, 'p2');
      const polled = await poll(url(`/${topic}/json?poll=1`));
      assert.equal(polled.status, 200);
      assert.deepEqual(polled.messages, [m1, m2]);
      const sse = await (await fetch(url(`/${topic}/sse?poll=1`))).text();
      assert.equal(sse, `data: ${JSON.stringify(m1)}\n\ndata: ${JSON.stringify(m2)}\n\n`);
      const ws = await openWs(url(`/${topic}/ws?poll=1`).replace('http', 'ws'));
      assert.deepEqual(await ws.nextJson('polled over ws'), m1);
      assert.deepEqual(await ws.nextJson('polled over ws'), m2);
      await ws.closed;
    });

    test('a binary body reaches the subscriber as base64 with encoding "base64", byte for byte', async () => {
      const topic = freshTopic();
      const stream = await openStream(url(`/${topic}/json`));
      await stream.nextJson('open');
      const bytes = Uint8Array.from({ length: 4096 }, (_, i) => (i * 31 + 7) & 0xff);
      bytes[0] = 0xff;
      await send(topic, bytes);
      const message = await stream.nextMessage('binary');
      assert.equal(message.encoding, 'base64');
      assert.deepEqual(new Uint8Array(Buffer.from(String(message.message), 'base64')), bytes);
      stream.close();
    });

    test('reconnecting with the last id gets exactly what was missed, in order', async () => {
      const [a, b] = [freshTopic(), freshTopic()];
      const first = await openStream(url(`/${a},${b}/json?since=none`));
      await first.nextJson('open');
      const seen: string[] = [];
      for (const [topic, text] of [
        [a, 'm1'],
        [b, 'm2'],
        [a, 'm3'],
      ] as const) {
        await send(topic, text);
        seen.push(String((await first.nextMessage(text)).id));
      }
      first.close();
      const missed = [await send(b, 'm4'), await send(a, 'm5'), await send(b, 'm6')];
      const second = await openStream(url(`/${a},${b}/json?since=${seen[seen.length - 1]}`));
      await second.nextJson('open');
      for (const expected of missed) assert.deepEqual(await second.nextMessage(String(expected.message)), expected);
      const live = await send(a, 'm7');
      assert.deepEqual(await second.nextMessage('live after the replay'), live);
      second.close();
    });

    test('a keepalive event every 45 s on HTTP streams, driven by the injected scheduler', async () => {
      const topic = freshTopic();
      for (const transport of ['json', 'sse', 'raw'] as const) {
        const stream = await openStream(url(`/${topic}/${transport}`));
        await stream.frames.next('open');
        server.scheduler.advance(KEEPALIVE_MS - 1);
        // Frames are written in order: if a keepalive had gone out already, it would come first.
        const published = await send(topic, `before the keepalive (${transport})`);
        const frame = await stream.frames.next('the message');
        if (transport === 'raw') assert.equal(frame, published.message);
        else assert.ok(frame.includes(String(published.id)), frame);
        server.scheduler.advance(1);
        const keepalive = await stream.frames.next('keepalive');
        if (transport === 'raw') assert.equal(keepalive, '');
        else {
          const json = JSON.parse(
            transport === 'sse' ? (keepalive.split('\n').find((l) => l.startsWith('data: ')) ?? '').slice(6) : keepalive,
          ) as Record<string, unknown>;
          assert.deepEqual([json.event, json.topic], ['keepalive', topic]);
          if (transport === 'sse') assert.ok(keepalive.startsWith('event: keepalive\n'));
        }
        stream.close();
      }
    });

    test('WebSocket: a ping every 45 s; a peer that answers stays, a silent one is dropped after 60 s', async () => {
      const topic = freshTopic();
      const answering = await openWs(url(`/${topic}/ws`).replace('http', 'ws'));
      const silent = await openWs(url(`/${topic}/ws`).replace('http', 'ws'), { autoPong: false });
      await answering.nextJson('open');
      await silent.nextJson('open');
      server.scheduler.advance(KEEPALIVE_MS);
      await answering.pings.next('ping to the answering peer');
      await silent.pings.next('ping to the silent peer');
      // A ping of our own, answered after the server has read our pong: the pong was seen.
      answering.socket.ping();
      await answering.pongs.next('the server answering our ping');
      server.scheduler.advance(WS_TIMEOUT_MS - KEEPALIVE_MS);
      assert.equal(await silent.closed, 1006, 'the silent peer was cut off');
      const published = await send(topic, 'still there');
      assert.deepEqual(await answering.nextMessage('the answering peer still receives'), published);
      answering.close();
    });

    test('refusals: bad topics 400 40009, /ws without an upgrade 400 40016, a bad upgrade a bare 400', async () => {
      const bad = await fetch(url('/bad.topic,upX/json'));
      assert.equal(bad.status, 400);
      assert.equal(((await bad.json()) as { code: number }).code, 40009);
      const noUpgrade = await fetch(url(`/${freshTopic()}/ws`));
      assert.deepEqual([noUpgrade.status, ((await noUpgrade.json()) as { code: number }).code], [400, 40016]);
      assert.equal(await wsRefusal(url('/bad.topic/ws').replace('http', 'ws')), 400);
      assert.equal(await wsRefusal(url(`/${freshTopic()}/ws?since=garbage`).replace('http', 'ws')), 400);
      assert.equal(await wsRefusal(url('/not/a/ws/path').replace('http', 'ws')), 404);
    });
  });
}

describe('ntfy wake-ups are advisory', () => {
  test('SQLite: an append this process did not hear is delivered by the safety re-drain', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ntfy-wake-'));
    const path = join(dir, 'store.sqlite');
    const server = await startNtfyTestServer({ sqlitePath: path });
    const other = await openSqliteStore({ path });
    try {
      const topic = freshTopic();
      const stream = await openStream(`${server.baseUrl}/${topic}/json`);
      await stream.nextJson('open');
      const appended = await other.appendNtfyMessage(topic, { message: 'from another process' }, 60_000);
      assert.equal(await server.ntfy.hub?.safetyCheck(), true, 'the store head is past the feed: bridged');
      const message = await stream.nextMessage('the re-drained message');
      assert.deepEqual([message.id, message.message], [appended.id, 'from another process']);
      assert.equal(await server.ntfy.hub?.safetyCheck(), false, 'caught up');
      stream.close();
    } finally {
      await other.close();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('Redis: an append by another process wakes this one over pub/sub', async () => {
    const keyPrefix = `wake-${Date.now()}:`;
    const server = await startNtfyTestServer({ redisUrl: redis?.url, keyPrefix });
    const other = await openRedisStore({ url: redis?.url ?? '', keyPrefix });
    try {
      const topic = freshTopic();
      const stream = await openStream(`${server.baseUrl}/${topic}/json`);
      await stream.nextJson('open');
      const appended = await other.appendNtfyMessage(topic, { message: 'from another process' }, 60_000);
      const message = await stream.nextMessage('the woken message');
      assert.equal(message.id, appended.id);
      stream.close();
    } finally {
      await other.close();
      await server.close();
    }
  });
});
