/**
 * What an end-to-end test of the real binary sets up besides its relays and provider fakes: the
 * binary's store (a data folder, and on Redis a private redis-server), the settings every such
 * binary starts with, and the waits most of them need (a device registered, the relays live).
 * One place, so a new e2e test starts from the same ground as the others.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REGISTER_TOKEN } from '../../src/nostr/kinds.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import type { StoreAdapter } from './each-store.ts';
import { controlEvent, type TestUser } from './nostr-client.ts';
import { publish } from './publisher.ts';
import { startRedisServer, type PrivateRedisServer } from './redis-server.ts';
import { eventually, type ServiceProcess } from './service-process.ts';

/** How long the waits below give the binary by default: generous, since a loaded machine is slow. */
export const E2E_WAIT_MS = 15_000;

/** The binary's store, on one adapter. */
export interface E2eStore {
  adapter: StoreAdapter;
  /** The binary's data folder (and, on SQLite, where its database lives). */
  dataDir: string;
  /** `store.url` for the binary. */
  storeUrl: string;
  /** The private redis-server (Redis only). */
  redis: PrivateRedisServer | undefined;
  /** Another client of the binary's store, for the test to look into; the caller closes it. */
  openReader(): Promise<StorePort>;
  /** Stops the redis-server and deletes the data folder. */
  remove(): Promise<void>;
}

/** A fresh data folder named after `name`, and on Redis a private redis-server. */
export async function makeE2eStore(adapter: StoreAdapter, name: string): Promise<E2eStore> {
  const dataDir = mkdtempSync(join(tmpdir(), `np-${name}-${adapter}-`));
  const sqlitePath = join(dataDir, 'nostr-push.sqlite');
  const redis = adapter === 'redis' ? await startRedisServer() : undefined;
  const storeUrl = redis ? redis.url : `sqlite:${sqlitePath}`;
  return {
    adapter,
    dataDir,
    storeUrl,
    redis,
    openReader: () => (redis ? openRedisStore({ url: redis.url }) : openSqliteStore({ path: sqlitePath })),
    async remove() {
      await redis?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The settings every e2e binary starts with: the service key, the relays it watches, its store
 * and data folder, relay queries that give up after 2 s, and queues polled every 20 ms.
 */
export function baseServiceEnv(options: { serviceKey: TestUser; relays: readonly string[]; store: E2eStore }): Record<string, string> {
  return {
    NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: options.serviceKey.secret,
    NOSTR_PUSH__NOSTR__RELAYS: options.relays.join(','),
    NOSTR_PUSH__NOSTR__QUERY_TIMEOUT_SECS: '2',
    NOSTR_PUSH__STORE__URL: options.store.storeUrl,
    NOSTR_PUSH__DATA_DIR: options.store.dataDir,
    NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
  };
}

/** Resolves once the binary logged its live subscriptions open on every relay of `relays`. */
export async function relaysLive(service: ServiceProcess, relays: readonly string[], timeoutMs = E2E_WAIT_MS): Promise<void> {
  await Promise.all(
    relays.map((relay) => service.waitForLog((l) => l.msg === 'live subscriptions open' && l.relay === relay, timeoutMs, `${relay} live`)),
  );
}

/** Publishes `user`'s kind 3079 for an FCM `token` to `relayUrl` and waits until the store says `user` owns it. */
export async function registerDevice(
  options: { relayUrl: string; reader: StorePort; servicePubkey: string },
  user: TestUser,
  token: string,
  timeoutMs = E2E_WAIT_MS,
): Promise<void> {
  await publish(options.relayUrl, controlEvent(user, REGISTER_TOKEN, { token }, options.servicePubkey));
  await eventually(
    async () => ((await options.reader.tokenOwner(token)) === user.pubkey ? true : undefined),
    timeoutMs,
    `${token} registered`,
  );
}
