/**
 * Web Push delivery to an endpoint on our own ntfy server, read by a WebSocket subscriber, over
 * both WebSocket servers (`ntfy.websocket`): the Web Push transport encrypts (RFC 8291) and
 * appends to the topic in the store, the ntfy server streams it on `/ws` (our framing or the `ws`
 * package), and `http_ece` decrypts what the subscriber received with its private key.
 */
import assert from 'node:assert/strict';
import { createECDH, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as ece from 'http_ece';
import { defaultConfig, NTFY_WEBSOCKET_KINDS } from '../../src/config/defaults.ts';
import { createWebPushTransport } from '../../src/delivery/webpush/index.ts';
import type { WebPushTransport } from '../../src/delivery/webpush/transport.ts';
import { ntfySettings } from '../../src/ntfy/config.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { openWs } from './client.ts';
import { startNtfyTestServer, type NtfyTestServer } from './harness.ts';

for (const websocket of NTFY_WEBSOCKET_KINDS) {
  describe(`Web Push to our own ntfy topic, read over WebSocket (ntfy.websocket: ${websocket})`, () => {
    let server: NtfyTestServer;
    let transport: WebPushTransport;
    let dataDir: string;

    before(async () => {
      server = await startNtfyTestServer({ config: { websocket } });
      dataDir = mkdtempSync(join(tmpdir(), 'np-webpush-ws-'));
      const config = defaultConfig();
      config.data_dir = dataDir;
      config.ntfy = { ...config.ntfy, base_url: server.baseUrl, websocket };
      transport = createWebPushTransport({
        config,
        localNtfy: ntfySettings(config.ntfy),
        store: server.store,
        logger: createLogger({ level: 'silent' }),
        metrics: new Metrics(),
      });
    });
    after(async () => {
      await transport.close();
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    test('the push reaches the subscriber as one message frame, and decrypts to the data map', async () => {
      const topic = `upWebPushWs${websocket === 'ws' ? 'P' : 'B'}`;
      const subscriber = await openWs(`${server.baseUrl.replace('http', 'ws')}/${topic}/ws`);
      try {
        assert.equal((await subscriber.nextJson('the open event')).event, 'open');
        const ua = createECDH('prime256v1');
        ua.generateKeys();
        const auth = randomBytes(16).toString('base64url');
        const endpoint = `${server.baseUrl}/${topic}?up=1`;
        const outcomes = await transport.sendBatch(
          [{ token: endpoint, transport: 'unifiedpush', endpoint, p256dh: ua.getPublicKey().toString('base64url'), auth }],
          { data: { type: 'like', title: 'New like' } },
        );
        assert.deepEqual(outcomes.get(endpoint), { ok: true });
        const message = await subscriber.nextMessage('the push');
        assert.equal(message.topic, topic);
        assert.equal(message.encoding, 'base64');
        const body = Buffer.from(String(message.message), 'base64');
        const plaintext = ece.decrypt(body, { version: 'aes128gcm', privateKey: ua, authSecret: auth });
        assert.deepEqual(JSON.parse(plaintext.toString('utf8')), { type: 'like', title: 'New like' });
      } finally {
        subscriber.close();
        await subscriber.closed;
      }
    });
  });
}
