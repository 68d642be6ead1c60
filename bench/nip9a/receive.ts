/**
 * bench/nip9a receiving mode: NIP-9a relays POSTing to our users' callback URLs, sustained, into
 * FCM pushes (issue 12: 2,000 callbacks/s). The real binary (`nostr-push serve`, roles
 * `api,engine,delivery,scheduler`) in its own process, the FCM fake in another (20 ms answer
 * latency), and this process playing the relays over keep-alive HTTP/1.1: pre-signed likes with the
 * event included (3 in 4) and id-only callbacks (1 in 4), each for a user of its own callback URL.
 *
 * Prints callbacks/s answered and pushes/s at FCM, p50/p99 of the callback's answer and from the
 * POST to the FCM request, the CPU the service spent per callback, and a verdict: every callback
 * answered 202, every expected (event, token) pushed exactly once, nothing else pushed.
 *
 *   node --import tsx bench/nip9a/receive.ts [--users 10000] [--callbacks 6000] [--rate 2000] [--warmup 2] [--store sqlite|redis|both] [--latency 20] [--connections 64]
 *
 * --limits on,off,on,off (default on) runs each store once per entry, in that order, with the
 * per-client rate limits on (the defaults: per callback owner among them) or off
 * (`rate_limits.enabled: false`): the pairs of issue 35 (docs/benchmarks.md). Each run seeds a
 * fresh store with its own callback URLs, so no receipt of an earlier run is a duplicate.
 *
 * --side-by-side N runs N pairs instead, each pair's two services at once (limits on and off, each
 * with its own store, Redis server and FCM fake, the callbacks of both offered by this process in
 * the same ticks): both settings meet the same host at the same moment, so their p99s compare even
 * on a host whose slow seconds come and go (a sequential pair's p99s moved 5–10× with the host).
 * `--rate` is each service's rate.
 *
 * The seeding (tokens, callback URLs) writes straight into the store: creating URLs over NIP-98 is
 * not what is measured.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { finalizeEvent, generateSecretKey, getPublicKey } from 'nostr-tools/wasm';
import { openStore } from '../../src/store/open.ts';
import type { StoreLocation } from '../../src/config/load.ts';
import { defaultConfig } from '../../src/config/defaults.ts';
import { REACTION } from '../../src/nostr/kinds.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { startRedisServer } from '../../test/support/redis-server.ts';
import { freePort, startServiceProcess } from '../../test/support/service-process.ts';
import { serviceProfileNodeArgs } from '../support/cpu-profile.ts';
import { hostSpeedProbeMs } from '../support/host-speed.ts';
import { startFcmFakeProcess } from '../support/fcm-fake-client.ts';
import { useWasmSigning } from '../support/wasm-signing.ts';
import { processCpuMs, threadCpuMs, threadCpuPerItem } from '../support/proc-stats.ts';

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '10000' },
    callbacks: { type: 'string', default: '6000' },
    rate: { type: 'string', default: '2000' },
    warmup: { type: 'string', default: '2' },
    store: { type: 'string', default: 'both' },
    latency: { type: 'string', default: '20' },
    connections: { type: 'string', default: '64' },
    limits: { type: 'string', default: 'on' },
    'side-by-side': { type: 'string', default: '0' },
  },
});
const LIMITS_ORDER = values.limits.split(',').map((entry) => entry.trim());
if (LIMITS_ORDER.some((entry) => entry !== 'on' && entry !== 'off')) {
  console.error(`--limits takes on and off, comma-separated (e.g. on,off,on,off), not ${values.limits}`);
  process.exit(2);
}
const SIDE_BY_SIDE_PAIRS = Number(values['side-by-side']);
if (!['sqlite', 'redis', 'both'].includes(values.store)) {
  console.error(`--store takes sqlite, redis or both, not ${values.store}`);
  process.exit(2);
}
const USERS = Number(values.users);
const CALLBACKS = Number(values.callbacks);
const RATE = Number(values.rate);
const WARMUP = Math.round(RATE * Number(values.warmup));
const CONNECTIONS = Number(values.connections);
const RELAY = 'wss://community.bench/';
const ACTORS = 100;
const TICK_MS = 10;
const SERVICE_KEY_HEX = randomBytes(32).toString('hex');

// Each like is pushed at once only while its recipient has budget (divine's token bucket and daily
// cap, `service.recipient_throttle_capacity` / `recipient_daily_cap`); past it the service defers
// likes to a digest by design, which this bench would count as missing pushes. So a run asks for
// enough users that nobody exceeds the default budget, instead of measuring the deferral.
const LIKES_PER_USER = mostLikesOfOneUser(USERS);
const defaultService = defaultConfig().service;
const LIKE_BUDGET_PER_USER = Math.min(defaultService.recipient_throttle_capacity, defaultService.recipient_daily_cap);
if (LIKES_PER_USER > LIKE_BUDGET_PER_USER) {
  console.error(
    `--users ${USERS} gives each user up to ${LIKES_PER_USER} likes, more than the ${LIKE_BUDGET_PER_USER} a recipient is pushed at once by default; ` +
      `use --users ${fewestUsersWithinBudget()} or more`,
  );
  process.exit(2);
}

/** The user of callback `i` (spread over every user), and whether it carries a like (3 in 4; the 4th is id-only). */
function userOfCallback(i: number, users = USERS): number {
  return (i * 7919) % users;
}
function callbackCarriesLike(i: number): boolean {
  return i % 4 !== 3;
}

function mostLikesOfOneUser(users: number): number {
  const likes = new Uint32Array(users);
  for (let i = 0; i < WARMUP + CALLBACKS; i++) {
    const user = userOfCallback(i, users);
    if (callbackCarriesLike(i)) likes[user] = (likes[user] ?? 0) + 1;
  }
  return likes.reduce((most, n) => Math.max(most, n), 0);
}

function fewestUsersWithinBudget(): number {
  let users = Math.ceil(((WARMUP + CALLBACKS) * 3) / 4 / LIKE_BUDGET_PER_USER);
  while (mostLikesOfOneUser(users) > LIKE_BUDGET_PER_USER) users++;
  return users;
}

interface Post {
  /** Path of the user's callback URL. */
  path: string;
  body: string;
  eventId: string;
  token: string;
}

interface Prepared {
  users: Array<{ pubkey: string; secret: string }>;
  /** The likes' senders, whose profiles are cached at seeding as a running service has its regular senders'. */
  actorPubkeys: string[];
  posts: Post[];
}

function prepare(): Prepared {
  const users = Array.from({ length: USERS }, () => ({
    pubkey: getPublicKey(generateSecretKey()),
    secret: randomBytes(32).toString('base64url'),
  }));
  const actors = Array.from({ length: ACTORS }, () => generateSecretKey());
  const now = Math.floor(Date.now() / 1000);
  const posts: Post[] = [];
  for (let i = 0; i < WARMUP + CALLBACKS; i++) {
    const user = users[userOfCallback(i)] as Prepared['users'][number];
    let envelope: { id: string; relay: string; event?: unknown };
    if (!callbackCarriesLike(i)) {
      envelope = { id: randomBytes(32).toString('hex'), relay: RELAY };
    } else {
      // Every like is on a post of its own, so coalescing sends each at once (its group's first).
      const event = finalizeEvent(
        {
          kind: REACTION,
          created_at: now,
          content: '+',
          tags: [
            ['e', randomBytes(32).toString('hex')],
            ['p', user.pubkey],
          ],
        },
        actors[i % ACTORS] as Uint8Array,
      );
      envelope = { id: event.id, relay: RELAY, event };
    }
    posts.push({ path: `/nip9a/cb/${user.secret}`, body: JSON.stringify(envelope), eventId: envelope.id, token: `t-${user.pubkey}` });
  }
  return { users, actorPubkeys: actors.map((secret) => getPublicKey(secret)), posts };
}

async function seed(location: StoreLocation, prepared: Prepared): Promise<void> {
  const store = await openStore(location, { logger: createLogger({ level: 'warn' }) });
  const createdAtMs = Date.now();
  for (let i = 0; i < prepared.users.length; i += 500) {
    await Promise.all(
      prepared.users.slice(i, i + 500).flatMap(({ pubkey, secret }, j) => [
        store.registerToken(pubkey, { token: `t-${pubkey}`, transport: 'fcm' }),
        store.createNip9aCallback({
          id: `cb-${i + j}`,
          secretHash: createHash('sha256').update(secret).digest('hex'),
          secretHint: secret.slice(0, 4),
          owner: pubkey,
          relay: RELAY,
          createdAtMs,
        }),
      ]),
    );
  }
  // Without them every like would ask the (unreachable) relays for its sender's kind 0: a one-shot
  // relay query per event that measures the profile lookup, not the callback path.
  for (const [i, pubkey] of prepared.actorPubkeys.entries()) await store.cacheProfile({ pubkey, name: `actor${i}` }, 3600);
  await store.close();
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function summary(sorted: number[]): string {
  return `p50 ${percentile(sorted, 50)} ms, p99 ${percentile(sorted, 99)} ms, max ${sorted.at(-1)} ms`;
}

interface Answer {
  status: number;
  sentAt: number;
  answeredAt: number;
}

function post(agent: Agent, port: number, p: Post): Promise<Answer> {
  const sentAt = Date.now();
  return new Promise((resolve) => {
    const req = request(
      { agent, host: '127.0.0.1', port, path: p.path, method: 'POST', headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, sentAt, answeredAt: Date.now() }));
      },
    );
    // A failed request is an answer too (status 0): the verdict counts it, the run goes on.
    req.on('error', (err) => {
      console.error(`  callback POST failed: ${err.message}`);
      resolve({ status: 0, sentAt, answeredAt: Date.now() });
    });
    req.end(p.body);
  });
}

/** Offer `posts` at RATE per second; resolves with every answer once all are answered. */
async function offer(agent: Agent, port: number, posts: Post[], answers: Map<string, Answer>): Promise<number> {
  const started = Date.now();
  const inFlight: Array<Promise<void>> = [];
  const perTick = Math.max(1, Math.round((RATE * TICK_MS) / 1000));
  let next = 0;
  while (next < posts.length) {
    const due = Math.min(posts.length, Math.floor(((Date.now() - started) / 1000) * RATE) + perTick);
    for (; next < due; next++) {
      const p = posts[next] as Post;
      inFlight.push(post(agent, port, p).then((a) => void answers.set(p.eventId, a)));
    }
    await new Promise((r) => setTimeout(r, TICK_MS));
  }
  const offeredMs = Date.now() - started;
  await Promise.all(inFlight);
  return offeredMs;
}

async function runOne(
  label: string,
  storeUrl: string,
  location: StoreLocation,
  prepared: Prepared,
  dir: string,
  limitsOn: boolean,
  redisPid?: number,
  bothReady?: () => Promise<void>,
): Promise<void> {
  const fake = await startFcmFakeProcess(Number(values.latency), dir);
  await seed(location, prepared);
  const port = await freePort();
  const service = await startServiceProcess({
    nodeArgs: serviceProfileNodeArgs(),
    env: {
      NOSTR_PUSH__ROLES: 'api,engine,delivery,scheduler',
      NOSTR_PUSH__DATA_DIR: join(dir, `data-${label}`),
      NOSTR_PUSH__STORE__URL: storeUrl,
      NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: SERVICE_KEY_HEX,
      NOSTR_PUSH__NOSTR__RELAYS: 'ws://127.0.0.1:9',
      NOSTR_PUSH__SERVER__LISTEN_ADDR: `127.0.0.1:${port}`,
      NOSTR_PUSH__SERVER__PUBLIC_URL: `http://127.0.0.1:${port}`,
      NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: fake.credentialsPath,
      NOSTR_PUSH__FIREBASE__API_BASE_URL: fake.baseUrl,
      NOSTR_PUSH__FIREBASE__PROJECT_ID: 'fake-project',
      NOSTR_PUSH__CLEANUP__ENABLED: 'false',
      NOSTR_PUSH__LOG__LEVEL: 'warn',
      LOG_LEVEL: 'warn',
      NOSTR_PUSH__RATE_LIMITS__ENABLED: limitsOn ? 'true' : 'false',
    },
    // At warn the service never logs "http listening": wait for /health instead.
    waitForHttp: false,
  });
  try {
    await healthy(port);
    await bothReady?.();
    await measure(label, port, service.child.pid as number, fake, prepared, redisPid);
  } finally {
    await service.stop();
    await fake.stop();
  }
}

/** Poll /health until the service answers (its start includes loading the TypeScript source). */
async function healthy(port: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('the service did not answer /health within 60 s');
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function measure(
  label: string,
  port: number,
  servicePid: number,
  fake: Awaited<ReturnType<typeof startFcmFakeProcess>>,
  prepared: Prepared,
  redisPid?: number,
): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const answers = new Map<string, Answer>();
  const warmup = prepared.posts.slice(0, WARMUP);
  const measured = prepared.posts.slice(WARMUP);
  const probeBeforeMs = hostSpeedProbeMs();
  if (warmup.length > 0) await offer(agent, port, warmup, answers);
  const cpu0 = processCpuMs(servicePid);
  const threads0 = threadCpuMs(servicePid);
  // The rest of the machine over the same phase: whether the bench as a whole fits the cores.
  const others = { load: process.pid, 'FCM fake': fake.pid, ...(redisPid ? { 'redis-server': redisPid } : {}) };
  const others0 = Object.fromEntries(Object.entries(others).map(([name, pid]) => [name, processCpuMs(pid)]));
  const started = Date.now();
  const offeredMs = await offer(agent, port, measured, answers);

  // Drained once FCM has every expected push, or nothing new arrived for 30 s.
  const expected = new Set(prepared.posts.map((p) => `${p.eventId}:${p.token}`));
  let received: Array<[string, string, number]> = [];
  let lastCount = -1;
  let lastProgress = Date.now();
  for (;;) {
    received = (await fake.report()).received;
    if (received.length >= expected.size) break;
    if (received.length !== lastCount) [lastCount, lastProgress] = [received.length, Date.now()];
    else if (Date.now() - lastProgress > 30_000) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const cpuMs = processCpuMs(servicePid) - cpu0;
  const phaseMs = Date.now() - started;
  const othersCores = Object.entries(others).map(
    ([name, pid]) => `${name} ${((processCpuMs(pid) - (others0[name] ?? 0)) / phaseMs).toFixed(2)}`,
  );
  const threadsCpu = threadCpuPerItem(threads0, threadCpuMs(servicePid), measured.length);
  const { peakStreams } = await fake.report();
  agent.destroy();

  const measuredIds = new Set(measured.map((p) => p.eventId));
  const seen = new Map<string, number>();
  const toPush: number[] = [];
  let lastPushAt = started;
  for (const [eventId, token, at] of received) {
    const key = `${eventId}:${token}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
    const answer = answers.get(eventId);
    if (!answer || !measuredIds.has(eventId)) continue;
    toPush.push(at - answer.sentAt);
    lastPushAt = Math.max(lastPushAt, at);
  }
  const answerMs = measured.map((p) => answers.get(p.eventId)).map((a) => (a ? a.answeredAt - a.sentAt : NaN));
  const notAccepted = [...answers.values()].filter((a) => a.status !== 202).length;
  const missing = [...expected].filter((k) => !seen.has(k)).length;
  const duplicates = [...seen.values()].filter((n) => n > 1).length;
  const unexpected = [...seen.keys()].filter((k) => !expected.has(k)).length;
  toPush.sort((a, b) => a - b);
  answerMs.sort((a, b) => a - b);
  const lastAnswerAt = measured.reduce((latest, p) => Math.max(latest, answers.get(p.eventId)?.answeredAt ?? 0), 0);
  const answeredSecs = (lastAnswerAt - started) / 1000;
  const pushedSecs = (lastPushAt - started) / 1000;
  console.log(
    `nip9a receive ${label}: offered ${measured.length} callbacks at ${RATE}/s (${(measured.length / (offeredMs / 1000)).toFixed(0)}/s over ${(offeredMs / 1000).toFixed(1)} s); ` +
      `answered ${(measured.length / answeredSecs).toFixed(0)}/s, pushed ${(toPush.length / pushedSecs).toFixed(0)}/s; ` +
      `answer ${summary(answerMs)}; POST→FCM ${summary(toPush)}; peak HTTP/2 streams ${peakStreams}`,
  );
  console.log(
    `  service CPU per callback: ${((cpuMs * 1000) / measured.length).toFixed(0)} µs (warm-up before it: ${warmup.length} callbacks)`,
  );
  console.log(`  service threads, µs per callback: ${threadsCpu}`);
  console.log(
    `  cores busy over the ${(phaseMs / 1000).toFixed(1)} s from the first measured callback until every push was seen: service ${(cpuMs / phaseMs).toFixed(2)}, ${othersCores.join(', ')} (the machine has ${availableParallelism()})`,
  );
  console.log(
    `  host speed probe: ${probeBeforeMs.toFixed(0)} ms before, ${hostSpeedProbeMs().toFixed(0)} ms after (bench/support/host-speed.ts; lower is faster)`,
  );
  const ok = missing === 0 && duplicates === 0 && unexpected === 0 && notAccepted === 0;
  console.log(
    `  verdict: ${ok ? 'OK' : 'FAIL'} (${expected.size} expected pushes, ${missing} missing, ${duplicates} duplicated, ${unexpected} unexpected; ${notAccepted} callbacks not answered 202)`,
  );
  if (!ok) process.exitCode = 1;
}

await useWasmSigning();
console.log(`preparing ${USERS} users with a callback URL each, ${WARMUP + CALLBACKS} callbacks (${WARMUP} of them warm-up)…`);
const benchDir = mkdtempSync(join(tmpdir(), 'np-bench-nip9a-rx-'));
/** Resolves once `parties` callers have called it: the two services of a pair start measuring together. */
function barrier(parties: number): () => Promise<void> {
  let waiting = 0;
  let release: () => void = () => undefined;
  const all = new Promise<void>((resolve) => (release = resolve));
  return () => {
    if (++waiting === parties) release();
    return all;
  };
}

/** One store's run of each setting in `settings`, all at once (a side-by-side pair) or one alone. */
async function runAtOnce(store: 'sqlite' | 'redis', run: number, settings: readonly string[]): Promise<void> {
  const ready = settings.length > 1 ? barrier(settings.length) : undefined;
  await Promise.all(
    settings.map(async (limits) => {
      // Fresh users, URLs and events per run: the receipts of a run before would make these duplicates.
      const prepared = prepare();
      const label = `${store} limits ${limits} (${settings.length > 1 ? 'side by side, pair' : 'run'} ${run + 1})`;
      // Each its own folder: an FCM fake writes its credentials file there.
      const dir = mkdtempSync(join(benchDir, `${store}-${run}-${limits}-`));
      if (store === 'sqlite') {
        const path = join(dir, `bench-${run}-${limits}.sqlite`);
        await runOne(label, `sqlite:${path}`, { kind: 'sqlite', path }, prepared, dir, limits === 'on', undefined, ready);
        return;
      }
      const redis = await startRedisServer();
      try {
        await runOne(label, redis.url, { kind: 'redis', url: redis.url }, prepared, dir, limits === 'on', redis.pid, ready);
      } finally {
        await redis.stop();
      }
    }),
  );
}

const stores = values.store === 'both' ? (['sqlite', 'redis'] as const) : ([values.store as 'sqlite' | 'redis'] as const);
if (SIDE_BY_SIDE_PAIRS > 0) {
  for (let pair = 0; pair < SIDE_BY_SIDE_PAIRS; pair++) for (const store of stores) await runAtOnce(store, pair, ['on', 'off']);
} else {
  for (const [run, limits] of LIMITS_ORDER.entries()) for (const store of stores) await runAtOnce(store, run, [limits]);
}
rmSync(benchDir, { recursive: true, force: true });
