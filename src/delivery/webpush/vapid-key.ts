import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StoredVapidKeys, VapidKeyStore } from '../../store/port-vapid.ts';
import { decodeKey, WebPushEncryptionError } from './encrypt.ts';
import { generateVapidKeyPair, VapidKeyError, vapidKeyPairFromPrivate, type VapidKeyPair } from './vapid.ts';

/**
 * File in the data directory that keeps a generated VAPID key pair across restarts, as
 * `{"publicKey": "<base64url 65 bytes>", "privateKey": "<base64url 32 bytes>"}` — the shape
 * `web-push generate-vapid-keys --json` prints, so an operator can move keys either way.
 */
export const VAPID_KEY_FILE = 'webpush-vapid.json';

export interface ResolvedVapidKeys extends VapidKeyPair {
  /**
   * `config` (webpush.vapid_private_key), `data_dir` (kept from an earlier start), `generated`
   * (now, into the data directory), or `store` (the fleet's pair in the shared store).
   */
  source: 'config' | 'data_dir' | 'generated' | 'store';
  /** With `store`: this process's candidate became the fleet's pair (it was the first). */
  storedNow?: boolean;
}

/** The `webpush.vapid_*` keys this needs. */
export interface VapidKeyConfig {
  vapid_private_key: string;
  vapid_public_key: string;
}

/** The configured pair, or null when none is configured. */
function configuredKeys(config: VapidKeyConfig): ResolvedVapidKeys | null {
  if (config.vapid_private_key !== '') {
    const privateKey = decode(config.vapid_private_key, 32, 'webpush.vapid_private_key');
    const publicKey = config.vapid_public_key === '' ? undefined : decode(config.vapid_public_key, 65, 'webpush.vapid_public_key');
    return { ...vapidKeyPairFromPrivate(privateKey, publicKey), source: 'config' };
  }
  if (config.vapid_public_key !== '') throw new VapidKeyError('webpush.vapid_public_key is set without webpush.vapid_private_key');
  return null;
}

/** The pair kept in the data directory, or null when there is no file. */
function dataDirKeys(dataDir: string): VapidKeyPair | null {
  const file = join(dataDir, VAPID_KEY_FILE);
  if (!existsSync(file)) return null;
  let stored: unknown;
  try {
    stored = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    throw new VapidKeyError(`${file} is not JSON; remove it to generate a new VAPID key`);
  }
  const record = stored as { privateKey?: unknown; publicKey?: unknown };
  if (typeof record.privateKey !== 'string' || typeof record.publicKey !== 'string') {
    throw new VapidKeyError(`${file} lacks privateKey/publicKey; remove it to generate a new VAPID key`);
  }
  return vapidKeyPairFromPrivate(decode(record.privateKey, 32, file), decode(record.publicKey, 65, file));
}

function toStored(pair: VapidKeyPair): StoredVapidKeys {
  return { publicKey: pair.publicKey.toString('base64url'), privateKey: pair.privateKey.toString('base64url') };
}

/**
 * The VAPID key pair of a process with its own data directory (SQLite): `webpush.vapid_private_key`
 * (with `vapid_public_key`, when set, checked against it) if configured; otherwise the pair kept in
 * the data directory, generated (mode 0600) on first start. A push subscription restricted to our
 * key (RFC 8292 §4) breaks when the key changes, which is why it is kept rather than made per start.
 * @throws {VapidKeyError} for a configured or stored key that is invalid, or a public key alone.
 */
export function resolveVapidKeys(config: VapidKeyConfig, dataDir: string): ResolvedVapidKeys {
  const configured = configuredKeys(config);
  if (configured) return configured;
  const kept = dataDirKeys(dataDir);
  if (kept) return { ...kept, source: 'data_dir' };
  mkdirSync(dataDir, { recursive: true });
  const pair = generateVapidKeyPair();
  const file = join(dataDir, VAPID_KEY_FILE);
  writeFileSync(file, `${JSON.stringify(toStored(pair))}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return { ...pair, source: 'generated' };
}

/**
 * The VAPID key pair of a process in a fleet sharing `store` (Redis): the configured pair if
 * there is one; otherwise the fleet's pair in the store. The first process to start stores its
 * candidate there (set-if-absent, so processes starting together agree): the pair already in its
 * data directory if it has one (a key from before the store kept it, whose subscriptions keep
 * working), else a new one, never written to the data directory. Every later process uses the
 * stored pair, so a subscription made with any process's key is honoured by all.
 * @throws {VapidKeyError} for a configured, kept or stored key that is invalid.
 */
export async function resolveSharedVapidKeys(config: VapidKeyConfig, dataDir: string, store: VapidKeyStore): Promise<ResolvedVapidKeys> {
  const configured = configuredKeys(config);
  if (configured) return configured;
  const candidate = toStored(dataDirKeys(dataDir) ?? generateVapidKeyPair());
  const stored = await store.claimVapidKeys(candidate);
  const what = 'the VAPID key pair in the shared store';
  const pair = vapidKeyPairFromPrivate(decode(stored.privateKey, 32, what), decode(stored.publicKey, 65, what));
  return { ...pair, source: 'store', storedNow: stored.publicKey === candidate.publicKey && stored.privateKey === candidate.privateKey };
}

function decode(value: string, bytes: number, what: string): Buffer {
  try {
    return decodeKey(value.trim(), bytes, 'bad_local_keys', what);
  } catch (err) {
    if (err instanceof WebPushEncryptionError) throw new VapidKeyError(err.message);
    throw err;
  }
}
