import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { REGISTER_TOKEN } from '../nostr/kinds.ts';
import { controlEvent, makeUser } from '../../test/support/nostr-client.ts';
import { PlaintextContentError } from './control-events.ts';
import { createNip44ControlDecryptor } from './nip44-decryptor.ts';
import { CryptoWorkerPool } from '../nostr/crypto-worker-pool.ts';

for (const workers of [0, 2]) {
  describe(`NIP-44 control decryptor (${workers === 0 ? 'inline' : `${workers} worker threads`})`, () => {
    test('decrypts, prefetched or not, and rejects plaintext and foreign ciphertext', async () => {
      const service = makeUser();
      const pool = workers > 0 ? new CryptoWorkerPool({ size: workers, secretHex: service.secret, cacheCapacity: 100 }) : undefined;
      const decryptor = createNip44ControlDecryptor(service.secret, pool ? { pool } : {});
      try {
        const events = Array.from({ length: 20 }, (_, i) => controlEvent(makeUser(), REGISTER_TOKEN, { token: `t${i}` }, service.pubkey));
        for (const e of events.slice(0, 10)) decryptor.prefetch?.(e);
        const plaintexts = await Promise.all(events.map((e) => decryptor.decrypt(e)));
        assert.deepEqual(
          plaintexts.map((p) => (JSON.parse(p) as { token?: unknown }).token),
          events.map((_, i) => `t${i}`),
        );

        const plain = controlEvent(makeUser(), REGISTER_TOKEN, { token: 'p' }, service.pubkey, { plaintext: true });
        await assert.rejects(decryptor.decrypt(plain), PlaintextContentError);
        const foreign = controlEvent(makeUser(), REGISTER_TOKEN, { token: 'f' }, makeUser().pubkey, { pTag: service.pubkey });
        decryptor.prefetch?.(foreign);
        await assert.rejects(decryptor.decrypt(foreign), { name: 'Nip44Error' });
      } finally {
        await pool?.close();
      }
    });
  });
}
