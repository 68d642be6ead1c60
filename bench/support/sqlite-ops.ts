// Micro-measure of the SQLite store's per-operation cost (the social pipeline's hot operations).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';

const store = await openSqliteStore({ path: join(mkdtempSync(join(tmpdir(), 'np-ops-')), 'ops.sqlite') });
const N = 5000;
const payload = {
  event: {
    id: 'x'.repeat(64),
    pubkey: 'y'.repeat(64),
    sig: 'z'.repeat(128),
    kind: 7,
    created_at: 1,
    tags: [
      ['e', 'a'.repeat(64)],
      ['p', 'b'.repeat(64)],
    ],
    content: '+',
  },
  context: 'live',
  relay: 'r',
  receivedAtMs: 1,
};
const time = async (label: string, fn: (i: number) => Promise<unknown>) => {
  const t = performance.now();
  for (let i = 0; i < N; i++) await fn(i);
  console.log(`${label.padEnd(28)} ${(((performance.now() - t) / N) * 1000).toFixed(1)} µs/op`);
};
await time('registerToken', (i) => store.registerToken(`pk${i}`, { token: `t${i}`, transport: 'fcm' }));
await time('listDevices', (i) => store.listDevices(`pk${i}`));
await time('getPreferences', (i) => store.getPreferences(`pk${i}`));
await time('claimRecipientDelivery', (i) => store.claimRecipientDelivery(`e${i}`, `pk${i}`, 600));
await time('enqueue', (i) => store.enqueue('inbound', { id: `e${i}`, payload }));
const leased: Array<{ id: string; leaseToken: string }> = [];
await time('lease (1 of N)', async () => leased.push(...(await store.lease('inbound', { max: 1, leaseMs: 60_000, maxAttempts: 5 }))));
await time('ack', (i) => {
  const item = leased[i];
  if (!item) throw new Error(`ack: item ${i} was never leased`);
  return store.ack('inbound', item.id, item.leaseToken);
});
await time('refreshTokenActivity', (i) => store.refreshTokenActivity([`t${i}`]));
await store.close();
