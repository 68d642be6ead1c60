import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { Config } from './config/defaults.ts';
import { loadConfig } from './config/load.ts';
import { addressUrl, consoleUrl, describeTransports, startupSummary, transportStates } from './startup-summary.ts';

const V4 = { address: '0.0.0.0', port: 8000, family: 'IPv4' };

function config(change: (c: Config) => void = () => undefined): Config {
  const c = loadConfig({ env: {} }).config;
  change(c);
  return c;
}

describe('the start-up summary', () => {
  test('URLs: the bound address, IPv6 in brackets; the console at localhost for all interfaces, or under public_url', () => {
    assert.equal(addressUrl(V4), 'http://0.0.0.0:8000');
    assert.equal(addressUrl({ address: '::1', port: 9, family: 'IPv6' }), 'http://[::1]:9');
    assert.equal(consoleUrl(V4, ''), 'http://localhost:8000/console');
    assert.equal(consoleUrl({ address: '::', port: 8000, family: 'IPv6' }, ''), 'http://localhost:8000/console');
    assert.equal(consoleUrl({ address: '10.0.0.5', port: 8000, family: 'IPv4' }, ''), 'http://10.0.0.5:8000/console');
    assert.equal(consoleUrl(V4, 'https://push.example.com'), 'https://push.example.com/console');
  });

  test('transports: on with what they send through, off with the keys that turn them on', () => {
    const off = transportStates(config());
    assert.equal(
      describeTransports(off),
      'on: webpush (Web Push and UnifiedPush endpoints); off: fcm (firebase.credentials_path is not set), apns (apns.key_path, apns.key_id, apns.team_id, apns.bundle_id not set)',
    );
    const on = transportStates(
      config((c) => {
        c.firebase.credentials_path = '/etc/sa.json';
        c.firebase.project_id = 'clips-prod';
        Object.assign(c.apns, { key_path: '/k.p8', key_id: 'ABCDEFGHIJ', team_id: 'KLMNOPQRST', bundle_id: 'com.x', sandbox: true });
      }),
    );
    assert.equal(
      describeTransports(on),
      'on: fcm (project clips-prod), apns (bundle com.x, sandbox), webpush (Web Push and UnifiedPush endpoints)',
    );
    const partial = transportStates(config((c) => (c.apns.key_path = '/k.p8')));
    assert.deepEqual(partial[1], { name: 'apns', on: false, detail: 'apns.key_id, apns.team_id, apns.bundle_id not set' });
  });

  test('several apps: one key line each, relays and transports per app', () => {
    const top = config();
    const clips = config((c) => {
      c.nostr.relays = ['wss://clips.example'];
      c.firebase.credentials_path = '/sa.json';
    });
    const lines = startupSummary({
      version: '9.9.9',
      config: top,
      httpAddress: { ...V4 },
      apps: [
        { id: 'default', npub: 'npub1default', config: top },
        { id: 'clips', npub: 'npub1clips', config: clips },
      ],
    }).map((l) => l.msg);
    assert.deepEqual(lines.slice(0, 5), [
      'nostr-push 9.9.9 ready, roles listener, engine, delivery, scheduler, janitor, api, pusher, gateway',
      'listening on http://0.0.0.0:8000',
      'console: http://localhost:8000/console',
      'app default: service key npub1default',
      'app clips: service key npub1clips',
    ]);
    assert.ok(lines.includes('relays (clips): wss://clips.example'));
    assert.ok(lines.some((l) => l.startsWith('transports (clips) on: fcm (project openvine-co), webpush')));
    assert.ok(lines.some((l) => l.startsWith('transports (default) on: webpush')));
  });

  test('a process without HTTP or transports says so instead of listing them', () => {
    const janitor = config((c) => (c.roles = ['janitor']));
    const lines = startupSummary({
      version: '1',
      config: janitor,
      httpAddress: null,
      apps: [{ id: 'default', npub: 'n', config: janitor }],
    });
    assert.deepEqual(
      lines.map((l) => l.msg),
      [
        'nostr-push 1 ready, roles janitor',
        'no HTTP server in this process (only the api and pusher roles serve HTTP)',
        'app default: service key n',
        'store: sqlite:data/nostr-push.sqlite',
        'transports: none in this process (roles delivery, api and scheduler push)',
      ],
    );
  });

  test('the console line says why there is no console', () => {
    const off = config((c) => (c.console.enabled = false));
    const msgs = startupSummary({ version: '1', config: off, httpAddress: { ...V4 }, apps: [] }).map((l) => l.msg);
    assert.ok(msgs.includes('console: off (console.enabled is false)'));
  });
});
