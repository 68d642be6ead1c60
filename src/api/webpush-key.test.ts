import { test } from 'node:test';
import assert from 'node:assert/strict';
import { webPushKeyRoutes } from './webpush-key.ts';

test('the VAPID public key is served for browser apps, 404 without Web Push', async () => {
  const res = await webPushKeyRoutes('BNcRdreALRFX').request('/v1/webpush/vapid-public-key');
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { publicKey: 'BNcRdreALRFX' });
  assert.equal((await webPushKeyRoutes(null).request('/v1/webpush/vapid-public-key')).status, 404);
});
