import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { NtfyAppendEvent, NtfyMessage, NtfyMessageContent } from '../../../src/store/port-ntfy.ts';
import { decodeNtfyId, isNtfyMessageId, ntfyIdBefore } from '../../../src/store/ntfy-ids.ts';
import { MINUTE_MS, SECOND_MS, type ContractContext } from './context.ts';

const TTL_MS = 12 * 60 * MINUTE_MS;
const TOPIC_A = 'upAAAAAAAAAAAA';
const TOPIC_B = 'upBBBBBBBBBBBB';
const TOPIC_C = 'plain_topic-1';
const SAME_MS_APPENDS = 50;
/** More topics than a phone subscribes to: what the pusher's bridge reads. */
const MANY_TOPICS = 100;
/** Other topics' messages between two of the wanted ones: more than one bounded read examines. */
const LONG_RUN = 2_500;
/** How long an advisory event may take to arrive before a test gives up (generous: never a timing assertion). */
const EVENT_DEADLINE_MS = 10_000;
const POLL_TICK_MS = 5;

const text = (message: string): NtfyMessageContent => ({ message });
const ids = (messages: readonly NtfyMessage[]): string[] => messages.map((m) => m.id);

/** Poll `check` (on a short tick, never a fixed wait) until it gives a value; fail after a deadline. */
async function until<T>(check: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + EVENT_DEADLINE_MS;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_TICK_MS));
  }
}

/** The contract of port-ntfy.ts: ntfy topic queues with globally ordered ids. */
export function ntfyContract(ctx: ContractContext): void {
  describe('ntfy topics', () => {
    test('appendNtfyMessage returns the stored message: a 12-character id, the store time, the expiry and the content', async () => {
      const store = ctx.store();
      const now = ctx.clock().nowMs();
      const full: NtfyMessageContent = {
        message: 'hello',
        title: 'Title',
        priority: 4,
        tags: ['warning', 'skull'],
        click: 'https://example.com/a',
        icon: 'https://example.com/i.png',
        contentType: 'text/markdown',
      };
      const message = await store.appendNtfyMessage(TOPIC_A, full, TTL_MS);
      assert.ok(isNtfyMessageId(message.id), message.id);
      assert.deepEqual(message, { id: message.id, topic: TOPIC_A, timeMs: now, expiresMs: now + TTL_MS, ...full });
      const plain = await store.appendNtfyMessage(TOPIC_A, text('bare'), TTL_MS);
      assert.deepEqual(Object.keys(plain).sort(), ['expiresMs', 'id', 'message', 'timeMs', 'topic']);
      const { messages } = await store.readNtfyMessages([TOPIC_A], null, 10);
      assert.deepEqual(messages, [message, plain]);
    });

    test('message text and base64 bodies come back byte for byte (whitespace, BOM, unicode)', async () => {
      const store = ctx.store();
      const tricky = '\uFEFF  leading and trailing spaces \n\t🙂 ünïcödé  ';
      const binary = Buffer.from([0, 255, 1, 254, 128]).toString('base64');
      await store.appendNtfyMessage(TOPIC_A, text(tricky), TTL_MS);
      await store.appendNtfyMessage(TOPIC_A, { message: binary, encoding: 'base64' }, TTL_MS);
      const { messages } = await store.readNtfyMessages([TOPIC_A], null, 10);
      assert.equal(messages[0]?.message, tricky);
      assert.deepEqual([messages[1]?.message, messages[1]?.encoding], [binary, 'base64']);
    });

    test('ids rise in append order across topics, also within one millisecond and when the clock goes back', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      const appended: string[] = [];
      for (let i = 0; i < SAME_MS_APPENDS; i++)
        appended.push((await store.appendNtfyMessage(i % 2 ? TOPIC_A : TOPIC_B, text(`m${i}`), TTL_MS)).id);
      clock.advance(-5 * SECOND_MS);
      appended.push((await store.appendNtfyMessage(TOPIC_C, text('after the clock stepped back'), TTL_MS)).id);
      clock.advance(10 * SECOND_MS);
      appended.push((await store.appendNtfyMessage(TOPIC_A, text('later'), TTL_MS)).id);
      assert.equal(new Set(appended).size, appended.length, 'ids are unique');
      assert.deepEqual([...appended].sort(), appended, 'string order is append order');
      const positions = appended.map((id) => decodeNtfyId(id));
      assert.equal(positions[1]?.ms, positions[0]?.ms, 'same millisecond');
      assert.equal(positions[positions.length - 1]?.ms, clock.nowMs());
    });

    test('appends made at once all commit, with ids in call order', async () => {
      const store = ctx.store();
      const appended = await Promise.all(
        Array.from({ length: SAME_MS_APPENDS }, (_, i) => store.appendNtfyMessage(i % 2 ? TOPIC_A : TOPIC_B, text(`c${i}`), TTL_MS)),
      );
      const appendedIds = ids(appended);
      assert.equal(new Set(appendedIds).size, SAME_MS_APPENDS);
      assert.deepEqual([...appendedIds].sort(), appendedIds);
      assert.deepEqual(ids((await store.readNtfyMessages([TOPIC_A, TOPIC_B], null, 100)).messages), appendedIds);
      assert.equal(await store.ntfyHeadId(), appendedIds[appendedIds.length - 1]);
    });

    test('ntfyHeadId is null before the first append, then the newest id of any topic', async () => {
      const store = ctx.store();
      assert.equal(await store.ntfyHeadId(), null);
      await store.appendNtfyMessage(TOPIC_A, text('one'), TTL_MS);
      const second = await store.appendNtfyMessage(TOPIC_B, text('two'), TTL_MS);
      assert.equal(await store.ntfyHeadId(), second.id);
    });

    test('readNtfyMessages merges the requested topics in id order and leaves the others out', async () => {
      const store = ctx.store();
      const a1 = await store.appendNtfyMessage(TOPIC_A, text('a1'), TTL_MS);
      const b1 = await store.appendNtfyMessage(TOPIC_B, text('b1'), TTL_MS);
      await store.appendNtfyMessage(TOPIC_C, text('c1'), TTL_MS);
      const a2 = await store.appendNtfyMessage(TOPIC_A, text('a2'), TTL_MS);
      const result = await store.readNtfyMessages([TOPIC_B, TOPIC_A, TOPIC_A], null, 10);
      assert.deepEqual(ids(result.messages), [a1.id, b1.id, a2.id]);
      assert.equal(result.complete, true);
      assert.deepEqual(await store.readNtfyMessages([], a1.id, 10), { messages: [], position: a1.id, complete: true });
    });

    test('an id from one topic is a cursor for the others (global order)', async () => {
      const store = ctx.store();
      await store.appendNtfyMessage(TOPIC_B, text('b-before'), TTL_MS);
      const a1 = await store.appendNtfyMessage(TOPIC_A, text('a1'), TTL_MS);
      const b2 = await store.appendNtfyMessage(TOPIC_B, text('b-after'), TTL_MS);
      const a2 = await store.appendNtfyMessage(TOPIC_A, text('a2'), TTL_MS);
      assert.deepEqual(ids((await store.readNtfyMessages([TOPIC_B], a1.id, 10)).messages), [b2.id]);
      assert.deepEqual(ids((await store.readNtfyMessages([TOPIC_A, TOPIC_B], a1.id, 10)).messages), [b2.id, a2.id]);
    });

    test('a limited read continues from its position with no gap and no duplicate', async () => {
      const store = ctx.store();
      const appended: string[] = [];
      for (let i = 0; i < 25; i++)
        appended.push((await store.appendNtfyMessage([TOPIC_A, TOPIC_B, TOPIC_C][i % 3] as string, text(`m${i}`), TTL_MS)).id);
      const wanted = appended.filter((_, i) => i % 3 !== 2);
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let rounds = 0; rounds < 10; rounds++) {
        const result = await store.readNtfyMessages([TOPIC_A, TOPIC_B], cursor, 4);
        seen.push(...ids(result.messages));
        cursor = result.position;
        if (result.complete) break;
        assert.equal(result.messages.length, 4);
        assert.equal(result.position, result.messages[3]?.id);
      }
      assert.deepEqual(seen, wanted);
      assert.equal(cursor, appended[appended.length - 1], 'a complete read ends at the head');
    });

    test('a read of many topics (as the pusher reads every topic it holds) returns each of their messages once, in order, through a long run of others', async () => {
      const store = ctx.store();
      const wanted = Array.from({ length: MANY_TOPICS }, (_, i) => `want-${i}`);
      const expected: string[] = [];
      for (let i = 0; i < MANY_TOPICS * 3; i++) {
        const message = await store.appendNtfyMessage(i % 2 ? (wanted[i % MANY_TOPICS] as string) : `other-${i}`, text(`m${i}`), TTL_MS);
        if (i % 2) expected.push(message.id);
      }
      // A long run of other topics' messages, then a few of the wanted ones.
      await Promise.all(Array.from({ length: LONG_RUN }, (_, i) => store.appendNtfyMessage(`noise-${i % 7}`, text('noise'), TTL_MS)));
      for (let i = 0; i < 3; i++) expected.push((await store.appendNtfyMessage(wanted[i] as string, text(`late${i}`), TTL_MS)).id);
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let reads = 0; ; reads++) {
        assert.ok(reads < 1_000, 'the chain ends');
        const result = await store.readNtfyMessages(wanted, cursor, 7);
        assert.ok(result.messages.length <= 7);
        seen.push(...ids(result.messages));
        assert.ok(result.position !== null && (cursor === null || result.position >= cursor), 'the position never goes back');
        cursor = result.position;
        if (result.complete) break;
      }
      assert.deepEqual(seen, expected);
      assert.equal(cursor, await store.ntfyHeadId());
    });

    test('readNtfyMessagesMany answers each read as readNtfyMessages does, in order (one topic, several, many, none, limited, duplicated)', async () => {
      const store = ctx.store();
      const wanted = Array.from({ length: MANY_TOPICS }, (_, i) => `want-${i}`);
      const appended: NtfyMessage[] = [];
      for (let i = 0; i < 40; i++)
        appended.push(
          await store.appendNtfyMessage(
            [TOPIC_A, TOPIC_B, TOPIC_C, wanted[i % MANY_TOPICS] as string][i % 4] as string,
            text(`m${i}`),
            TTL_MS,
          ),
        );
      const middle = appended[13]?.id as string;
      const future = ntfyIdBefore(ctx.clock().nowMs() + 60 * MINUTE_MS) as string;
      const requests = [
        { topics: [TOPIC_A], afterId: null, limit: 100 },
        { topics: [TOPIC_A, TOPIC_B, TOPIC_B], afterId: middle, limit: 3 },
        { topics: [], afterId: middle, limit: 5 },
        { topics: [TOPIC_C], afterId: future, limit: 5 },
        { topics: wanted, afterId: null, limit: 4 },
        { topics: ['never-used'], afterId: null, limit: 1 },
        { topics: [TOPIC_A], afterId: null, limit: 100 },
        { topics: [TOPIC_A], afterId: middle, limit: 2 },
      ];
      const many = await store.readNtfyMessagesMany(requests);
      const alone = [];
      for (const r of requests) alone.push(await store.readNtfyMessages(r.topics, r.afterId, r.limit));
      assert.deepEqual(many, alone);
      assert.equal(many[0]?.messages.length, 10);
      assert.equal(many[1]?.complete, false);
      assert.equal(many[4]?.messages.length, 4);
      assert.deepEqual(await store.readNtfyMessagesMany([]), []);
    });

    test('a complete read positions at the head, even when the topics have nothing (an idle cursor keeps up)', async () => {
      const store = ctx.store();
      assert.deepEqual(await store.readNtfyMessages([TOPIC_A], null, 10), { messages: [], position: null, complete: true });
      await store.appendNtfyMessage(TOPIC_B, text('b1'), TTL_MS);
      const b2 = await store.appendNtfyMessage(TOPIC_B, text('b2'), TTL_MS);
      assert.deepEqual(await store.readNtfyMessages([TOPIC_A], null, 10), { messages: [], position: b2.id, complete: true });
      const future = ntfyIdBefore(ctx.clock().nowMs() + 60 * MINUTE_MS) as string;
      assert.deepEqual(await store.readNtfyMessages([TOPIC_A], future, 10), { messages: [], position: future, complete: true });
      const a1 = await store.appendNtfyMessage(TOPIC_A, text('a1'), TTL_MS);
      assert.deepEqual(ids((await store.readNtfyMessages([TOPIC_A], b2.id, 10)).messages), [a1.id]);
    });

    test('a synthetic id (ntfyIdBefore) selects the messages from a time on', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      await store.appendNtfyMessage(TOPIC_A, text('old'), TTL_MS);
      clock.advance(10 * SECOND_MS);
      const boundary = clock.nowMs();
      const fresh = await store.appendNtfyMessage(TOPIC_A, text('new'), TTL_MS);
      const after = ntfyIdBefore(boundary);
      assert.ok(after);
      assert.deepEqual(ids((await store.readNtfyMessages([TOPIC_A], after, 10)).messages), [fresh.id]);
    });

    test('expired messages are never read, even before the janitor deletes them', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      const short = await store.appendNtfyMessage(TOPIC_A, text('short'), 10 * SECOND_MS);
      const long = await store.appendNtfyMessage(TOPIC_A, text('long'), TTL_MS);
      clock.advance(10 * SECOND_MS);
      assert.deepEqual(ids((await store.readNtfyMessages([TOPIC_A], null, 10)).messages), [long.id]);
      assert.equal(await store.hasNtfyMessage(short.id), false);
      assert.equal(await store.hasNtfyMessage(long.id), true);
      assert.deepEqual(ids(await store.latestNtfyMessages([TOPIC_A], short.id)), []);
    });

    test('expireNtfyMessages deletes what expired, in bounded calls, and keeps the rest', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      for (let i = 0; i < 7; i++) await store.appendNtfyMessage(i % 2 ? TOPIC_A : TOPIC_B, text(`old${i}`), MINUTE_MS);
      const kept = await store.appendNtfyMessage(TOPIC_A, text('kept'), TTL_MS);
      assert.equal(await store.expireNtfyMessages(100), 0, 'nothing is due yet');
      clock.advance(MINUTE_MS);
      let deleted = 0;
      for (let calls = 0; calls < 20; calls++) {
        const n = await store.expireNtfyMessages(3);
        assert.ok(n <= 3, `a call deletes at most about its limit, got ${n}`);
        deleted += n;
        if (n === 0) break;
      }
      assert.equal(deleted, 7);
      assert.equal(await store.expireNtfyMessages(100), 0);
      assert.deepEqual(ids((await store.readNtfyMessages([TOPIC_A, TOPIC_B], null, 10)).messages), [kept.id]);
      const later = await store.appendNtfyMessage(TOPIC_B, text('after expiry'), TTL_MS);
      assert.ok(later.id > kept.id, 'ids keep rising after a topic was emptied');
      assert.deepEqual(ids((await store.readNtfyMessages([TOPIC_B], null, 10)).messages), [later.id]);
    });

    test('latestNtfyMessages gives each topic its newest message up to an id', async () => {
      const store = ctx.store();
      await store.appendNtfyMessage(TOPIC_A, text('a1'), TTL_MS);
      const a2 = await store.appendNtfyMessage(TOPIC_A, text('a2'), TTL_MS);
      const b1 = await store.appendNtfyMessage(TOPIC_B, text('b1'), TTL_MS);
      const head = (await store.ntfyHeadId()) as string;
      await store.appendNtfyMessage(TOPIC_A, text('a3 after the head'), TTL_MS);
      assert.deepEqual(ids(await store.latestNtfyMessages([TOPIC_B, TOPIC_A, TOPIC_C], head)), [a2.id, b1.id]);
      assert.deepEqual(ids(await store.latestNtfyMessages([TOPIC_B], a2.id)), []);
    });

    test('hasNtfyMessage knows every stored id, whatever its topic, and nothing else', async () => {
      const store = ctx.store();
      const a1 = await store.appendNtfyMessage(TOPIC_A, text('a1'), TTL_MS);
      const b1 = await store.appendNtfyMessage(TOPIC_B, text('b1'), TTL_MS);
      assert.equal(await store.hasNtfyMessage(a1.id), true);
      assert.equal(await store.hasNtfyMessage(b1.id), true);
      assert.equal(await store.hasNtfyMessage('zzzzzzzzzzzz'), false, 'a well-formed foreign id');
      assert.equal(await store.hasNtfyMessage('not-an-id'), false);
      ctx.clock().advance(TTL_MS);
      await store.expireNtfyMessages(100);
      assert.equal(await store.hasNtfyMessage(a1.id), false, 'gone after expiry');
    });

    test('once ntfyAppendsHeard resolves, the first append is heard (no probing)', async () => {
      const store = ctx.store();
      await store.ntfyAppendsHeard(); // without listeners: at once
      const heard: NtfyAppendEvent[] = [];
      const stop = store.onNtfyAppend((event) => heard.push(event));
      await store.ntfyAppendsHeard();
      const first = await store.appendNtfyMessage(TOPIC_A, text('the first after'), TTL_MS);
      await until(() => (heard.length > 0 ? true : undefined), 'the event of the first append');
      assert.deepEqual(
        heard.map((e) => e.message.id),
        [first.id],
      );
      stop();
    });

    test('onNtfyAppend hears each append with the id before it, in order, until unsubscribed; a throwing listener does not fail the append', async () => {
      const store = ctx.store();
      const heard: NtfyAppendEvent[] = [];
      const sentinel: NtfyAppendEvent[] = [];
      const stop = store.onNtfyAppend((event) => heard.push(event));
      store.onNtfyAppend((event) => sentinel.push(event));
      const stopThrowing = store.onNtfyAppend(() => {
        throw new Error('listener bug');
      });
      // Events are advisory and may start a little after subscribing (Redis subscribes in the
      // background): append until one is heard, then follow the chain from there.
      let probe: NtfyMessage | undefined;
      await until(async () => {
        probe = await store.appendNtfyMessage(TOPIC_C, text('probe'), TTL_MS);
        return heard.length > 0 ? true : undefined;
      }, 'the first event');
      const one = await store.appendNtfyMessage(TOPIC_A, { message: 'one', title: 'T', tags: ['x'] }, TTL_MS);
      const two = await store.appendNtfyMessage(TOPIC_B, text('two'), TTL_MS);
      await until(() => (heard.length > 0 && heard[heard.length - 1]?.message.id === two.id ? true : undefined), 'both events');
      const tail = heard.slice(-3);
      assert.deepEqual(
        tail.map((e) => e.message),
        [probe, one, two],
        'the messages exactly as the appends returned them',
      );
      assert.deepEqual(
        tail.slice(1).map((e) => e.previousId),
        [probe?.id, one.id],
      );
      stop();
      stopThrowing();
      const heardBefore = heard.length;
      await store.appendNtfyMessage(TOPIC_C, text('three'), TTL_MS);
      const four = await store.appendNtfyMessage(TOPIC_C, text('four'), TTL_MS);
      // Events arrive in order, so once the sentinel hears four, three would have come before it.
      await until(() => (sentinel.some((e) => e.message.id === four.id) ? true : undefined), 'the sentinel hearing four');
      assert.equal(heard.length, heardBefore, 'nothing after unsubscribing');
      const sentinelIds = ids(sentinel.map((e) => e.message));
      assert.deepEqual([...sentinelIds].sort(), sentinelIds, 'strictly increasing ids');
    });

    test('bad arguments are refused with a RangeError and change nothing', async () => {
      const store = ctx.store();
      await assert.rejects(store.appendNtfyMessage(TOPIC_A, text('x'), 0), RangeError);
      await assert.rejects(store.readNtfyMessages([TOPIC_A], null, 0), RangeError);
      await assert.rejects(store.readNtfyMessages([TOPIC_A], 'not-an-id', 10), RangeError);
      await assert.rejects(
        store.readNtfyMessagesMany([
          { topics: [TOPIC_A], afterId: null, limit: 10 },
          { topics: [TOPIC_B], afterId: null, limit: 1.5 },
        ]),
        RangeError,
      );
      await assert.rejects(store.expireNtfyMessages(0), RangeError);
      assert.equal(await store.ntfyHeadId(), null);
    });
  });
}
