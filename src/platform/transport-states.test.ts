/** What the console says of an app's transports, from its configuration (`transport-states.ts`). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultConfig } from '../config/defaults.ts';
import { transportStates } from './transport-states.ts';

test('the defaults: FCM and APNs off, each saying which setting is missing; Web Push and UnifiedPush on', () => {
  const states = transportStates(defaultConfig());
  assert.deepEqual(
    states.map((s) => [s.transport, s.configured]),
    [
      ['fcm', false],
      ['apns', false],
      ['webpush', true],
      ['unifiedpush', true],
    ],
  );
  assert.match(states[0]?.detail ?? '', /firebase\.credentials_path is not set/);
  assert.match(states[1]?.detail ?? '', /apns\.key_path is not set/);
  assert.match(states[3]?.detail ?? '', /generated VAPID key/);
});

test('with credentials: FCM and APNs on, saying what they run with', () => {
  const config = defaultConfig();
  config.firebase.credentials_path = '/etc/nostr-push/sa.json';
  config.firebase.project_id = 'clips-prod';
  config.apns.key_path = '/etc/nostr-push/AuthKey.p8';
  config.apns.key_id = 'ABC123';
  config.apns.bundle_id = 'com.example.clips';
  config.apns.sandbox = true;
  const [fcm, apns] = transportStates(config);
  assert.equal(fcm?.configured, true);
  assert.match(fcm.detail, /^project clips-prod via https:/);
  assert.equal(apns?.configured, true);
  assert.equal(apns.detail, 'bundle com.example.clips, key ABC123, sandbox');
});
