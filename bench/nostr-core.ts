/**
 * Throughput of the Nostr core on one thread, for DISTINCT users (every conversation key is a cache
 * miss, as in a registration storm): event verification, conversation-key derivation, NIP-44
 * decryption, and the three together as one registration costs. Verification and key derivation
 * are measured with every secp256k1 backend this machine has (the native addon and the WASM
 * build, src/nostr/secp256k1.ts); the registration pipeline uses the default one
 * (NOSTR_PUSH_SECP256K1=wasm|native picks it).
 *
 *   node --import tsx bench/nostr-core.ts [--users N]
 *
 * Prints a table and one JSON line (`{"bench":"nostr-core",...}`) for scripts.
 */
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { finalizeEvent } from 'nostr-tools/wasm';
import { v2 as nobleNip44 } from 'nostr-tools/nip44';
import { createEventVerifier, isEventRejection, parseEvent, type NostrEvent } from '../src/nostr/event.ts';
import { generateSecretKey, publicKeyOf, secretKeyBytes } from '../src/nostr/keys.ts';
import { REGISTER_TOKEN } from '../src/nostr/kinds.ts';
import { ConversationKeyCache, createConversationKeyDeriver, decryptNip44, encryptNip44, getConversationKey } from '../src/nostr/nip44.ts';
import { availableSecp256k1Backends, defaultSecp256k1 } from '../src/nostr/secp256k1.ts';
import { useWasmSigning } from './support/wasm-signing.ts';

const DEFAULT_USERS = 2_000;
/** The registration target from the design brief: distinct users per second on two cores. */
const TARGET_REGISTRATIONS_PER_SEC = 1_500;
const TARGET_CORES = 2;
/** Noble is slow; a sample of this many peers is enough for its figure. */
const NOBLE_SAMPLE = 200;

const { values } = parseArgs({ options: { users: { type: 'string' } } });
const users = values.users === undefined ? DEFAULT_USERS : Number(values.users);
if (!Number.isSafeInteger(users) || users < 10) throw new Error('--users must be an integer >= 10');

interface Measurement {
  name: string;
  opsPerSec: number;
  microsPerOp: number;
}

function measure(name: string, count: number, run: (i: number) => void): Measurement {
  const start = performance.now();
  for (let i = 0; i < count; i++) run(i);
  const elapsedMs = performance.now() - start;
  return { name, opsPerSec: (count * 1000) / elapsedMs, microsPerOp: (elapsedMs * 1000) / count };
}

function assertThat(condition: boolean, message: string): void {
  if (!condition) throw new Error(`benchmark self-check failed: ${message}`);
}

const backends = availableSecp256k1Backends();
const verifier = await createEventVerifier();
await useWasmSigning();
const serviceSecret = generateSecretKey();
const servicePubkey = publicKeyOf(serviceSecret);

// Setup (not measured): one registration per distinct user, as a client would publish it. Signed
// with the WASM signer, because noble's would dominate the setup time.
process.stderr.write(`preparing ${users} distinct users...\n`);
const registrations: string[] = [];
const userPubkeys: string[] = [];
for (let i = 0; i < users; i++) {
  const userSecret = generateSecretKey();
  const plaintext = JSON.stringify({ token: `fcm-token-${i}-${'x'.repeat(140)}`, platform: 'android' });
  const content = encryptNip44(plaintext, getConversationKey(userSecret, servicePubkey));
  const event = finalizeEvent(
    { kind: REGISTER_TOKEN, created_at: 1_760_000_000 + i, tags: [['p', servicePubkey]], content },
    secretKeyBytes(userSecret),
  );
  registrations.push(JSON.stringify(event));
  userPubkeys.push(event.pubkey);
}
// Each pass parses the frames again, so no pass sees an object another pass (or nostr-tools) touched.
const freshEvents = (): NostrEvent[] =>
  registrations.map((frame) => {
    const result = parseEvent(JSON.parse(frame));
    if (isEventRejection(result)) throw new Error(result.message);
    return result;
  });

const warmup = freshEvents().slice(0, 100);
for (const backend of backends) {
  const warm = await createEventVerifier(backend);
  for (const event of warmup) warm.verify(event);
}

const results: Measurement[] = [];

const parseFrames = registrations;
results.push(
  measure('JSON.parse + parseEvent', users, (i) => {
    const frame = parseFrames[i];
    if (frame !== undefined) parseEvent(JSON.parse(frame));
  }),
);

for (const backend of backends) {
  const backendVerifier = await createEventVerifier(backend);
  const toVerify = freshEvents();
  let verified = 0;
  results.push(
    measure(`verify (id + schnorr), ${backend.name}`, users, (i) => {
      const event = toVerify[i];
      if (event !== undefined && backendVerifier.verify(event)) verified++;
    }),
  );
  assertThat(verified === users, `${users - verified} valid events failed verification with ${backend.name}`);
  let signatures = 0;
  results.push(
    measure(`schnorr alone, ${backend.name}`, users, (i) => {
      const event = toVerify[i];
      if (event !== undefined && backend.verifySchnorrHex(event.id, event.pubkey, event.sig)) signatures++;
    }),
  );
  assertThat(signatures === users, `${users - signatures} valid signatures failed with ${backend.name}`);
}

// Keys from the default backend feed the decryption pass; every backend's must equal them.
const conversationKeys: Uint8Array[] = [];
for (const backend of backends) {
  const deriver = createConversationKeyDeriver(serviceSecret, backend);
  const keys: Uint8Array[] = [];
  results.push(
    measure(`conversation key, distinct peers, ${backend.name}`, users, (i) => {
      const peer = userPubkeys[i];
      if (peer !== undefined) keys.push(deriver.conversationKey(peer));
    }),
  );
  if (backend === defaultSecp256k1()) conversationKeys.push(...keys);
  else assertThat(keys.length === users, `${backend.name} derived ${keys.length} keys`);
  for (const [i, key] of keys.entries()) {
    const reference = getConversationKey(serviceSecret, userPubkeys[i] ?? '');
    assertThat(Buffer.from(key).equals(reference), `${backend.name} key ${i} differs from the default backend's`);
  }
}

const serviceSecretBytes = secretKeyBytes(serviceSecret);
const nobleSample = Math.min(NOBLE_SAMPLE, users);
results.push(
  measure('conversation key (noble, for comparison)', nobleSample, (i) => {
    const peer = userPubkeys[i];
    if (peer !== undefined) nobleNip44.utils.getConversationKey(serviceSecretBytes, peer);
  }),
);

const decryptEvents = freshEvents();
let decrypted = 0;
results.push(
  measure('decrypt ~250-byte payload (key cached)', users, (i) => {
    const event = decryptEvents[i];
    const key = conversationKeys[i];
    if (event !== undefined && key !== undefined && decryptNip44(event.content, key).startsWith('{')) decrypted++;
  }),
);
assertThat(decrypted === users, 'some payloads did not decrypt');

// The whole per-registration crypto path with a cold cache: parse, verify, derive, decrypt.
const cache = new ConversationKeyCache(createConversationKeyDeriver(serviceSecret));
let registered = 0;
const pipeline = measure('registration: parse + verify + key miss + decrypt', users, (i) => {
  const frame = registrations[i];
  if (frame === undefined) return;
  const event = parseEvent(JSON.parse(frame));
  if (isEventRejection(event) || !verifier.verify(event)) return;
  const plaintext = decryptNip44(event.content, cache.get(event.pubkey));
  if (plaintext.length > 0) registered++;
});
results.push(pipeline);
assertThat(registered === users, 'some registrations failed');
assertThat(cache.stats().hits === 0, 'distinct users must all miss the cache');

const width = Math.max(...results.map((r) => r.name.length));
console.log(`\nnostr-core, one thread, ${users} distinct users (${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version})`);
console.log(`  (the registration pipeline runs on ${defaultSecp256k1().name})`);
for (const r of results) {
  console.log(`  ${r.name.padEnd(width)}  ${r.opsPerSec.toFixed(0).padStart(8)} ops/s  ${r.microsPerOp.toFixed(1).padStart(8)} µs/op`);
}
const projected = pipeline.opsPerSec * TARGET_CORES;
console.log(
  `\n  registrations/s on ${TARGET_CORES} cores if the crypto path runs on each (ideal): ${projected.toFixed(0)}` +
    ` (target ${TARGET_REGISTRATIONS_PER_SEC}: ${projected >= TARGET_REGISTRATIONS_PER_SEC ? 'met' : 'NOT met'})`,
);
console.log(
  JSON.stringify({
    bench: 'nostr-core',
    users,
    results: Object.fromEntries(results.map((r) => [r.name, Math.round(r.opsPerSec)])),
    projectedRegistrationsPerSecOnTwoCores: Math.round(projected),
  }),
);
