import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { NewApiKey } from '../../../src/store/port-apikeys.ts';
import { SECOND_MS, type ContractContext } from './context.ts';

const key = (id: string, appId = 'default', role: NewApiKey['role'] = 'send'): NewApiKey => ({
  id,
  appId,
  role,
  hash: id.padEnd(64, '0'),
  prefix: `np_${id}`.slice(0, 10),
});

/** The contract of port-apikeys.ts: create, lookup by hash, list, revoke, last use. */
export function apiKeyContract(ctx: ContractContext): void {
  describe('API keys', () => {
    test('a created key is found by its hash with its app, role, prefix and creation time', async () => {
      const store = ctx.store();
      const created = key('k1', 'default', 'admin');
      assert.equal(await store.createApiKey(created), true);
      assert.deepEqual(await store.findApiKeyByHash(created.hash), {
        ...created,
        createdAtMs: ctx.clock().nowMs(),
        revokedAtMs: null,
        lastUsedAtMs: null,
      });
      assert.equal(await store.findApiKeyByHash('f'.repeat(64)), null, 'an unknown hash finds nothing');
    });

    test('a second key with the same id or the same hash is refused and changes nothing', async () => {
      const store = ctx.store();
      const first = key('k1');
      assert.equal(await store.createApiKey(first), true);
      assert.equal(await store.createApiKey({ ...key('k1'), hash: 'a'.repeat(64), role: 'admin' }), false, 'same id');
      assert.equal(await store.createApiKey({ ...key('k2'), hash: first.hash }), false, 'same hash');
      assert.equal((await store.findApiKeyByHash(first.hash))?.role, 'send');
      assert.equal(await store.findApiKeyByHash('a'.repeat(64)), null);
      assert.equal((await store.listApiKeys(null)).length, 1);
    });

    test('a revoked key is never found again, stays listed with its revocation time, and revokes once', async () => {
      const store = ctx.store();
      const revoked = key('k1');
      await store.createApiKey(revoked);
      await store.createApiKey(key('k2'));
      ctx.clock().advance(5 * SECOND_MS);
      assert.equal(await store.revokeApiKey('k1'), true);
      assert.equal(await store.findApiKeyByHash(revoked.hash), null);
      assert.equal((await store.findApiKeyByHash(key('k2').hash))?.id, 'k2', 'the other key still works');
      assert.equal(await store.revokeApiKey('k1'), false, 'already revoked');
      assert.equal(await store.revokeApiKey('nope'), false, 'unknown');
      const listed = await store.listApiKeys('default');
      assert.equal(listed.find((k) => k.id === 'k1')?.revokedAtMs, ctx.clock().nowMs());
      assert.equal(listed.find((k) => k.id === 'k2')?.revokedAtMs, null);
    });

    test('listing is per app (or all apps), oldest first', async () => {
      const store = ctx.store();
      await store.createApiKey(key('b-old', 'beta'));
      ctx.clock().advance(SECOND_MS);
      await store.createApiKey(key('d-1', 'default', 'admin'));
      ctx.clock().advance(SECOND_MS);
      await store.createApiKey(key('a-new', 'beta'));
      assert.deepEqual(
        (await store.listApiKeys('beta')).map((k) => k.id),
        ['b-old', 'a-new'],
      );
      assert.deepEqual(
        (await store.listApiKeys('default')).map((k) => [k.id, k.role]),
        [['d-1', 'admin']],
      );
      assert.deepEqual(
        (await store.listApiKeys(null)).map((k) => k.id),
        ['b-old', 'd-1', 'a-new'],
      );
      assert.deepEqual(await store.listApiKeys('gamma'), []);
    });

    test('a use is recorded as the key’s last use, never moved back by an older one, on revoked keys too; an unknown id is refused', async () => {
      const store = ctx.store();
      const used = key('k1');
      await store.createApiKey(used);
      await store.createApiKey(key('k2'));
      const t0 = ctx.clock().nowMs();
      assert.equal(await store.touchApiKeyUse('k1', t0 + 60 * SECOND_MS), true);
      assert.equal((await store.findApiKeyByHash(used.hash))?.lastUsedAtMs, t0 + 60 * SECOND_MS);
      assert.equal(await store.touchApiKeyUse('k1', t0 + 30 * SECOND_MS), true, 'a known key');
      assert.equal((await store.findApiKeyByHash(used.hash))?.lastUsedAtMs, t0 + 60 * SECOND_MS, 'an older use does not move it back');
      assert.equal(await store.touchApiKeyUse('k1', t0 + 120 * SECOND_MS), true);
      const listed = await store.listApiKeys('default');
      assert.deepEqual(
        listed.map((k) => [k.id, k.lastUsedAtMs]),
        [
          ['k1', t0 + 120 * SECOND_MS],
          ['k2', null],
        ],
      );
      await store.revokeApiKey('k1');
      assert.equal(await store.touchApiKeyUse('k1', t0 + 180 * SECOND_MS), true, 'a revoked key is still known');
      assert.equal((await store.listApiKeys('default')).find((k) => k.id === 'k1')?.lastUsedAtMs, t0 + 180 * SECOND_MS);
      assert.equal(await store.findApiKeyByHash(used.hash), null, 'and stays revoked');
      assert.equal(await store.touchApiKeyUse('nope', t0), false);
      assert.deepEqual(
        (await store.listApiKeys(null)).map((k) => k.id),
        ['k1', 'k2'],
        'nothing created for an unknown id',
      );
    });
  });
}
