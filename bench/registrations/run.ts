/**
 * bench/registrations: pre-signed, NIP-44-encrypted kind 3079s for distinct users, pushed straight
 * into the pipeline (validate + verify + enqueue, then the engine's inbound worker: claim, decrypt,
 * register, acknowledge), on each store adapter. Prints registrations per second, a correctness
 * verdict (every user owns exactly its token) and the CPU profile's top entries.
 *
 *   node --import tsx bench/registrations/run.ts [--count 5000] [--store sqlite|redis|both] [--crypto-workers 2]
 */
import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEventVerifier, isEventRejection, parseEvent, type NostrEvent } from '../../src/nostr/event.ts';
import { REGISTER_TOKEN } from '../../src/nostr/kinds.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import type { StorePort } from '../../src/store/port.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { CONVERSATION_KEY_CACHE_ENTRIES, createNip44ControlDecryptor } from '../../src/engine/nip44-decryptor.ts';
import { CryptoWorkerPool } from '../../src/nostr/crypto-worker-pool.ts';
import { prefetchInbound, routeInbound, type InboundEnvelope } from '../../src/engine/router.ts';
import { runQueueWorker } from '../../src/roles/queue-worker.ts';
import { INBOUND_BATCH_SIZE, INBOUND_CONCURRENCY } from '../../src/roles/roles.ts';
import { controlEvent, makeUser, type TestUser } from '../../test/support/nostr-client.ts';
import { startRedisServer } from '../../test/support/redis-server.ts';
import { printProfile, profile } from '../support/cpu-profile.ts';
import { DONE, QueueSignal } from '../../src/store/queue-work.ts';
import { runUnderServerNodeFlags } from '../support/server-node-flags.ts';

runUnderServerNodeFlags();
const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '5000' },
    store: { type: 'string', default: 'both' },
    'crypto-workers': { type: 'string', default: '2' },
  },
});
const COUNT = Number(values.count);
/** As `engine.crypto_workers`: NIP-44 decryption threads beside the main one (0 = inline). */
const CRYPTO_WORKERS = Number(values['crypto-workers']);

interface Prepared {
  service: TestUser;
  users: TestUser[];
  /** As the relay sends them: JSON text, so the pipeline pays for parsing like the listener does. */
  frames: string[];
}

function prepare(count: number): Prepared {
  const service = makeUser();
  const users: TestUser[] = [];
  const frames: string[] = [];
  const now = Math.floor(Date.now() / 1000);
  for (let i = 0; i < count; i++) {
    const user = makeUser();
    users.push(user);
    const event: NostrEvent = controlEvent(
      user,
      REGISTER_TOKEN,
      { token: `bench-token-${i}-${user.pubkey.slice(0, 16)}` },
      service.pubkey,
      { createdAt: now },
    );
    frames.push(JSON.stringify(event));
  }
  return { service, users, frames };
}

async function runOne(label: string, store: StorePort, prepared: Prepared): Promise<void> {
  const logger = createLogger({ level: 'silent' });
  const metrics = new Metrics();
  const inline = await createEventVerifier();
  const pool =
    CRYPTO_WORKERS > 0
      ? new CryptoWorkerPool({ size: CRYPTO_WORKERS, secretHex: prepared.service.secret, cacheCapacity: CONVERSATION_KEY_CACHE_ENTRIES })
      : null;
  await pool?.ready;
  // As the listener does: off the main thread when there is a pool.
  const verify = (event: NostrEvent): Promise<boolean> | boolean => (pool ? pool.verify(event) : inline.verify(event));
  const deps = {
    store,
    decryptor: createNip44ControlDecryptor(prepared.service.secret, pool ? { pool } : {}),
    servicePubkey: prepared.service.pubkey,
    processedEventTtlSecs: 604_800,
    clock: store.clock,
    logger,
    metrics,
  };
  const wake = new QueueSignal();
  const controller = new AbortController();
  let registered = 0;
  let resolveAll!: () => void;
  const allDone = new Promise<void>((resolve) => (resolveAll = resolve));

  const { result: elapsedMs, top } = await profile(async () => {
    const started = performance.now();
    const worker = runQueueWorker<InboundEnvelope>({
      store,
      queue: 'inbound',
      concurrency: INBOUND_CONCURRENCY,
      orderingKey: (item) => item.payload.event.pubkey,
      batchSize: INBOUND_BATCH_SIZE,
      leaseMs: 60_000,
      maxAttempts: 10,
      pollMs: 50,
      signal: controller.signal,
      wake,
      logger,
      metrics,
      prepare: (items) =>
        prefetchInbound(
          deps,
          items.map((i) => i.payload),
        ),
      handle: async (item) => {
        const outcome = await routeInbound(deps, item.payload);
        if (outcome.route === 'control' && outcome.outcome === 'registered' && ++registered === prepared.frames.length) resolveAll();
        return DONE;
      },
    });
    // The listener's share: parse, verify, enqueue (in batches of 64, as frames arrive in bursts).
    for (let i = 0; i < prepared.frames.length; i += 64) {
      await Promise.all(
        prepared.frames.slice(i, i + 64).map(async (frame) => {
          const event = parseEvent(JSON.parse(frame));
          if (isEventRejection(event) || !(await verify(event))) throw new Error('a pre-signed event failed validation');
          const envelope: InboundEnvelope = { event, context: 'live', relay: 'bench', receivedAtMs: Date.now() };
          await store.enqueue('inbound', { id: event.id, payload: envelope });
        }),
      );
      wake.notify('inbound');
    }
    await allDone;
    const elapsed = performance.now() - started;
    controller.abort();
    await worker;
    return elapsed;
  });

  await pool?.close();
  let wrong = 0;
  for (const [i, user] of prepared.users.entries()) {
    const devices = await store.listDevices(user.pubkey);
    if (devices.length !== 1 || devices[0]?.token !== `bench-token-${i}-${user.pubkey.slice(0, 16)}`) wrong++;
  }
  const rate = (prepared.frames.length / elapsedMs) * 1000;
  console.log(
    `registrations ${label}, ${CRYPTO_WORKERS} crypto worker(s): ${prepared.frames.length} in ${(elapsedMs / 1000).toFixed(2)} s = ${rate.toFixed(0)}/s; verdict: ${wrong === 0 ? 'OK' : 'FAIL'} (${wrong} users without exactly their token)`,
  );
  printProfile(label, top);
  if (wrong > 0) process.exitCode = 1;
}

console.log(`preparing ${COUNT} signed, encrypted registrations for distinct users…`);
const prepared = prepare(COUNT);

if (values.store === 'sqlite' || values.store === 'both') {
  const dir = mkdtempSync(join(tmpdir(), 'np-bench-'));
  const store = await openSqliteStore({ path: join(dir, 'bench.sqlite') });
  await runOne('sqlite (file, WAL)', store, prepared);
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
if (values.store === 'redis' || values.store === 'both') {
  const redis = await startRedisServer();
  const store = await openRedisStore({ url: redis.url });
  await runOne('redis (private redis-server)', store, prepared);
  await store.close();
  await redis.stop();
}
