/**
 * bench/user-relays: the listener's user relays (issue 36) at scale. N users with devices, each with
 * a kind 10002 naming R of M local relays (real @nostr-relay relays on loopback), in a real SQLite
 * store; the listener with user relays on (loopback admitted), its sink counting events.
 *
 * Prints:
 * - connections opened (must be M: one per relay, whatever N) and REQs sent (must be chunks:
 *   about M × ceil(users per relay / max_pubkeys_per_filter), never N);
 * - the time from start to every relay holding its chunked filters;
 * - the time from a changed 10002 (a user moved to another relay, in the store) to the REQ naming
 *   them on the new relay, p50/p99 over `--changes` changes spread over one refresh period;
 * - events/s heard: E pre-signed likes, each tagging a user on the relay it is published to;
 * - resident memory of the process (relays included: they run in this process);
 * - the store time the listener's refreshes took while the changes ran (every user relay read of
 *   the listener timed), and how many full coverage reads it made.
 *
 * `--store redis` runs on a private redis-server (test/support) instead of SQLite in memory.
 *
 *   node --import tsx bench/user-relays/run.ts [--users 10000] [--relays 20] [--per-user 2]
 *     [--events 2000] [--changes 50] [--refresh-secs 5] [--max-pubkeys 250] [--store sqlite|redis]
 */
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { createEventVerifier, type NostrEvent } from '../../src/nostr/event.ts';
import { generateSecretKey, publicKeyOf, signEvent } from '../../src/nostr/keys.ts';
import { REACTION } from '../../src/nostr/kinds.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createListener } from '../../src/listener/index.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import type { StorePort } from '../../src/store/port.ts';
import { startTestRelay, type TestRelay } from '../../test/support/relay.ts';
import { startRedisServer, type PrivateRedisServer } from '../../test/support/redis-server.ts';
import { runUnderServerNodeFlags } from '../support/server-node-flags.ts';

runUnderServerNodeFlags();
const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '10000' },
    relays: { type: 'string', default: '20' },
    'per-user': { type: 'string', default: '2' },
    events: { type: 'string', default: '2000' },
    changes: { type: 'string', default: '50' },
    'refresh-secs': { type: 'string', default: '5' },
    'max-pubkeys': { type: 'string', default: '250' },
    store: { type: 'string', default: 'sqlite' },
  },
});
const USERS = Number(values.users);
const RELAYS = Number(values.relays);
const PER_USER = Number(values['per-user']);
const EVENTS = Number(values.events);
const CHANGES = Number(values.changes);
const REFRESH_MS = Number(values['refresh-secs']) * 1000;
const MAX_PUBKEYS = Number(values['max-pubkeys']);

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

async function waitUntil(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what} not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Sends events to a relay over one socket without waiting for each OK; resolves when every OK came back. */
async function blast(url: string, events: NostrEvent[]): Promise<void> {
  if (events.length === 0) return;
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  let oks = 0;
  const done = new Promise<void>((resolve) =>
    socket.on('message', (data: Buffer) => {
      if ((JSON.parse(data.toString()) as unknown[])[0] === 'OK' && ++oks === events.length) resolve();
    }),
  );
  for (const event of events) socket.send(JSON.stringify(['EVENT', event]));
  await done;
  socket.close();
}

const pubkeysOf = (request: unknown[]): string[] => request.slice(1).flatMap((filter) => (filter as { '#p'?: string[] })['#p'] ?? []);

async function main(): Promise<void> {
  console.log(
    `store ${values.store}, users ${USERS}, relays ${RELAYS}, relays per user ${PER_USER}, max pubkeys per filter ${MAX_PUBKEYS}, refresh ${REFRESH_MS} ms`,
  );
  const relays: TestRelay[] = await Promise.all(Array.from({ length: RELAYS }, () => startTestRelay()));
  const configured = await startTestRelay();
  const redis: PrivateRedisServer | null = values.store === 'redis' ? await startRedisServer() : null;
  const store: StorePort = redis
    ? await openRedisStore({ url: redis.url, logger: createLogger({ level: 'warn' }) })
    : await openSqliteStore({ path: ':memory:', logger: createLogger({ level: 'warn' }) });
  // The listener's reads of user relays, timed: what its refreshes cost the store.
  const listenerReads = { ms: 0, fullReads: 0 };
  const timedMethods = new Set(['userRelayCoverage', 'userRelayChangesSince', 'getUserRelayLists', 'readRecipients']);
  const listenerStore = new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof property !== 'string' || !timedMethods.has(property) || typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const started = performance.now();
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } finally {
          listenerReads.ms += performance.now() - started;
          if (property === 'userRelayCoverage') listenerReads.fullReads++;
        }
      };
    },
  });
  const users = Array.from({ length: USERS }, (_, i) => ({ pubkey: publicKeyOf(generateSecretKey()), home: i % RELAYS }));
  const relaysOf = (home: number): string[] => Array.from({ length: PER_USER }, (_, k) => relays[(home + k) % RELAYS]?.url ?? '');
  const seedStarted = Date.now();
  for (const [i, user] of users.entries()) {
    await store.registerToken(user.pubkey, { token: `bench-${i}`, transport: 'fcm' });
    await store.putUserRelayList(user.pubkey, { source: 'nip65', eventId: '00'.repeat(32), createdAt: 1, relays: relaysOf(user.home) });
  }
  console.log(`seeded ${USERS} users in ${Date.now() - seedStarted} ms`);
  const coverageStarted = performance.now();
  await store.userRelayCoverage();
  console.log(
    `one full coverage read (at start and every 10 min; a refresh reads only the changes): ${(performance.now() - coverageStarted).toFixed(1)} ms`,
  );

  let heard = 0;
  const metrics = new Metrics();
  const rssBefore = process.memoryUsage().rss;
  const listener = createListener({
    relays: [configured.url],
    servicePubkey: publicKeyOf(generateSecretKey()),
    serviceSecretKeyHex: generateSecretKey(),
    liveKinds: [REACTION],
    verifier: await createEventVerifier(),
    store,
    logger: createLogger({ level: 'warn' }),
    metrics,
    sink: async () => {
      heard++;
    },
    userRelays: {
      store: listenerStore,
      kinds: [REACTION],
      giftWraps: false,
      maxConnections: 200,
      maxPubkeysPerFilter: MAX_PUBKEYS,
      refreshMs: REFRESH_MS,
      policy: { allowLoopback: true },
    },
  });

  const started = Date.now();
  await listener.start();
  const perRelay = USERS * (PER_USER / RELAYS);
  const expectedReqs = RELAYS * Math.ceil(perRelay / MAX_PUBKEYS);
  const reqCount = (): number => relays.reduce((total, relay) => total + relay.requests().length, 0);
  await waitUntil(() => reqCount() >= expectedReqs, 120_000, 'every chunk subscribed');
  const subscribedMs = Date.now() - started;
  const connections = relays.reduce((total, relay) => total + relay.connectionCount(), 0);
  console.log(
    `subscribed: ${connections} connections, ${reqCount()} REQs (expected ${expectedReqs} chunks for ${USERS} users) in ${subscribedMs} ms`,
  );
  console.log(
    `resident memory: ${mib(process.memoryUsage().rss)} (${mib(process.memoryUsage().rss - rssBefore)} more than before the listener)`,
  );

  // The seeding is in the store's change log too (10,000 changes in its last seconds): the first
  // refresh after start meets that burst and reads the whole coverage again. The changes below
  // measure the steady state after it.
  await new Promise((resolve) => setTimeout(resolve, REFRESH_MS * 1.5));
  // Changed 10002s: a user moves to a relay they were not on; spread over one refresh period.
  const latencies: number[] = [];
  const readsBefore = { ...listenerReads };
  const changesStarted = Date.now();
  await Promise.all(
    users.slice(0, CHANGES).map(async (user, i) => {
      await new Promise((resolve) => setTimeout(resolve, (i * REFRESH_MS) / CHANGES));
      const target = relays[(user.home + PER_USER) % RELAYS];
      if (!target) return;
      const before = target.requests().length;
      const changedAt = Date.now();
      await store.putUserRelayList(user.pubkey, { source: 'nip65', eventId: '00'.repeat(32), createdAt: 2, relays: [target.url] });
      await waitUntil(
        () =>
          target
            .requests()
            .slice(before)
            .some((request) => pubkeysOf(request).includes(user.pubkey)),
        120_000,
        'moved subscription',
      );
      latencies.push(Date.now() - changedAt);
    }),
  );
  latencies.sort((a, b) => a - b);
  const changesMs = Date.now() - changesStarted;
  console.log(
    `listener's store reads while the changes ran: ${(listenerReads.ms - readsBefore.ms).toFixed(0)} ms in ${changesMs} ms (${(
      ((listenerReads.ms - readsBefore.ms) * 100) /
      changesMs
    ).toFixed(1)} % of the time), ${listenerReads.fullReads - readsBefore.fullReads} full coverage reads`,
  );
  console.log(
    `changed 10002 → new subscription: p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms, max ${latencies.at(-1)} ms over ${latencies.length} changes`,
  );

  // Events heard: likes tagging users still on their home relay (those not moved above).
  const liker = generateSecretKey();
  const now = Math.floor(Date.now() / 1000);
  const byRelay = new Map<number, NostrEvent[]>();
  for (let i = 0; i < EVENTS; i++) {
    const user = users[CHANGES + (i % (USERS - CHANGES))];
    if (!user) continue;
    const event = signEvent(
      {
        kind: REACTION,
        created_at: now,
        tags: [
          ['p', user.pubkey],
          ['e', '11'.repeat(32)],
        ],
        content: `+${i}`,
      },
      liker,
    );
    byRelay.set(user.home, [...(byRelay.get(user.home) ?? []), event]);
  }
  const heardBefore = heard;
  const eventsStarted = Date.now();
  await Promise.all([...byRelay].map(([home, events]) => blast(relays[home]?.url ?? '', events)));
  await waitUntil(() => heard - heardBefore >= EVENTS, 120_000, 'every event heard');
  const eventsMs = Date.now() - eventsStarted;
  console.log(
    `events heard: ${heard - heardBefore} of ${EVENTS} in ${eventsMs} ms = ${Math.round((EVENTS * 1000) / eventsMs)} events/s (publishing included)`,
  );
  const summary = listener.userRelays();
  console.log(
    `summary: watched ${summary?.watched}, connected ${summary?.connected}, dropped ${summary?.dropped}, REQs ${summary?.requestsSent}`,
  );

  await listener.stop();
  await store.close();
  await redis?.stop();
  await Promise.all([...relays, configured].map((relay) => relay.stop()));
}

await main();
