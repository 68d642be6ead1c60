import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEventVerifier } from '../nostr/event.ts';
import { generateSecretKey, publicKeyOf } from '../nostr/keys.ts';
import { Metrics } from '../observability/metrics.ts';
import { MemoryCursorStore, RecordingSink, silentLogger } from '../../test/listener/fakes.ts';
import { createListener, ListenerConfigError, type ListenerOptions } from './listener.ts';

const secret = generateSecretKey();

async function options(): Promise<ListenerOptions> {
  return {
    relays: ['wss://relay.example'],
    servicePubkey: publicKeyOf(secret),
    serviceSecretKeyHex: secret,
    liveKinds: [7],
    store: new MemoryCursorStore(),
    sink: new RecordingSink().sink,
    verifier: await createEventVerifier(),
    logger: silentLogger(),
    metrics: new Metrics(),
  };
}

test('createListener refuses options that cannot work', async () => {
  const defaults = await options();
  const bad: Array<Partial<ListenerOptions>> = [
    { relays: [] },
    { relays: ['not a url'] },
    { relays: ['https://relay.example'] },
    { servicePubkey: 'npub1nothex' },
    { eventSilenceTimeoutSecs: 0 },
    { notifyListHistoryLimit: -1 },
  ];
  for (const override of bad) {
    assert.throws(() => createListener({ ...defaults, ...override }), ListenerConfigError, JSON.stringify(override));
  }
});

test('duplicate relay URLs are listened to once', async () => {
  const listener = createListener({ ...(await options()), relays: ['wss://a.example', 'wss://a.example', 'wss://b.example'] });
  assert.deepEqual(
    listener.status().map((s) => s.url),
    ['wss://a.example', 'wss://b.example'],
  );
  await listener.stop();
});

test('a listener stopped before it started settles done', async () => {
  const listener = createListener(await options());
  await listener.stop();
  await listener.done;
  const [status] = listener.status();
  assert.equal(status?.connected, false);
  assert.equal(status.reconnects, 0);
});
