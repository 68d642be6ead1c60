import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateSecretKey, isValidSecretKeyHex, publicKeyOf } from '../nostr/keys.ts';
import { npubEncode } from '../nostr/nip19.ts';

/** File in the data directory that keeps a generated service key across restarts. */
export const SERVICE_KEY_FILE = 'service-key.hex';

export interface ServiceKey {
  secretHex: string;
  pubkey: string;
  npub: string;
  /** `config` (service.private_key_hex), `data_dir` (kept from an earlier start) or `generated` (now). */
  source: 'config' | 'data_dir' | 'generated';
}

/**
 * The service identity: `service.private_key_hex` when set; otherwise the key kept in the data
 * directory as `fileName` (an app's own file, `config/apps.ts`), generated (mode 0600) on first
 * start. Throws when the configured or stored key is invalid.
 */
export function resolveServiceKey(privateKeyHex: string, dataDir: string, fileName: string = SERVICE_KEY_FILE): ServiceKey {
  const make = (secretHex: string, source: ServiceKey['source']): ServiceKey => {
    const pubkey = publicKeyOf(secretHex);
    return { secretHex, pubkey, npub: npubEncode(pubkey), source };
  };
  if (privateKeyHex !== '') {
    const secret = privateKeyHex.toLowerCase();
    if (!isValidSecretKeyHex(secret)) throw new Error('service.private_key_hex is not a valid secp256k1 secret key');
    return make(secret, 'config');
  }
  const file = join(dataDir, fileName);
  if (existsSync(file)) {
    const secret = readFileSync(file, 'utf8').trim().toLowerCase();
    if (!isValidSecretKeyHex(secret)) throw new Error(`${file} does not hold a valid secret key; remove it to generate a new one`);
    return make(secret, 'data_dir');
  }
  mkdirSync(dataDir, { recursive: true });
  const secret = generateSecretKey();
  writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return make(secret, 'generated');
}
