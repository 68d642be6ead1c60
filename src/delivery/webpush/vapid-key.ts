import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeKey, WebPushEncryptionError } from './encrypt.ts';
import { generateVapidKeyPair, VapidKeyError, vapidKeyPairFromPrivate, type VapidKeyPair } from './vapid.ts';

/**
 * File in the data directory that keeps a generated VAPID key pair across restarts, as
 * `{"publicKey": "<base64url 65 bytes>", "privateKey": "<base64url 32 bytes>"}` — the shape
 * `web-push generate-vapid-keys --json` prints, so an operator can move keys either way.
 */
export const VAPID_KEY_FILE = 'webpush-vapid.json';

export interface ResolvedVapidKeys extends VapidKeyPair {
  /** `config` (webpush.vapid_private_key), `data_dir` (kept from an earlier start) or `generated` (now). */
  source: 'config' | 'data_dir' | 'generated';
}

/** The `webpush.vapid_*` keys this needs. */
export interface VapidKeyConfig {
  vapid_private_key: string;
  vapid_public_key: string;
}

/**
 * The VAPID key pair: `webpush.vapid_private_key` (with `vapid_public_key`, when set, checked
 * against it) if configured; otherwise the pair kept in the data directory, generated (mode 0600)
 * on first start. A push subscription restricted to our key (RFC 8292 §4) breaks when the key
 * changes, which is why it is kept rather than made per process.
 * @throws {VapidKeyError} for a configured or stored key that is invalid, or a public key alone.
 */
export function resolveVapidKeys(config: VapidKeyConfig, dataDir: string): ResolvedVapidKeys {
  if (config.vapid_private_key !== '') {
    const privateKey = decode(config.vapid_private_key, 32, 'webpush.vapid_private_key');
    const publicKey = config.vapid_public_key === '' ? undefined : decode(config.vapid_public_key, 65, 'webpush.vapid_public_key');
    return { ...vapidKeyPairFromPrivate(privateKey, publicKey), source: 'config' };
  }
  if (config.vapid_public_key !== '') throw new VapidKeyError('webpush.vapid_public_key is set without webpush.vapid_private_key');

  const file = join(dataDir, VAPID_KEY_FILE);
  if (existsSync(file)) {
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
    const pair = vapidKeyPairFromPrivate(decode(record.privateKey, 32, file), decode(record.publicKey, 65, file));
    return { ...pair, source: 'data_dir' };
  }
  mkdirSync(dataDir, { recursive: true });
  const pair = generateVapidKeyPair();
  const json = JSON.stringify({ publicKey: pair.publicKey.toString('base64url'), privateKey: pair.privateKey.toString('base64url') });
  writeFileSync(file, `${json}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return { ...pair, source: 'generated' };
}

function decode(value: string, bytes: number, what: string): Buffer {
  try {
    return decodeKey(value.trim(), bytes, 'bad_local_keys', what);
  } catch (err) {
    if (err instanceof WebPushEncryptionError) throw new VapidKeyError(err.message);
    throw err;
  }
}
