import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, mock, test } from 'node:test';
import { WebSocketServer } from 'ws';
import { RECONNECT_MAX_BACKOFF_MS } from '../../listener/backoff.ts';
import { OutboundPolicy, type OutboundRefusal } from '../../net/public-connect.ts';
import { createLogger } from '../../observability/logger.ts';
import { ManualClock } from '../../util/clock.ts';
import { RelayWatch } from './relay-watch.ts';

let wss: WebSocketServer;
let port: number;
let connections = 0;
before(async () => {
  wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  wss.on('connection', () => (connections += 1));
  await new Promise<void>((resolve) => wss.once('listening', resolve));
  port = (wss.address() as AddressInfo).port;
});
after(() => new Promise<void>((resolve) => wss.close(() => resolve())));

/**
 * Let the resolver's promise, the socket's error and its close run: they are in-process steps on
 * ticks and immediates (no I/O, no timer), so a few turns of the loop finish them.
 */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

test('a relay name resolving to loopback gets no connection, one refusal per attempt, and is asked again only after the longest backoff', async () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  const refusals: OutboundRefusal[] = [];
  const asked: string[] = [];
  const watch = new RelayWatch({
    url: `ws://relay.example.com:${port}/`,
    policy: new OutboundPolicy({
      purpose: 'nip9a_relay',
      // Loopback admitted, as in the test suites: a public name resolving to it is still refused.
      rules: { allowLoopback: true, allowPrivate: false },
      resolver: (hostname) => {
        asked.push(hostname);
        return Promise.resolve([{ address: '127.0.0.1', family: 4 }]);
      },
      onRefused: (refusal) => refusals.push(refusal),
    }),
    clock: new ManualClock(),
    logger: createLogger({ level: 'silent' }),
    onEvent: () => assert.fail('no event expected'),
  });
  try {
    watch.setFilters([{ kinds: [1] }]);
    await settle();
    assert.deepEqual(asked, ['relay.example.com']);
    assert.deepEqual(
      refusals.map((r) => [r.purpose, r.host, r.address, r.reason]),
      [['nip9a_relay', 'relay.example.com', '127.0.0.1', 'loopback']],
    );
    mock.timers.tick(RECONNECT_MAX_BACKOFF_MS - 1);
    await settle();
    assert.equal(asked.length, 1, 'not asked again before the longest backoff');
    mock.timers.tick(1);
    await settle();
    assert.equal(asked.length, 2, 'asked again once it passed');
    assert.equal(refusals.length, 2);
    assert.equal(connections, 0, 'the loopback listener saw nothing');
    assert.equal(watch.connected, false);
  } finally {
    watch.stop();
    mock.timers.reset();
  }
});

test('a refused IP literal opens nothing and is retried the same way', async () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  const refusals: OutboundRefusal[] = [];
  const watch = new RelayWatch({
    url: `ws://10.0.0.1:${port}/`,
    policy: new OutboundPolicy({ purpose: 'nip9a_relay', onRefused: (refusal) => refusals.push(refusal) }),
    clock: new ManualClock(),
    logger: createLogger({ level: 'silent' }),
    onEvent: () => assert.fail('no event expected'),
  });
  try {
    watch.setFilters([{ kinds: [1] }]);
    assert.deepEqual(
      refusals.map((r) => r.reason),
      ['private'],
      'refused before anything was opened',
    );
    mock.timers.tick(RECONNECT_MAX_BACKOFF_MS - 1);
    assert.equal(refusals.length, 1);
    mock.timers.tick(1);
    assert.equal(refusals.length, 2);
  } finally {
    watch.stop();
    mock.timers.reset();
  }
});
