import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createECDH, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ece from 'http_ece';
import { defaultConfig } from '../../config/defaults.ts';
import { ntfySettings } from '../../ntfy/config.ts';
import { createLogger } from '../../observability/logger.ts';
import { Metrics } from '../../observability/metrics.ts';
import type { NtfyMessage, NtfyMessageContent } from '../../store/port-ntfy.ts';
import type { DeviceRegistration } from '../../store/port.ts';
import { createWebPushTransport } from './index.ts';

const BASE = 'https://push.nostr-push.test';

function setup(ntfyOverrides: Partial<ReturnType<typeof defaultConfig>['ntfy']> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'np-local-append-'));
  const config = defaultConfig();
  config.data_dir = dataDir;
  config.ntfy = { ...config.ntfy, base_url: BASE, ...ntfyOverrides };
  const appended: { topic: string; content: NtfyMessageContent; ttlMs: number }[] = [];
  const store = {
    async appendNtfyMessage(topic: string, content: NtfyMessageContent, ttlMs: number): Promise<NtfyMessage> {
      appended.push({ topic, content, ttlMs });
      return { ...content, id: '000000000001', topic, timeMs: 0, expiresMs: ttlMs };
    },
  };
  const transport = createWebPushTransport({
    config,
    localNtfy: ntfySettings(config.ntfy),
    store,
    logger: createLogger({ level: 'silent' }),
    metrics: new Metrics(),
  });
  const ua = createECDH('prime256v1');
  ua.generateKeys();
  const auth = randomBytes(16).toString('base64url');
  const deviceAt = (endpoint: string): DeviceRegistration => ({
    token: endpoint,
    transport: 'unifiedpush',
    endpoint,
    p256dh: ua.getPublicKey().toString('base64url'),
    auth,
  });
  return { transport, appended, deviceAt, ua, auth, cleanup: () => rmSync(dataDir, { recursive: true, force: true }) };
}

describe('the local ntfy shortcut wired to the store', () => {
  test('stored as a UnifiedPush publish would be (base64 for binary), kept for ntfy.cache_duration; the bytes decrypt', async () => {
    const s = setup({ cache_duration: '2h' });
    try {
      const endpoint = `${BASE}/upAbCdEf123456?up=1`;
      const outcomes = await s.transport.sendBatch([s.deviceAt(endpoint)], { data: { type: 'like', title: 'New like' } });
      assert.deepEqual(outcomes.get(endpoint), { ok: true });
      assert.equal(s.appended.length, 1);
      const [entry] = s.appended as [(typeof s.appended)[number]];
      assert.equal(entry.topic, 'upAbCdEf123456');
      assert.equal(entry.ttlMs, 2 * 3600 * 1000);
      assert.equal(entry.content.encoding, 'base64');
      const body = Buffer.from(entry.content.message, 'base64');
      assert.deepEqual(JSON.parse(ece.decrypt(body, { version: 'aes128gcm', privateKey: s.ua, authSecret: s.auth }).toString()), {
        type: 'like',
        title: 'New like',
      });
    } finally {
      s.cleanup();
    }
  });

  test('topic access rules apply as to an anonymous publish: refused is unauthorized, an ?auth= token grants it', async () => {
    const s = setup({ auth_default_access: 'deny-all', auth_tokens: ['tk_secret:wo:up*'] });
    try {
      const refused = `${BASE}/upRefused12345?up=1`;
      const outcome = (await s.transport.sendBatch([s.deviceAt(refused)], { data: { title: 't' } })).get(refused);
      assert.ok(outcome && !outcome.ok);
      assert.equal(outcome.error.kind, 'unauthorized');
      assert.equal(s.appended.length, 0);
      const withToken = `${BASE}/upGranted12345?up=1&auth=${Buffer.from('Bearer tk_secret').toString('base64url')}`;
      assert.deepEqual((await s.transport.sendBatch([s.deviceAt(withToken)], { data: { title: 't' } })).get(withToken), { ok: true });
      assert.equal(s.appended[0]?.topic, 'upGranted12345');
    } finally {
      s.cleanup();
    }
  });
});
