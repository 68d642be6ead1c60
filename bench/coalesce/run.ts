/**
 * bench/coalesce: likes straight into the coalescing ingest (no relay, no signatures), then every
 * group flushed through the real summary flush onto the outbound queue, and the queue drained by
 * the delivery stage's handler to a recording transport, on each store adapter.
 *
 * Prints ingest operations per second and the summary count, with the verdict "exactly one
 * summary per (recipient, post, bucket) with the right distinct count" — exact on SQLite, within
 * the HyperLogLog's error on Redis (standard error 0.81 %; the bound is four of those).
 *
 *   node --import tsx bench/coalesce/run.ts [--likes 100000] [--posts 100] [--actors 50000] [--store sqlite|redis|both] [--in-flight 64] [--sqlite-file]
 *
 * `--sqlite-file` runs SQLite on a WAL file in a temporary directory instead of `:memory:`.
 *
 * Each post has its own owner (the recipient), so the recipient budget (20 tokens, 20 a day at
 * the defaults) covers its 3 immediates and 1 summary and the figures measure grouping alone.
 * The store clock is a manual clock held inside one bucket, then moved past the deadline.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultConfig } from '../../src/config/defaults.ts';
import { coalescePolicyFromConfig, flushSettingsFromConfig } from '../../src/engine/coalesce/policy.ts';
import { flushGroup, type FlushDeps } from '../../src/engine/coalesce/flush.ts';
import { storeOutboundQueue } from '../../src/engine/outbound-queue.ts';
import { drainOutbound } from '../../test/support/delivery-drain.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import type { StorePort } from '../../src/store/port.ts';
import type { CoalesceEvent, IngestResult } from '../../src/store/port-coalesce.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { RecordingTransport } from '../../test/support/recording-transport.ts';
import { startRedisServer } from '../../test/support/redis-server.ts';
import { runUnderServerNodeFlags } from '../support/server-node-flags.ts';

runUnderServerNodeFlags();
const { values } = parseArgs({
  options: {
    likes: { type: 'string', default: '100000' },
    posts: { type: 'string', default: '100' },
    actors: { type: 'string', default: '50000' },
    store: { type: 'string', default: 'both' },
    'in-flight': { type: 'string', default: '64' },
    'sqlite-file': { type: 'boolean', default: false },
  },
});
const LIKES = Number(values.likes);
const POSTS = Number(values.posts);
const ACTORS = Number(values.actors);
/** Ingests issued at once on Redis (one connection pipelines them); SQLite is synchronous anyway. */
const IN_FLIGHT = Number(values['in-flight']);
/** Four standard errors of Redis's HyperLogLog (1.04 / sqrt(16384)). */
const HLL_TOLERANCE = 4 * 0.0081;
const BUCKET_START_MS = Date.UTC(2026, 0, 1);

const DEFAULTS = defaultConfig();
const policy = coalescePolicyFromConfig(DEFAULTS.service);
const hex = (prefix: string, n: number): string => `${prefix}${n.toString(16).padStart(64 - prefix.length, '0')}`;

/** Deterministic likes: post i % POSTS, actor from a seeded generator (mulberry32). */
function makeLikes(): CoalesceEvent[] {
  let seed = 0x9e3779b9;
  const random = (): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const createdAt = Math.floor(BUCKET_START_MS / 1000);
  return Array.from({ length: LIKES }, (_, i) => {
    const post = i % POSTS;
    return {
      type: 'like',
      owner: hex('a0', post),
      target: `e:${hex('f0', post)}`,
      actor: hex('ac', Math.floor(random() * ACTORS)),
      eventId: hex('ee', i),
      eventKind: 7,
      createdAt,
      references: { referencedEventId: hex('f0', post) },
    };
  });
}

interface Verdict {
  ok: boolean;
  detail: string;
}

async function runOne(label: string, store: StorePort, clock: ManualClock, likes: CoalesceEvent[], exactCounts: boolean): Promise<void> {
  const results = new Array<IngestResult>(likes.length);
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(IN_FLIGHT, likes.length) }, async () => {
      while (next < likes.length) {
        const i = next++;
        results[i] = await store.ingestCoalesceEvent(likes[i] as CoalesceEvent, policy);
      }
    }),
  );
  const ingestMs = performance.now() - started;

  // The exact truth, from what ingest said about each like.
  const expected = new Map<string, Set<string>>();
  let immediates = 0;
  for (const [i, result] of results.entries()) {
    if (result.disposition === 'immediate') immediates++;
    else {
      const actors = expected.get(result.groupId) ?? new Set<string>();
      actors.add((likes[i] as CoalesceEvent).actor);
      expected.set(result.groupId, actors);
    }
  }

  const owners = new Set(likes.map((l) => l.owner));
  for (const owner of owners) await store.registerToken(owner, { token: `phone-${owner}`, transport: 'fcm' });
  clock.advance(policy.windowSecs * 1000);
  const transport = new RecordingTransport();
  const deps: FlushDeps = {
    store,
    outbound: storeOutboundQueue(store, () => undefined),
    processedEventTtlSecs: DEFAULTS.service.processed_event_ttl_secs,
    profiles: { displayName: async () => null },
    policy,
    settings: flushSettingsFromConfig(DEFAULTS.service),
    allowedPubkeys: new Set(),
    defaultPreferenceKinds: DEFAULTS.notification.default_preferences.kinds,
    logger: createLogger({ level: 'silent' }),
    metrics: new Metrics(),
  };
  const summaryCounts = new Map<string, number>();
  const flushStarted = performance.now();
  for (;;) {
    const { claim } = await store.claimDueCoalesceGroup(deps.settings.leaseSecs);
    if (!claim) break;
    const group = await store.readCoalesceGroup(claim.groupId);
    const outcome = await flushGroup(deps, claim, new AbortController().signal);
    if (outcome.kind !== 'queued') throw new Error(`${claim.groupId}: ${JSON.stringify(outcome)}`);
    summaryCounts.set(claim.groupId, (summaryCounts.get(claim.groupId) ?? 0) + 1);
    if (group) summaryCounts.set(`${claim.groupId}#count`, group.distinctActors);
  }
  const delivered = await drainOutbound(store, [transport], deps.metrics);
  if (delivered.some((d) => d.outcome.kind !== 'done')) throw new Error('a summary was not delivered at the first attempt');
  const flushMs = performance.now() - flushStarted;

  const verdict = judge(expected, summaryCounts, transport, exactCounts);
  const rate = likes.length / (ingestMs / 1000);
  console.log(
    `coalesce ${label}: ingest ${likes.length} in ${(ingestMs / 1000).toFixed(2)} s = ${rate.toFixed(0)} ops/s ` +
      `(${immediates} immediate, ${likes.length - immediates} buffered); ` +
      `${transport.sent.length} summaries for ${expected.size} groups, flushed in ${(flushMs / 1000).toFixed(2)} s; ` +
      `verdict: ${verdict.ok ? 'OK' : 'FAIL'} (${verdict.detail})`,
  );
  if (!verdict.ok) process.exitCode = 1;
}

function judge(expected: Map<string, Set<string>>, flushed: Map<string, number>, transport: RecordingTransport, exact: boolean): Verdict {
  const problems: string[] = [];
  let worstError = 0;
  for (const [groupId, actors] of expected) {
    const summaries = flushed.get(groupId) ?? 0;
    if (summaries !== 1) problems.push(`${groupId}: ${summaries} summaries`);
    const counted = flushed.get(`${groupId}#count`) ?? 0;
    const error = Math.abs(counted - actors.size) / actors.size;
    worstError = Math.max(worstError, error);
    if (exact ? counted !== actors.size : error > HLL_TOLERANCE) problems.push(`${groupId}: counted ${counted}, exactly ${actors.size}`);
  }
  if (transport.sent.length !== expected.size) problems.push(`${transport.sent.length} sends for ${expected.size} groups`);
  const bodies = transport.sent.filter((s) => / and \d+ others liked your post$/.test(s.message.data.body ?? '')).length;
  if (bodies !== transport.sent.length) problems.push(`${transport.sent.length - bodies} summaries without the plural copy`);
  const detail =
    problems.length > 0
      ? problems.slice(0, 5).join('; ')
      : `exactly one summary per (recipient, post, bucket), distinct counts ${exact ? 'exact' : `within ${(worstError * 100).toFixed(2)} % (bound ${(HLL_TOLERANCE * 100).toFixed(2)} %)`}`;
  return { ok: problems.length === 0, detail };
}

console.log(`preparing ${LIKES} likes on ${POSTS} posts from ${ACTORS} actors…`);
const likes = makeLikes();

if (values.store === 'sqlite' || values.store === 'both') {
  const clock = new ManualClock(BUCKET_START_MS);
  const dir = values['sqlite-file'] ? mkdtempSync(join(tmpdir(), 'np-bench-coalesce-')) : null;
  const path = dir ? join(dir, 'bench.sqlite') : ':memory:';
  const store = await openSqliteStore({ path, clock, logger: createLogger({ level: 'silent' }) });
  await runOne(`sqlite (${dir ? 'WAL file' : ':memory:'})`, store, clock, likes, true);
  await store.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
}
if (values.store === 'redis' || values.store === 'both') {
  const redis = await startRedisServer();
  const clock = new ManualClock(BUCKET_START_MS);
  const store = await openRedisStore({ url: redis.url, clock, logger: createLogger({ level: 'silent' }) });
  await runOne(`redis (private redis-server, ${IN_FLIGHT} in flight)`, store, clock, likes, false);
  await store.close();
  await redis.stop();
}
