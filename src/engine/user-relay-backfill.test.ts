import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { createEventVerifier } from '../nostr/event.ts';
import { createLogger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import type { StorePort } from '../store/port.ts';
import { openSqliteStore } from '../store/sqlite/index.ts';
import type { RelayFilter } from './relay-query.ts';
import { backfillUserRelayLists } from './user-relay-backfill.ts';
import { RELAY_LIST_FETCH_BATCH, UserRelayListFetcher } from './user-relay-lists.ts';

const pubkey = (i: number): string => (i + 1).toString(16).padStart(64, '0');

describe("backfill of users' relay lists", () => {
  let store: StorePort;
  const logger = createLogger({ level: 'silent' });

  beforeEach(async () => {
    store = await openSqliteStore({ path: ':memory:' });
  });
  afterEach(() => store.close());

  test('asks for every user with a device and no list, a page at a time; the next walk asks nobody the relays answered for', async () => {
    const users = Array.from({ length: 130 }, (_, i) => pubkey(i));
    for (const [i, user] of users.entries()) {
      await store.registerToken(user, { token: `t-${i}`, transport: 'fcm' });
      if (i % 10 === 0) await store.putUserRelayList(user, { source: 'nip65', eventId: 'ab'.repeat(32), createdAt: 1, relays: [] });
    }
    const queries: RelayFilter[] = [];
    let inFlight = 0;
    let mostInFlight = 0;
    const fetcher = new UserRelayListFetcher({
      store,
      metrics: new Metrics(),
      logger,
      relays: ['wss://configured.example'],
      verifier: await createEventVerifier(),
      queryTimeoutMs: 1000,
      gatherMs: 60_000,
      // The relay answers completely and has no lists: each user is marked looked up.
      query: async (relays, filter, _timeoutMs, onRelayDone) => {
        mostInFlight = Math.max(mostInFlight, ++inFlight);
        queries.push(filter);
        await new Promise((resolve) => setImmediate(resolve));
        for (const relay of relays) onRelayDone?.(relay, 'eose');
        inFlight--;
        return [];
      },
    });
    const signal = new AbortController().signal;
    const asked = await backfillUserRelayLists({ store, fetcher, logger, pauseMs: 0 }, signal);
    const without = users.filter((_, i) => i % 10 !== 0);
    assert.equal(asked, without.length);
    assert.deepEqual(queries.flatMap((filter) => filter.authors ?? []).sort(), without);
    assert.ok(
      queries.every((filter) => (filter.authors?.length ?? 0) <= RELAY_LIST_FETCH_BATCH),
      'at most one page of authors a query',
    );
    assert.equal(mostInFlight, 1, 'one page in flight at a time');
    assert.equal(await backfillUserRelayLists({ store, fetcher, logger, pauseMs: 0 }, signal), 0);
    await fetcher.close();
  });
});
