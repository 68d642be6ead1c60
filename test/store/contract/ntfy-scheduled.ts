import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { NtfyAppendEvent, NtfyMessage, NtfyMessageContent } from '../../../src/store/port-ntfy.ts';
import type { StorePort } from '../../../src/store/port.ts';
import { isNtfyMessageId } from '../../../src/store/ntfy-ids.ts';
import { MINUTE_MS, SECOND_MS, type ContractContext } from './context.ts';

const TTL_MS = 12 * 60 * MINUTE_MS;
const TOPIC_A = 'upAAAAAAAAAAAA';
const TOPIC_B = 'upBBBBBBBBBBBB';
const EVENT_DEADLINE_MS = 10_000;
const POLL_TICK_MS = 5;
const BACKLOG = 25;

const text = (message: string): NtfyMessageContent => ({ message });

/** Every field a publish can set, actions and an attachment included: what must round-trip. */
const RICH: NtfyMessageContent = {
  message: 'You left the house. Turn down the A/C?',
  title: 'Home',
  priority: 4,
  tags: ['house'],
  click: 'https://home.example/',
  actions: [
    { id: 'aB3dE5gH7j', action: 'view', label: 'Open portal', clear: true, url: 'https://home.nest.com/' },
    {
      id: 'Zz9Yy8Xx7W',
      action: 'http',
      label: 'Turn down',
      clear: false,
      url: 'https://api.nest.com/',
      method: 'PUT',
      headers: { Authorization: 'Bearer x' },
      body: '{"temperature": 65}',
    },
    { id: 'Qq1Ww2Ee3R', action: 'broadcast', label: 'Take picture', clear: false, intent: 'a.b.C', extras: { cmd: 'pic' } },
  ],
  attachment: { name: 'F-Droid.apk', url: 'https://f-droid.org/F-Droid.apk' },
};

async function until<T>(check: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + EVENT_DEADLINE_MS;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_TICK_MS));
  }
}

/**
 * Listen to the store's append events, appending probes (to another topic) until one is heard:
 * events are advisory and may start a little after subscribing (Redis subscribes in the background).
 * Returns the events heard and the last probe, after which the chain is followed.
 */
async function listening(store: StorePort): Promise<{ heard: NtfyAppendEvent[]; probe: NtfyMessage }> {
  const heard: NtfyAppendEvent[] = [];
  store.onNtfyAppend((event) => heard.push(event));
  let probe: NtfyMessage | undefined;
  await until(async () => {
    probe = await store.appendNtfyMessage('probe', text('probe'), TTL_MS);
    return heard.length > 0 ? true : undefined;
  }, 'the first event');
  const last = probe as NtfyMessage;
  await until(() => (heard.some((e) => e.message.id === last.id) ? true : undefined), 'the last probe');
  return { heard, probe: last };
}

/** The contract of port-ntfy.ts beyond appends: `Cache: no` announcements and scheduled messages. */
export function ntfyScheduledContract(ctx: ContractContext): void {
  describe('ntfy announcements (Cache: no)', () => {
    test('an announcement takes the next id and is heard live, but no reader ever sees it', async () => {
      const store = ctx.store();
      const { heard } = await listening(store);
      const before = await store.appendNtfyMessage(TOPIC_A, text('stored'), TTL_MS);
      const announced = await store.announceNtfyMessage(TOPIC_A, { ...RICH, message: 'not stored' });
      const after = await store.appendNtfyMessage(TOPIC_A, text('stored too'), TTL_MS);
      assert.ok(isNtfyMessageId(announced.id));
      assert.ok(before.id < announced.id && announced.id < after.id, 'the announcement has its place in the global order');
      assert.deepEqual(announced, {
        id: announced.id,
        topic: TOPIC_A,
        timeMs: ctx.clock().nowMs(),
        expiresMs: 0,
        ...RICH,
        message: 'not stored',
      });
      const read = await store.readNtfyMessages([TOPIC_A], null, 10);
      assert.deepEqual(
        read.messages.map((m) => m.message),
        ['stored', 'stored too'],
      );
      assert.equal(await store.hasNtfyMessage(announced.id), false);
      await until(() => (heard.some((e) => e.message.id === after.id) ? true : undefined), 'the last event');
      assert.deepEqual(
        heard.find((e) => e.message.id === announced.id),
        { message: announced, previousId: before.id },
      );
      assert.equal(heard.find((e) => e.message.id === after.id)?.previousId, announced.id, 'the chain runs through the announcement');
    });
  });

  describe('ntfy scheduled messages', () => {
    test('a scheduled message is listed, not readable from its topic, until it is due', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      const now = clock.nowMs();
      const later = await store.scheduleNtfyMessage(TOPIC_A, text('later'), now + 10 * MINUTE_MS, TTL_MS);
      const sooner = await store.scheduleNtfyMessage(TOPIC_A, RICH, now + 5 * MINUTE_MS, TTL_MS);
      const other = await store.scheduleNtfyMessage(TOPIC_B, text('other topic'), now + MINUTE_MS, TTL_MS);
      assert.ok(isNtfyMessageId(sooner.id) && sooner.id !== later.id);
      assert.deepEqual(sooner, {
        ...RICH,
        id: sooner.id,
        topic: TOPIC_A,
        deliverAtMs: now + 5 * MINUTE_MS,
        ttlMs: TTL_MS,
        sequenceId: sooner.id,
      });
      assert.deepEqual(await store.readNtfyScheduled([TOPIC_A], 10), [sooner, later], 'by delivery time');
      assert.deepEqual(await store.readNtfyScheduled([TOPIC_B, TOPIC_A], 2), [other, sooner], 'merged and limited');
      assert.deepEqual(await store.readNtfyScheduled([], 10), []);
      assert.deepEqual((await store.readNtfyMessages([TOPIC_A, TOPIC_B], null, 10)).messages, []);
      assert.deepEqual(await store.releaseDueNtfyMessages(10), [], 'nothing is due yet');
      clock.advance(MINUTE_MS - 1);
      assert.deepEqual(await store.releaseDueNtfyMessages(10), [], 'one millisecond early');
    });

    test('when due it is appended once: a new id in the global order, its scheduled id as sequenceId, heard live', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      const { heard } = await listening(store);
      const scheduled = await store.scheduleNtfyMessage(TOPIC_A, RICH, clock.nowMs() + 30 * SECOND_MS, TTL_MS);
      const earlier = await store.appendNtfyMessage(TOPIC_B, text('meanwhile'), TTL_MS);
      clock.advance(40 * SECOND_MS);
      const [delivered, ...rest] = await store.releaseDueNtfyMessages(10);
      assert.deepEqual(rest, []);
      assert.ok(delivered);
      assert.ok(delivered.id > earlier.id, 'after everything appended before the delivery');
      assert.notEqual(delivered.id, scheduled.id);
      assert.deepEqual(delivered, {
        ...RICH,
        id: delivered.id,
        topic: TOPIC_A,
        timeMs: clock.nowMs(),
        expiresMs: clock.nowMs() + TTL_MS,
        sequenceId: scheduled.id,
      });
      assert.deepEqual((await store.readNtfyMessages([TOPIC_A], null, 10)).messages, [delivered]);
      assert.equal(await store.ntfyHeadId(), delivered.id);
      assert.equal(await store.hasNtfyMessage(delivered.id), true);
      assert.deepEqual(await store.readNtfyScheduled([TOPIC_A], 10), [], 'no longer scheduled');
      assert.deepEqual(await store.releaseDueNtfyMessages(10), [], 'never twice');
      const event = await until(() => heard.find((e) => e.message.id === delivered.id), 'the delivery event');
      assert.deepEqual(event, { message: delivered, previousId: earlier.id });
    });

    test('a backlog is delivered at most `limit` per call, each message once, also when calls overlap', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      const start = clock.nowMs();
      const scheduled = [];
      for (let i = 0; i < BACKLOG; i++)
        scheduled.push(
          await store.scheduleNtfyMessage(i % 2 ? TOPIC_A : TOPIC_B, text(`m${i}`), start + (BACKLOG - i) * SECOND_MS, TTL_MS),
        );
      clock.advance((BACKLOG + 1) * SECOND_MS);
      const first = await store.releaseDueNtfyMessages(5);
      assert.equal(first.length, 5);
      const overlapping = await Promise.all([
        store.releaseDueNtfyMessages(7),
        store.releaseDueNtfyMessages(7),
        store.releaseDueNtfyMessages(50),
      ]);
      const delivered = [...first, ...overlapping.flat()];
      assert.equal(delivered.length, BACKLOG, 'every message delivered');
      assert.equal(new Set(delivered.map((m) => m.sequenceId)).size, BACKLOG, 'each exactly once');
      const stored = (await store.readNtfyMessages([TOPIC_A, TOPIC_B], null, 100)).messages;
      assert.equal(stored.length, BACKLOG);
      assert.deepEqual(new Set(stored.map((m) => m.sequenceId)), new Set(scheduled.map((s) => s.id)));
      assert.deepEqual(await store.releaseDueNtfyMessages(50), []);
    });

    test('a delivered message expires its TTL after delivery, not after scheduling', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      await store.scheduleNtfyMessage(TOPIC_A, text('short-lived'), clock.nowMs() + 2 * MINUTE_MS, MINUTE_MS);
      clock.advance(2 * MINUTE_MS);
      const [delivered] = await store.releaseDueNtfyMessages(10);
      assert.equal(delivered?.expiresMs, clock.nowMs() + MINUTE_MS);
      clock.advance(MINUTE_MS - 1);
      assert.equal((await store.readNtfyMessages([TOPIC_A], null, 10)).messages.length, 1);
      clock.advance(1);
      assert.equal((await store.readNtfyMessages([TOPIC_A], null, 10)).messages.length, 0);
    });

    test('bad arguments are refused', async () => {
      const store = ctx.store();
      await assert.rejects(store.scheduleNtfyMessage(TOPIC_A, text('x'), ctx.clock().nowMs() + MINUTE_MS, 0), RangeError);
      await assert.rejects(store.readNtfyScheduled([TOPIC_A], 0), RangeError);
      await assert.rejects(store.releaseDueNtfyMessages(0), RangeError);
    });
  });
}
