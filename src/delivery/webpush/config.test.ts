import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import webpush from 'web-push';
import { ConfigError, loadConfig } from '../../config/load.ts';
import { createLogger } from '../../observability/logger.ts';
import { Metrics } from '../../observability/metrics.ts';
import { createWebPushTransport } from './index.ts';

function problemsOf(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig({ env });
    return [];
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems;
  }
}

describe('webpush configuration', () => {
  test('defaults: generated VAPID key, no subject, a day of TTL, private endpoints refused', () => {
    const { webpush: w } = loadConfig({ env: {} }).config;
    assert.deepEqual(w, {
      vapid_private_key: '',
      vapid_public_key: '',
      vapid_subject: '',
      ttl_secs: 86_400,
      request_timeout_secs: 30,
      batch_concurrency: 50,
      allow_private_endpoints: false,
    });
  });

  test('every key is settable from the environment', () => {
    const pair = webpush.generateVAPIDKeys();
    const { webpush: w } = loadConfig({
      env: {
        NOSTR_PUSH__WEBPUSH__VAPID_PRIVATE_KEY: pair.privateKey,
        NOSTR_PUSH__WEBPUSH__VAPID_PUBLIC_KEY: pair.publicKey,
        NOSTR_PUSH__WEBPUSH__VAPID_SUBJECT: 'https://example.org/contact',
        NOSTR_PUSH__WEBPUSH__TTL_SECS: '0',
        NOSTR_PUSH__WEBPUSH__ALLOW_PRIVATE_ENDPOINTS: 'true',
      },
    }).config;
    assert.equal(w.vapid_private_key, pair.privateKey);
    assert.equal(w.vapid_subject, 'https://example.org/contact');
    assert.equal(w.ttl_secs, 0);
    assert.equal(w.allow_private_endpoints, true);
  });

  test('a subject that is not mailto:/https:, a negative TTL, or a public key alone are refused', () => {
    assert.deepEqual(problemsOf({ NOSTR_PUSH__WEBPUSH__VAPID_SUBJECT: 'ops@example.org' }), [
      'webpush.vapid_subject must be a mailto: or https:// contact (RFC 8292 §2.1)',
    ]);
    assert.deepEqual(problemsOf({ NOSTR_PUSH__WEBPUSH__TTL_SECS: '-1' }), [
      'webpush.ttl_secs must be a whole number of seconds, 0 or more',
    ]);
    assert.deepEqual(problemsOf({ NOSTR_PUSH__WEBPUSH__VAPID_PUBLIC_KEY: webpush.generateVAPIDKeys().publicKey }), [
      'webpush.vapid_public_key is set without webpush.vapid_private_key',
    ]);
  });

  test('the transport uses the configured key pair, and a bad configured key fails at start', () => {
    const dir = mkdtempSync(join(tmpdir(), 'np-webpush-config-'));
    try {
      const pair = webpush.generateVAPIDKeys();
      const { config } = loadConfig({ env: { NOSTR_PUSH__DATA_DIR: dir, NOSTR_PUSH__WEBPUSH__VAPID_PRIVATE_KEY: pair.privateKey } });
      const deps = {
        localNtfy: { baseUrl: '', cacheDurationMs: 1000, authorizer: { authenticate: () => null, authorize: () => undefined } },
        store: { appendNtfyMessage: () => Promise.reject(new Error('unused')) },
        logger: createLogger({ level: 'silent' }),
        metrics: new Metrics(),
      };
      assert.equal(createWebPushTransport({ config, ...deps }).vapidPublicKey, pair.publicKey);
      assert.throws(
        () => createWebPushTransport({ config: { ...config, webpush: { ...config.webpush, vapid_private_key: 'AAAA' } }, ...deps }),
        /VAPID private key|32 bytes/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
