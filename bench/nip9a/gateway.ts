/**
 * bench/nip9a/gateway: the NIP-9a gateway (role `gateway`, started by `startService` from a
 * configuration, as `nostr-push serve` wires it) watching 50 relays for 20,000 registrations of
 * mixed filters (60% `{kinds:[1,1111],#p}`, 20% `{kinds:[7],#e}`, 20% `{kinds:[1],#t}` with an
 * `ignore` of `#t:spam`), offered pre-signed events at a fixed rate by bench/nip9a/load.ts (bare
 * relays and the loopback callback receiver, in their own process). About 10% of events match no
 * registration and 5% are suppressed by an ignore filter.
 *
 * Prints events offered/s, events matched/s (the gateway's own counter), callback POSTs/s, p50/p99
 * from a relay writing the event to its POST arriving, deliveries dropped by the pending bound, and
 * a verdict: every expected (registration, event) POSTed exactly once, nothing unexpected.
 *
 *   node --import tsx bench/nip9a/gateway.ts [--registrations 20000] [--relays 50] [--rate 5000] [--seconds 5] [--warmup-seconds 2] [--store sqlite|redis|both]
 *     [--post-threads N] (nip9a.post_threads, the service's default when not given; 0 POSTs on the main thread)
 *   BENCH_TRACE=1 prints the queue and the counters every half second; BENCH_PROFILE=1 the gateway's hottest functions.
 *
 * Build first (`npm run build`): the gateway then runs the compiled dist/, as the binary does; with
 * no current build it runs the source through tsx, said on stderr, at a few percent more CPU.
 */
import { fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { monitorEventLoopDelay, performance, PerformanceObserver, type EventLoopUtilization } from 'node:perf_hooks';
import { finalizeEvent, generateSecretKey } from 'nostr-tools/wasm';
import { loadConfig, resolveStoreLocation } from '../../src/config/load.ts';
import { openStore } from '../../src/store/open.ts';
import type { startService as StartService } from '../../src/service.ts';
import { chooseEntry, ROOT } from '../../bin/entry.js';
import { startRedisServer } from '../../test/support/redis-server.ts';
import { useWasmSigning } from '../support/wasm-signing.ts';
import { printProfile, profile } from '../support/cpu-profile.ts';
import { threadCpuMs, threadCpuPerItem } from '../support/proc-stats.ts';
import { hostSpeedProbeMs } from '../support/host-speed.ts';
import { runUnderServerNodeFlags } from '../support/server-node-flags.ts';

runUnderServerNodeFlags();
const { values } = parseArgs({
  options: {
    registrations: { type: 'string', default: '20000' },
    relays: { type: 'string', default: '50' },
    rate: { type: 'string', default: '5000' },
    seconds: { type: 'string', default: '5' },
    'warmup-seconds': { type: 'string', default: '2' },
    store: { type: 'string', default: 'both' },
    'post-threads': { type: 'string' },
  },
});
const REGISTRATIONS = Number(values.registrations);
const RELAYS = Number(values.relays);
const RATE = Number(values.rate);
const EVENTS = Math.round(RATE * Number(values.seconds));
const WARMUP_EVENTS = Math.round(RATE * Number(values['warmup-seconds']));
const PER_AUTHOR = 4;
const POSTERS = 20;

const hash = (s: string): string => createHash('sha256').update(s).digest('hex');

interface Ready {
  relayPorts: number[];
  receiverPort: number;
}
interface Done {
  sent: number;
  sendSecs: number;
  posts: number;
  postSecs: number;
  /** Wall clock (ms) of the last POST received. */
  lastPostAt: number;
  p50: number;
  p99: number;
  max: number;
  delivered: string[];
  cpuSecs: number;
  wallSecs: number;
}

/** The events of one phase (warm-up or measured), per relay, and the (registration, event) pairs they must POST. */
interface Phase {
  frames: string[][];
  expected: Set<string>;
}

interface Plan {
  registrations: Array<{ json: string; pubkey: string; d: string; id: string; createdAt: number; relay: string }>;
  warmup: Phase;
  measured: Phase;
}

function plan(ready: Ready): Plan {
  const now = Math.floor(Date.now() / 1000);
  const relayUrls = ready.relayPorts.map((port) => `ws://127.0.0.1:${port}/`);
  const registrations: Plan['registrations'] = [];
  let author = generateSecretKey();
  for (let r = 0; r < REGISTRATIONS; r += 1) {
    if (r % PER_AUTHOR === 0) author = generateSecretKey();
    const type = r % 10;
    const filter =
      type < 6
        ? { kinds: [1, 1111], '#p': [hash(`p${r}`)] }
        : type < 8
          ? { kinds: [7], '#e': [hash(`e${r}`)] }
          : { kinds: [1], '#t': [`topic${r}`] };
    const relay = relayUrls[r % RELAYS] as string;
    const event = finalizeEvent(
      {
        kind: 30390,
        created_at: now - 10,
        content: '',
        tags: [
          ['d', `reg${r}`],
          ['relay', relay],
          ['filter', JSON.stringify(filter)],
          ...(type >= 8 ? [['ignore', '{"#t":["spam"]}']] : []),
          ['callback', `http://127.0.0.1:${ready.receiverPort}/cb/${r}`],
        ],
      },
      author,
    );
    registrations.push({
      json: JSON.stringify(event),
      pubkey: event.pubkey,
      d: `reg${r}`,
      id: event.id,
      createdAt: event.created_at,
      relay,
    });
  }
  const posters = Array.from({ length: POSTERS }, () => generateSecretKey());
  return {
    registrations,
    warmup: events(relayUrls, posters, now, 0, WARMUP_EVENTS),
    measured: events(relayUrls, posters, now, WARMUP_EVENTS, EVENTS),
  };
}

function events(relayUrls: string[], posters: Uint8Array[], now: number, first: number, count: number): Phase {
  const frames: string[][] = relayUrls.map(() => []);
  const expected = new Set<string>();
  for (let i = first; i < first + count; i += 1) {
    const r = Math.floor(Math.random() * REGISTRATIONS);
    const type = r % 10;
    const roll = Math.random();
    let tags: string[][];
    let kind = 1;
    let wanted = true;
    if (roll < 0.1) {
      tags = [['p', hash(`nobody${i}`)]];
      wanted = false;
    } else if (type < 6) tags = [['p', hash(`p${r}`)]];
    else if (type < 8) {
      kind = 7;
      tags = [['e', hash(`e${r}`)]];
    } else {
      tags = [['t', `topic${r}`]];
      if (roll > 0.75) {
        tags.push(['t', 'spam']);
        wanted = false;
      }
    }
    const event = finalizeEvent({ kind, created_at: now, content: `bench ${i}`, tags }, posters[i % POSTERS] as Uint8Array);
    (frames[r % RELAYS] as string[]).push(JSON.stringify(event));
    if (wanted) expected.add(`${r}:${event.id}`);
  }
  return { frames, expected };
}

async function run(label: string, storeUrl: string, dir: string): Promise<void> {
  const child = fork(fileURLToPath(new URL('./load.ts', import.meta.url)), [String(RELAYS)], { execArgv: ['--import', 'tsx'] });
  const ready = await new Promise<Ready>((resolve) => child.once('message', (m) => resolve(m as Ready)));
  const t0 = Date.now();
  const p = plan(ready);
  console.log(
    `${label}: signed ${p.registrations.length} registrations and ${WARMUP_EVENTS} + ${EVENTS} events in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  );
  const { config } = loadConfig({
    env: {
      NOSTR_PUSH__ROLES: 'gateway',
      NOSTR_PUSH__DATA_DIR: join(dir, `data-${label}`),
      NOSTR_PUSH__STORE__URL: storeUrl,
      NOSTR_PUSH__NOSTR__RELAYS: 'ws://127.0.0.1:9',
      NOSTR_PUSH__NIP9A__ALLOW_LOOPBACK_CALLBACKS: 'I_UNDERSTAND',
      NOSTR_PUSH__NIP9A__MAX_WATCHED_RELAYS: String(RELAYS),
      NOSTR_PUSH__QUEUE__POLL_MILLIS: '50',
      ...(values['post-threads'] !== undefined ? { NOSTR_PUSH__NIP9A__POST_THREADS: values['post-threads'] } : {}),
      ...(process.env.NIP9A_CONCURRENCY ? { NOSTR_PUSH__NIP9A__DELIVERY_CONCURRENCY: process.env.NIP9A_CONCURRENCY } : {}),
      NOSTR_PUSH__LOG__LEVEL: 'warn',
    },
  });
  // Stored before the service starts, so the gateway loads them all at once and subscribes with every filter.
  const t1 = Date.now();
  const seeding = await openStore(resolveStoreLocation(config));
  const limits = {
    perAuthor: config.nip9a.max_registrations_per_author,
    perAuthorPerRelay: config.nip9a.max_registrations_per_author_per_relay,
    maxWatchedRelays: config.nip9a.max_watched_relays,
  };
  for (let i = 0; i < p.registrations.length; i += 500) {
    const results = await Promise.all(
      p.registrations
        .slice(i, i + 500)
        .map((r) =>
          seeding.putNip9aRegistration(
            { pubkey: r.pubkey, d: r.d, eventId: r.id, createdAt: r.createdAt, relays: [r.relay], eventJson: r.json },
            limits,
          ),
        ),
    );
    if (results.some((x) => x.outcome !== 'stored'))
      throw new Error(`a registration was not stored: ${JSON.stringify(results.find((x) => x.outcome !== 'stored'))}`);
  }
  await seeding.close();
  console.log(`${label}: stored ${p.registrations.length} registrations in ${((Date.now() - t1) / 1000).toFixed(1)} s`);
  const service = await startService(config);
  const counters = async (): Promise<{ matched: number; dropped: number }> => {
    const text = await service.metrics.registry.metrics();
    const counter = (name: string): number =>
      [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+(?:\\.\\d+)?)$`, 'gm'))].reduce((sum, m) => sum + Number(m[1]), 0);
    return { matched: counter('push_nip9a_matched_total'), dropped: counter('push_nip9a_dropped_total') };
  };
  const awaitMessage = <T>(type: string): Promise<T> =>
    new Promise<T>((resolve) => {
      const onMessage = (m: { type: string }): void => {
        if (m.type !== type) return;
        child.off('message', onMessage);
        resolve(m as T);
      };
      child.on('message', onMessage);
    });
  // The frames cross the pipe now: serializing megabytes of them at a phase's start stalled this
  // process (where the gateway runs) for a third of a second and was billed to it.
  for (const [name, phase] of [
    ['warmup', p.warmup],
    ['measured', p.measured],
  ] as const) {
    const stored = awaitMessage('stored');
    child.send({ type: 'frames', phase: name, frames: phase.frames });
    await stored;
  }
  const runPhase = (name: 'warmup' | 'measured', phase: Phase): Promise<Done> => {
    const done = awaitMessage<Done>('done');
    child.send({ type: 'load', phase: name, rate: RATE, expected: phase.expected.size });
    return done;
  };
  const verdict = (phase: Phase, done: Done, dropped: number): string => {
    const deliveredSet = new Set(done.delivered);
    const duplicates = done.delivered.length - deliveredSet.size;
    const missing = [...phase.expected].filter((k) => !deliveredSet.has(k)).length;
    const unexpected = [...deliveredSet].filter((k) => !phase.expected.has(k)).length;
    const ok = duplicates === 0 && unexpected === 0 && missing === dropped;
    return (
      `verdict ${ok ? 'OK' : 'WRONG'}: expected ${phase.expected.size}, delivered ${deliveredSet.size}, duplicates ${duplicates}, ` +
      `unexpected ${unexpected}, missing ${missing} (all of them dropped by the bound: ${missing === dropped ? 'yes' : 'no'})`
    );
  };

  // Warm-up: the same load for a while (JIT, keep-alive connections to the receiver, the match
  // index's first lookups), then wait for every POST of it, as a gateway that has been running is.
  const probeBeforeMs = hostSpeedProbeMs();
  if (WARMUP_EVENTS > 0) {
    const warm = await runPhase('warmup', p.warmup);
    const { dropped } = await counters();
    console.log(
      `${label}: warm-up ${warm.sent} events, POSTs ${warm.posts}, p99 ${warm.p99} ms (not counted); ${verdict(p.warmup, warm, dropped)}`,
    );
  }
  const before = await counters();
  // What the gateway used from the first event to the last POST: sampled every 250 ms and read at
  // the first sample after the last POST, because a phase with deliveries dropped by the pending
  // bound ends only after the load process waited 15 s for POSTs that never come.
  const usage = (): { at: number; cpu: NodeJS.CpuUsage; elu: EventLoopUtilization; threads: Map<string, number> } => ({
    at: Date.now(),
    cpu: process.cpuUsage(),
    elu: performance.eventLoopUtilization(),
    threads: threadCpuMs(process.pid),
  });
  // Whether a tail comes from the main thread being held (one long task, a GC pause) or from a
  // backlog it works off: the longest delay of its event loop and its GC pauses, over the phase.
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  const gcPausesMs: number[] = [];
  const gcObserver = new PerformanceObserver((list) => gcPausesMs.push(...list.getEntries().map((entry) => entry.duration)));
  gcObserver.observe({ entryTypes: ['gc'] });
  loopDelay.enable();
  const start = usage();
  const samples = [start];
  const sampler = setInterval(() => samples.push(usage()), 250);
  const traceStart = Date.now();
  const trace = process.env.BENCH_TRACE
    ? setInterval(() => {
        void (async () => {
          const stats = await service.store.queueStats('nip9a');
          const text = await service.metrics.registry.metrics();
          const attempts = /push_nip9a_callback_attempts_total\{result="2xx"\} (\d+)/.exec(text)?.[1] ?? '0';
          const matchedSoFar = /push_nip9a_matched_total (\d+)/.exec(text)?.[1] ?? '0';
          console.log(
            `  t+${Date.now() - traceStart} ms: matched ${matchedSoFar}, queue ready ${stats.ready} leased ${stats.leased}, 2xx ${attempts}`,
          );
        })();
      }, 500)
    : null;
  const { result: done, top } = await profile(() => runPhase('measured', p.measured));
  clearInterval(sampler);
  loopDelay.disable();
  gcObserver.disconnect();
  samples.push(usage());
  const end = samples.find((s) => s.at >= done.lastPostAt) ?? samples.at(-1) ?? start;
  const cpu = { user: end.cpu.user - start.cpu.user, system: end.cpu.system - start.cpu.system };
  const elu = performance.eventLoopUtilization(end.elu, start.elu);
  if (trace) clearInterval(trace);
  const after = await counters();
  const matched = after.matched - before.matched;
  const dropped = after.dropped - before.dropped;
  await service.stop();
  child.kill();
  printProfile(label, top);
  const probeAfterMs = hostSpeedProbeMs();

  console.log(
    `${label}: offered ${done.sent} events in ${done.sendSecs.toFixed(2)} s (${(done.sent / done.sendSecs).toFixed(0)}/s); ` +
      `matched ${matched} (${(matched / done.sendSecs).toFixed(0)}/s over the offer); ` +
      `callback POSTs ${done.posts} (${(done.posts / done.postSecs).toFixed(0)}/s, first send to last POST); ` +
      `relay write → POST p50 ${done.p50} ms, p99 ${done.p99} ms, max ${done.max} ms; dropped by the pending bound ${dropped}; ` +
      `gateway process CPU ${((cpu.user + cpu.system) / done.sent).toFixed(0)} µs/event, main thread busy ${(elu.utilization * 100).toFixed(0)} %; ` +
      `load process CPU ${((done.cpuSecs / done.wallSecs) * 100).toFixed(0)} % of a core`,
  );
  console.log(`${label}: ${verdict(p.measured, done, dropped)}`);
  const gcTotalMs = gcPausesMs.reduce((sum, ms) => sum + ms, 0);
  console.log(
    `${label}: main thread event loop delay p99 ${(loopDelay.percentile(99) / 1e6).toFixed(0)} ms, max ${(loopDelay.max / 1e6).toFixed(0)} ms; ` +
      `GC pauses ${gcPausesMs.length}, ${gcTotalMs.toFixed(0)} ms in all, longest ${Math.max(0, ...gcPausesMs).toFixed(0)} ms`,
  );
  // Which threads the CPU went to: the main thread, the crypto pool's and the POSTs' workers, V8's GC helpers.
  console.log(`${label}: gateway threads, µs per event: ${threadCpuPerItem(start.threads, end.threads, done.sent)}`);
  console.log(
    `${label}: host speed probe: ${probeBeforeMs.toFixed(0)} ms before, ${probeAfterMs.toFixed(0)} ms after (bench/support/host-speed.ts; lower is faster)`,
  );
}

// The gateway runs in this process: from dist/ as the binary runs it in production when the build
// is current (tsx's transform adds a name helper to every closure the hot paths create), else the
// source, said on stderr.
const entry = chooseEntry(ROOT, process.env);
if (entry.kind === 'source') process.stderr.write(`bench/nip9a/gateway: ${entry.reason}; the gateway runs the source through tsx\n`);
const { startService } = (await import(
  entry.kind === 'dist' ? new URL('../../dist/service.js', import.meta.url).href : '../../src/service.ts'
)) as { startService: typeof StartService };

await useWasmSigning();
const dir = mkdtempSync(join(tmpdir(), 'bench-nip9a-'));
try {
  if (values.store === 'sqlite' || values.store === 'both') await run('sqlite', `sqlite:${join(dir, 'sqlite.db')}`, dir);
  if (values.store === 'redis' || values.store === 'both') {
    const redis = await startRedisServer();
    try {
      await run('redis', redis.url, dir);
    } finally {
      await redis.stop();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
