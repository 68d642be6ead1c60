import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { signEvent } from '../../nostr/keys.ts';
import { PEOPLE_LIST } from '../../nostr/kinds.ts';
import type { NostrEvent } from '../../nostr/event.ts';
import { createLogger } from '../../observability/logger.ts';
import { Metrics } from '../../observability/metrics.ts';
import { openSqliteStore } from '../../store/sqlite/index.ts';
import type { StorePort } from '../../store/port.ts';
import { ManualClock } from '../../util/clock.ts';
import { makeUser, type TestUser } from '../../../test/support/nostr-client.ts';
import { routeInbound, type RouterDeps } from '../router.ts';
import { collectNotifyCreators, handleNotifyList, type NotifyListDeps } from './notify-list.ts';

const creator = (n: number): string => n.toString(16).padStart(64, 'c');
const DAY_SECS = 86_400;

function notifyList(user: TestUser, pTags: string[], options: { createdAt?: number; d?: string; extra?: string[][] } = {}): NostrEvent {
  return signEvent(
    {
      kind: PEOPLE_LIST,
      created_at: options.createdAt ?? 1_767_225_600,
      tags: [['d', options.d ?? 'notify'], ['title', 'Notify'], ...pTags.map((p) => ['p', p]), ...(options.extra ?? [])],
      content: '',
    },
    user.secret,
  );
}

describe('notify-list creators', () => {
  const alice = makeUser();

  test('tag order is kept; invalid tags, duplicates and the subscriber are skipped', () => {
    const event = notifyList(alice, [creator(2), 'not-hex', creator(1), creator(2), alice.pubkey, creator(3).toUpperCase(), creator(3)]);
    assert.deepEqual(collectNotifyCreators(event, 1000), { creators: [creator(2), creator(1), creator(3)], dropped: 0 });
  });

  test('duplicates do not use up the cap; the tail past it is dropped, not the list', () => {
    const event = notifyList(alice, [creator(1), creator(1), creator(1), creator(2), creator(3), creator(4)]);
    assert.deepEqual(collectNotifyCreators(event, 2), { creators: [creator(1), creator(2)], dropped: 2 });
  });

  test('only p tags count', () => {
    const event = notifyList(alice, [], { extra: [['e', creator(9)], ['P', creator(8)], ['p']] });
    assert.deepEqual(collectNotifyCreators(event, 10), { creators: [], dropped: 0 });
  });
});

describe('notify-list handler', () => {
  let store: StorePort;
  let clock: ManualClock;
  let deps: NotifyListDeps;
  let logLines: Array<Record<string, unknown>>;
  const alice = makeUser();

  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 3, 1));
    store = await openSqliteStore({ path: ':memory:', clock });
    logLines = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logLines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    deps = { store, maxCreators: 2, logger: createLogger({ level: 'debug', destination }), metrics: new Metrics() };
  });
  afterEach(() => store.close());

  test('a list over the cap is applied up to the cap, with a warning', async () => {
    assert.equal(await handleNotifyList(deps, notifyList(alice, [creator(1), creator(2), creator(3)])), 'applied');
    assert.deepEqual((await store.notifySubscriptions(alice.pubkey)).sort(), [creator(1), creator(2)]);
    assert.ok(
      logLines.some((l) => l.level === 40 && l.msg === 'Notify list exceeds the creator cap; ignoring the remainder' && l.dropped === 1),
    );
  });

  test('an older list is reported stale and counted', async () => {
    await handleNotifyList(deps, notifyList(alice, [creator(1)], { createdAt: 2000 }));
    assert.equal(await handleNotifyList(deps, notifyList(alice, [creator(2)], { createdAt: 1999 })), 'stale');
    assert.deepEqual(await store.notifySubscriptions(alice.pubkey), [creator(1)]);
    assert.match(await deps.metrics.render(), /push_notify_lists_total\{outcome="stale"\} 1/);
  });

  describe('routing', () => {
    const routerDeps = (): RouterDeps => ({
      store,
      decryptor: { decrypt: async () => null } as unknown as RouterDeps['decryptor'],
      servicePubkey: makeUser().pubkey,
      processedEventTtlSecs: 604_800,
      clock,
      logger: createLogger({ level: 'silent' }),
      metrics: new Metrics(),
      handleNotifyList: (event) => handleNotifyList(deps, event).then(() => undefined),
    });
    const envelope = (event: NostrEvent, context: 'live' | 'historical' = 'historical') => ({
      event,
      context,
      relay: 'ws://r',
      receivedAtMs: clock.nowMs(),
    });

    test('a 90-day-old list is applied, historical or live, without a p tag to the service and without an event claim', async () => {
      const nowSecs = Math.floor(clock.nowMs() / 1000);
      const old = notifyList(alice, [creator(1)], { createdAt: nowSecs - 90 * DAY_SECS });
      assert.deepEqual(await routeInbound(routerDeps(), envelope(old)), { route: 'notify_list' });
      assert.equal(await store.isNotifyWatcher(creator(1), alice.pubkey), true);
      assert.equal(await store.claimEvent(old.id, 60), true, 'no event claim was taken');
      const live = notifyList(alice, [], { createdAt: nowSecs });
      assert.deepEqual(await routeInbound(routerDeps(), envelope(live, 'live')), { route: 'notify_list' });
      assert.equal(await store.isNotifyWatcher(creator(1), alice.pubkey), false);
    });

    test('a kind 30000 whose d is not exactly notify is ignored', async () => {
      for (const d of ['mute', 'Notify', 'notify ', '']) {
        assert.deepEqual(
          await routeInbound(routerDeps(), envelope(notifyList(alice, [creator(1)], { d, createdAt: Math.floor(clock.nowMs() / 1000) }))),
          { route: 'ignored' },
          `d=${JSON.stringify(d)}`,
        );
      }
      assert.deepEqual(await store.notifySubscriptions(alice.pubkey), []);
    });
  });
});
