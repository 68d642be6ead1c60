/**
 * Bad input end to end: the real binary listens to a hostile relay (garbage frames, huge tags,
 * forged signatures, undecryptable ciphertexts, CLOSED storms) beside a real one. It logs, counts
 * and carries on: /health stays ok, stored registrations stay, new ones still arrive.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REGISTER_TOKEN } from '../../src/nostr/kinds.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import type { StorePort } from '../../src/store/port.ts';
import { controlEvent, makeUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startRawRelay, startTestRelay, isReqFor, type RawRelay, type TestRelay } from '../support/relay.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';

describe('bad input from a hostile relay', () => {
  let good: TestRelay;
  let hostile: RawRelay;
  let service: ServiceProcess;
  let reader: StorePort;
  let dataDir: string;
  const serviceKey = makeUser();
  const alice = makeUser();
  const mallory = makeUser();
  let junkSent = 0;

  const counter = async (pattern: string): Promise<number> => {
    const text = await (await fetch(`${service.baseUrl}/metrics`)).text();
    return [...text.matchAll(new RegExp(pattern, 'gm'))].reduce((sum, m) => sum + Number(m[1]), 0);
  };

  before(async () => {
    good = await startTestRelay();
    hostile = await startRawRelay((connection, frame) => {
      if (!isReqFor(frame)) return;
      const subId = String(frame[1]);
      const valid = signEvent(
        { kind: REGISTER_TOKEN, created_at: Math.floor(Date.now() / 1000), tags: [['p', serviceKey.pubkey]], content: 'A'.repeat(200) },
        mallory.secret,
      );
      const forged = {
        ...signEvent(
          { kind: REGISTER_TOKEN, created_at: Math.floor(Date.now() / 1000), tags: [['p', serviceKey.pubkey]], content: 'x' },
          mallory.secret,
        ),
        content: 'tampered',
      };
      const hugeTags = signEvent(
        {
          kind: REGISTER_TOKEN,
          created_at: Math.floor(Date.now() / 1000),
          tags: Array.from({ length: 10_000 }, (_, i) => ['t', String(i)]),
          content: '',
        },
        mallory.secret,
      );
      for (const junk of [
        'not json at all',
        '["EVENT"]',
        `["EVENT","${subId}",42]`,
        `["EVENT","${subId}",{"id":"zz"}]`,
        '{"an":"object"}',
        '[]',
        `["EOSE"]`,
      ])
        connection.send(junk);
      connection.send(['EVENT', subId, forged]);
      connection.send(['EVENT', subId, hugeTags]);
      // Signed correctly, addressed to the service, but its content is no NIP-44 payload for us.
      connection.send(['EVENT', subId, valid]);
      connection.send(['EOSE', subId]);
      junkSent++;
      if (junkSent <= 6) connection.send(['CLOSED', subId, 'error: go away']);
    });
    dataDir = mkdtempSync(join(tmpdir(), 'np-bad-input-'));
    service = await startServiceProcess({
      env: {
        NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: serviceKey.secret,
        NOSTR_PUSH__NOSTR__RELAYS: `${good.url},${hostile.url}`,
        NOSTR_PUSH__STORE__URL: `sqlite:${join(dataDir, 'np.sqlite')}`,
        NOSTR_PUSH__DATA_DIR: dataDir,
        NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
      },
    });
    reader = await openSqliteStore({ path: join(dataDir, 'np.sqlite') });
    await service.waitForLog((l) => l.msg === 'live subscriptions open' && l.relay === good.url, 15_000, 'good relay live');
  });

  after(async () => {
    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- before() can fail before it assigns these. */
    await service?.stop();
    await reader?.close();
    await good?.stop();
    await hostile?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */
  });

  test('the service logs, counts and carries on; nothing stored is lost', async () => {
    await publish(good.url, controlEvent(alice, REGISTER_TOKEN, { token: 'alice-before' }, serviceKey.pubkey));
    await eventually(
      async () => ((await reader.tokenOwner('alice-before')) === alice.pubkey ? true : undefined),
      15_000,
      'first registration',
    );

    await eventually(
      async () => ((await counter(/^push_relay_protocol_errors_total\{[^}]*\} (\d+)/.source)) >= 5 ? true : undefined),
      15_000,
      'protocol errors counted',
    );
    await eventually(
      async () => ((await counter(/^push_events_invalid_total\{[^}]*\} (\d+)/.source)) >= 2 ? true : undefined),
      15_000,
      'invalid events counted',
    );
    await eventually(
      async () =>
        (await counter(/^push_control_events_total\{kind="3079",outcome="(?:decrypt_failed|plaintext_rejected)"\} (\d+)/.source)) >= 1
          ? true
          : undefined,
      15_000,
      'undecryptable content counted',
    );
    // The CLOSED storm made the listener reconnect to the hostile relay at least once more.
    await eventually(() => (hostile.connections.length >= 2 ? true : undefined), 30_000, 'a reconnect after the CLOSED storm');

    const health = await fetch(`${service.baseUrl}/health`);
    assert.equal(health.status, 200);
    await publish(good.url, controlEvent(alice, REGISTER_TOKEN, { token: 'alice-after' }, serviceKey.pubkey));
    await eventually(
      async () => ((await reader.tokenOwner('alice-after')) === alice.pubkey ? true : undefined),
      15_000,
      'second registration',
    );
    assert.equal(await reader.tokenOwner('alice-before'), alice.pubkey, 'the earlier registration is still there');
    assert.equal(service.child.exitCode, null, 'still running');
  });
});
