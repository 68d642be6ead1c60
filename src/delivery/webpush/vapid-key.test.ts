import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import webpush from 'web-push';
import type { StorePort } from '../../store/port.ts';
import { openSqliteStore } from '../../store/sqlite/index.ts';
import { VapidKeyError } from './vapid.ts';
import { resolveSharedVapidKeys, VAPID_KEY_FILE } from './vapid-key.ts';

const none = { vapid_private_key: '', vapid_public_key: '' };
const b64 = (key: Buffer) => key.toString('base64url');

/** The shared-store path, over a real store (the port's contract is tested on both adapters). */
describe('resolveSharedVapidKeys', () => {
  let store: StorePort;
  let dir: string;
  beforeEach(async () => {
    store = await openSqliteStore({ path: ':memory:' });
    dir = mkdtempSync(join(tmpdir(), 'np-vapid-shared-'));
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the first process stores a new pair (not in its data directory); the next ones get that pair', async () => {
    const first = await resolveSharedVapidKeys(none, join(dir, 'a'), store);
    assert.deepEqual([first.source, first.storedNow], ['store', true]);
    assert.equal(existsSync(join(dir, 'a', VAPID_KEY_FILE)), false);
    const second = await resolveSharedVapidKeys(none, join(dir, 'b'), store);
    assert.deepEqual([second.source, second.storedNow], ['store', false]);
    assert.deepEqual([b64(second.publicKey), b64(second.privateKey)], [b64(first.publicKey), b64(first.privateKey)]);
  });

  test("a pair already in the data directory is the candidate, so it becomes the fleet's when first", async () => {
    const kept = webpush.generateVAPIDKeys();
    writeFileSync(join(dir, VAPID_KEY_FILE), JSON.stringify(kept));
    const resolved = await resolveSharedVapidKeys(none, dir, store);
    assert.deepEqual([b64(resolved.publicKey), resolved.storedNow], [kept.publicKey, true]);
  });

  test('configured keys are used as they are and never stored', async () => {
    const configured = webpush.generateVAPIDKeys();
    const resolved = await resolveSharedVapidKeys(
      { vapid_private_key: configured.privateKey, vapid_public_key: configured.publicKey },
      dir,
      store,
    );
    assert.deepEqual([resolved.source, b64(resolved.publicKey)], ['config', configured.publicKey]);
    const fleet = await resolveSharedVapidKeys(none, dir, store);
    assert.notEqual(b64(fleet.publicKey), configured.publicKey, 'the store had no pair yet');
  });

  test('a stored pair that is not a valid key pair is a clear error, never replaced', async () => {
    await store.claimVapidKeys({ publicKey: 'not-a-key', privateKey: 'nope' });
    await assert.rejects(resolveSharedVapidKeys(none, dir, store), VapidKeyError);
    await assert.rejects(
      resolveSharedVapidKeys(none, dir, store),
      VapidKeyError,
      'the next start meets the same pair: nothing was replaced',
    );
    assert.deepEqual(await store.claimVapidKeys({ publicKey: 'x', privateKey: 'y' }), { publicKey: 'not-a-key', privateKey: 'nope' });
  });
});
