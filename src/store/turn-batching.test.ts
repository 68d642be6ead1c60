import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { openSqliteStore } from './sqlite/index.ts';
import type { StorePort } from './port.ts';
import { withTurnBatching } from './turn-batching.ts';
import { totals } from '../../test/store/contract/context.ts';

/** The store, counting the calls that reach it. */
function counted(store: StorePort): { store: StorePort; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const proxy = new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.set(String(property), (calls.get(String(property)) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, calls };
}

describe('withTurnBatching', () => {
  test('inbox counts of one turn reach the store as one call, each caller with its own results', async () => {
    const base = await openSqliteStore({ path: ':memory:' });
    const { store, calls } = counted(base);
    const batched = withTurnBatching(store);
    const [alice, bob] = ['a1', 'b1'].map((p) => p.repeat(32)) as [string, string];
    await base.rememberInboxUser(alice);
    const [first, second] = await Promise.all([
      batched.countInboxNotifications([{ countKey: 'e1', recipient: alice, type: 'like' }], 60),
      batched.countInboxNotifications(
        [
          { countKey: 'e2', recipient: alice, type: 'like' },
          { countKey: 'e2', recipient: bob, type: 'like' },
        ],
        60,
      ),
    ]);
    assert.deepEqual(first, [1]);
    assert.deepEqual(second, [2, null]);
    assert.equal(calls.get('countInboxNotifications'), 1);
    await base.close();
  });

  test('enqueues of one turn reach the store as one enqueueMany per queue, each caller with its own result', async () => {
    const base = await openSqliteStore({ path: ':memory:' });
    const { store, calls } = counted(base);
    const batched = withTurnBatching(store);
    await base.enqueue('inbound', { id: 'known', payload: 0 });
    const results = await Promise.all([
      batched.enqueue('inbound', { id: 'a', payload: 1 }),
      batched.enqueue('inbound', { id: 'known', payload: 2 }),
      batched.enqueue('outbound', { id: 'b', payload: 3 }),
    ]);
    assert.deepEqual(results, [true, false, true]);
    assert.equal(calls.get('enqueueMany'), 2, 'one call per queue');
    assert.equal(calls.get('enqueue'), undefined);
    assert.deepEqual(totals(await base.queueStats('inbound')), { ready: 2, leased: 0, dead: 0 });
    await base.close();
  });

  test('recipient reads and delivery claims of one turn are merged, and each caller gets its own slice', async () => {
    const base = await openSqliteStore({ path: ':memory:' });
    const { store, calls } = counted(base);
    const batched = withTurnBatching(store);
    const [alice, bob, carol] = ['a1', 'b1', 'c1'].map((p) => p.repeat(32)) as [string, string, string];
    await base.registerToken(alice, { token: 'alice-phone', transport: 'fcm' });
    await base.registerToken(carol, { token: 'carol-phone', transport: 'fcm' });
    const [first, second] = await Promise.all([batched.readRecipients([alice, bob]), batched.readRecipients([carol])]);
    assert.deepEqual(
      first.map((s) => s.devices.map((d) => d.token)),
      [['alice-phone'], []],
    );
    assert.deepEqual(
      second.map((s) => s.devices.map((d) => d.token)),
      [['carol-phone']],
    );
    assert.equal(calls.get('readRecipients'), 1);

    const delivery = (eventId: string, recipient: string) => ({
      claim: { eventId, recipient, owner: randomUUID() },
      item: { id: `${eventId}:${recipient}`, payload: recipient },
    });
    const held = await base.claimRecipientDelivery('e1'.repeat(32), bob, 60);
    assert.ok(held);
    const [x, y] = await Promise.all([
      batched.claimAndEnqueueDeliveries('outbound', 60, [delivery('e1'.repeat(32), alice), delivery('e1'.repeat(32), bob)]),
      batched.claimAndEnqueueDeliveries('outbound', 60, [delivery('e2'.repeat(32), carol)]),
    ]);
    assert.deepEqual(x, [true, false]);
    assert.deepEqual(y, [true]);
    assert.equal(calls.get('claimAndEnqueueDeliveries'), 1);
    await base.close();
  });

  test('ntfy reads of one turn are one readNtfyMessagesMany, head reads one ntfyHeadId; a bad read fails alone', async () => {
    const base = await openSqliteStore({ path: ':memory:' });
    const { store, calls } = counted(base);
    const batched = withTurnBatching(store);
    const a1 = await base.appendNtfyMessage('a', { message: 'a1' }, 60_000);
    const b1 = await base.appendNtfyMessage('b', { message: 'b1' }, 60_000);
    const [heads, first, second, bad, third] = await Promise.all([
      Promise.all([batched.ntfyHeadId(), batched.ntfyHeadId(), batched.ntfyHeadId()]),
      batched.readNtfyMessages(['a'], null, 10),
      batched.readNtfyMessages(['a', 'b'], a1.id, 10),
      batched.readNtfyMessages(['a'], null, 0).then(
        () => 'read',
        (err: unknown) => (err instanceof RangeError ? 'refused' : 'other error'),
      ),
      batched.readNtfyMessages(['b'], null, 10),
    ]);
    assert.deepEqual(heads, [b1.id, b1.id, b1.id]);
    assert.equal(calls.get('ntfyHeadId'), 1);
    assert.deepEqual(first, await base.readNtfyMessages(['a'], null, 10));
    assert.deepEqual(
      second.messages.map((m) => m.id),
      [b1.id],
    );
    assert.equal(bad, 'refused');
    assert.deepEqual(
      third.messages.map((m) => m.id),
      [b1.id],
    );
    assert.equal(calls.get('readNtfyMessagesMany'), 1);
    assert.equal(calls.get('readNtfyMessages'), undefined);
    await base.close();
  });

  test('every other member is the store’s own', async () => {
    const base = await openSqliteStore({ path: ':memory:' });
    const batched = withTurnBatching(base);
    assert.equal(batched.clock, base.clock);
    await batched.registerToken('d1'.repeat(32), { token: 't', transport: 'fcm' });
    assert.equal(await base.tokenOwner('t'), 'd1'.repeat(32));
    // eslint-disable-next-line @typescript-eslint/unbound-method -- compared, not called: the same bound function on every read.
    assert.equal(batched.registerToken, batched.registerToken, 'bound once');
    await base.close();
  });
});
