import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, resolveStoreLocation } from './load.ts';
import { POSITIVE_FIELDS, validateConfig } from './validate.ts';
import { DEFAULT_EVENT_KINDS, DEFAULT_PREFERENCE_KINDS, ROLE_NAMES } from './defaults.ts';

function problemsOf(env: NodeJS.ProcessEnv, configPath?: string): string[] {
  try {
    loadConfig({ env, configPath });
    return [];
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems;
  }
}

/** `service.coalesce_window_secs` → `NOSTR_PUSH__SERVICE__COALESCE_WINDOW_SECS`. */
function envName(path: string): string {
  return `NOSTR_PUSH__${path
    .split('.')
    .map((p) => p.toUpperCase())
    .join('__')}`;
}

describe('config defaults', () => {
  test('embedded defaults load with no file and no environment', () => {
    const { config } = loadConfig({ env: {} });
    assert.equal(config.server.listen_addr, '0.0.0.0:8000');
    assert.equal(config.store.url, 'sqlite:data/nostr-push.sqlite');
    assert.deepEqual(resolveStoreLocation(config), { kind: 'sqlite', path: 'data/nostr-push.sqlite' });
    assert.deepEqual(config.roles, [...ROLE_NAMES]);
    assert.equal(config.data_dir, './data');
    assert.equal(config.service.private_key_hex, '');
    assert.equal(config.delivery.http2_client, 'builtin');
    assert.equal(config.ntfy.websocket, 'builtin');
  });

  test('divine defaults carry over (reference §1.5)', () => {
    const { config } = loadConfig({ env: {} });
    const s = config.service;
    // The relations first: the exact values asserted below would make them constant to the linter.
    assert.ok(s.video_coordinate_dedup_ttl_secs > s.processed_event_ttl_secs);
    assert.ok(s.new_post_delivery_concurrency <= s.new_post_fanout_page_size);
    assert.equal(s.process_window_days, 7);
    assert.equal(s.processed_event_ttl_secs, 604800);
    assert.equal(s.video_coordinate_dedup_ttl_secs, 31536000);
    assert.equal(s.new_post_rate_limit_secs, 3600);
    assert.equal(s.notify_list_max_creators, 1000);
    assert.equal(s.notify_list_history_limit, 5000);
    assert.equal(s.new_post_fanout_page_size, 5000);
    assert.equal(s.new_post_delivery_concurrency, 500);
    assert.equal(s.new_post_fanout_lease_secs, 1200);
    assert.equal(s.coalesce_window_secs, 7200);
    assert.equal(s.coalesce_immediate_limit, 3);
    assert.equal(s.coalesce_lease_secs, 300);
    assert.equal(s.coalesce_group_ttl_secs, 86400);
    assert.equal(s.coalesce_flush_timeout_secs, 120);
    assert.equal(s.recipient_throttle_capacity, 20);
    assert.equal(s.recipient_daily_cap, 20);
    assert.equal(config.nostr.event_silence_timeout_secs, 300);
    assert.equal(config.nostr.profile_cache_ttl_secs, 300);
    assert.equal(config.cleanup.interval_secs, 86400);
    assert.equal(config.cleanup.token_max_age_days, 90);
    assert.deepEqual(config.notification.event_kinds, DEFAULT_EVENT_KINDS);
    assert.ok(!config.notification.event_kinds.includes(1) && !config.notification.event_kinds.includes(3));
    assert.deepEqual(config.notification.default_preferences.kinds, DEFAULT_PREFERENCE_KINDS);
    assert.ok(config.notification.default_preferences.kinds.includes(1059));
    // The defaults meet every relational rule (video dedup TTL over the claim TTL, concurrency within a page, …).
    assert.deepEqual(validateConfig(config), []);
  });
});

describe('config environment', () => {
  test('the operator names work exactly', () => {
    const key = 'ab'.repeat(32);
    const { config } = loadConfig({
      env: {
        NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: key,
        NOSTR_PUSH__NOSTR__RELAYS: 'ws://127.0.0.1:7001, ws://127.0.0.1:7002',
        NOSTR_PUSH__NOSTR__PROFILE_RELAYS: 'wss://purplepag.es',
        NOSTR_PUSH__STORE__URL: 'sqlite::memory:',
        NOSTR_PUSH__SERVER__LISTEN_ADDR: '127.0.0.1:9999',
        NOSTR_PUSH__SERVER__INTERNAL_API_TOKEN: 'secret-token',
        NOSTR_PUSH__ROLES: 'listener,engine',
        NOSTR_PUSH__DATA_DIR: '/tmp/np',
        NOSTR_PUSH__SERVICE__COALESCE_WINDOW_SECS: '5',
        NOSTR_PUSH__CLEANUP__ENABLED: 'false',
        NOSTR_PUSH__NOTIFICATION__EVENT_KINDS: '7,16',
      },
    });
    assert.equal(config.service.private_key_hex, key);
    assert.deepEqual(config.nostr.relays, ['ws://127.0.0.1:7001', 'ws://127.0.0.1:7002']);
    assert.deepEqual(config.nostr.profile_relays, ['wss://purplepag.es']);
    assert.deepEqual(resolveStoreLocation(config), { kind: 'sqlite', path: ':memory:' });
    assert.equal(config.server.listen_addr, '127.0.0.1:9999');
    assert.equal(config.server.internal_api_token, 'secret-token');
    assert.deepEqual(config.roles, ['listener', 'engine']);
    assert.equal(config.data_dir, '/tmp/np');
    assert.equal(config.service.coalesce_window_secs, 5);
    assert.equal(config.cleanup.enabled, false);
    assert.deepEqual(config.notification.event_kinds, [7, 16]);
  });

  test('RELAY_URL is a one-relay alias', () => {
    const { config } = loadConfig({ env: { NOSTR_PUSH__NOSTR__RELAY_URL: 'wss://relay.divine.video' } });
    assert.deepEqual(config.nostr.relays, ['wss://relay.divine.video']);
  });

  test('the data directory moves the default SQLite file', () => {
    const { config } = loadConfig({ env: { NOSTR_PUSH__DATA_DIR: '/var/lib/np' } });
    assert.equal(config.store.url, 'sqlite:/var/lib/np/nostr-push.sqlite');
  });

  test('NOSTR_PUSH__REDIS__URL and REDIS_URL select Redis; STORE__URL wins over both', () => {
    assert.equal(loadConfig({ env: { NOSTR_PUSH__REDIS__URL: 'redis://a:6379' } }).config.store.url, 'redis://a:6379');
    assert.equal(loadConfig({ env: { REDIS_URL: 'redis://b:6379' } }).config.store.url, 'redis://b:6379');
    assert.equal(
      loadConfig({ env: { REDIS_URL: 'redis://b:6379', NOSTR_PUSH__STORE__URL: 'sqlite::memory:' } }).config.store.url,
      'sqlite::memory:',
    );
  });

  test('a redis+cluster:// URL with more seeds from redis.cluster_nodes selects Redis Cluster, cluster layout by default', () => {
    const { config } = loadConfig({
      env: {
        NOSTR_PUSH__STORE__URL: 'redis+cluster://10.0.0.1:7000,10.0.0.2:7000',
        NOSTR_PUSH__REDIS__CLUSTER_NODES: '10.0.0.3:7000, 10.0.0.4:7000',
      },
    });
    assert.deepEqual(
      resolveStoreLocation(config),
      { kind: 'redis', url: 'redis+cluster://10.0.0.1:7000,10.0.0.2:7000', clusterNodes: ['10.0.0.3:7000', '10.0.0.4:7000'] },
      'the seeds of both settings reach the store; no layout means the URL decides (cluster)',
    );
    const single = loadConfig({ env: { REDIS_URL: 'redis://b:6379', NOSTR_PUSH__REDIS__KEY_LAYOUT: 'cluster' } }).config;
    assert.deepEqual(
      resolveStoreLocation(single),
      { kind: 'redis', url: 'redis://b:6379', layout: 'cluster' },
      'an explicit layout is carried',
    );
  });

  test('Redis Cluster settings that cannot work are refused with the reason', () => {
    assert.deepEqual(problemsOf({ NOSTR_PUSH__STORE__URL: 'redis+cluster://10.0.0.1:7000', NOSTR_PUSH__REDIS__KEY_LAYOUT: 'divine' }), [
      'redis.key_layout: divine cannot run on a Redis Cluster; use cluster (the default there)',
    ]);
    assert.deepEqual(problemsOf({ NOSTR_PUSH__REDIS__KEY_LAYOUT: 'sharded' }), [
      'redis.key_layout: "sharded" must be one of divine, cluster (or empty: by the URL)',
    ]);
    assert.deepEqual(problemsOf({ REDIS_URL: 'redis://b:6379', NOSTR_PUSH__REDIS__CLUSTER_NODES: '10.0.0.3:7000' }), [
      'redis.cluster_nodes: needs a redis+cluster:// store URL',
    ]);
    assert.deepEqual(problemsOf({ NOSTR_PUSH__STORE__URL: 'redis+cluster://10.0.0.1', NOSTR_PUSH__REDIS__CLUSTER_NODES: '' }), [
      'store.url / redis.cluster_nodes: "10.0.0.1" is not host:port',
    ]);
    assert.deepEqual(problemsOf({ REDIS_URL: 'redis://b:6379', NOSTR_PUSH__REDIS__QUEUE_SHARDS: '4' }), [
      'redis.queue_shards: the divine key layout has exactly one shard per queue (got 4); shards need redis.key_layout: cluster',
    ]);
    assert.deepEqual(problemsOf({ NOSTR_PUSH__STORE__URL: 'redis+cluster://10.0.0.1:7000', NOSTR_PUSH__REDIS__QUEUE_SHARDS: '257' }), [
      "redis.queue_shards must be a whole number from 0 (the layout's default) to 256, got 257",
    ]);
  });

  test('redis.queue_shards reaches the store location; 0 leaves the layout default', () => {
    const cluster = (shards: string) =>
      resolveStoreLocation(
        loadConfig({ env: { NOSTR_PUSH__STORE__URL: 'redis+cluster://10.0.0.1:7000', NOSTR_PUSH__REDIS__QUEUE_SHARDS: shards } }).config,
      );
    assert.deepEqual(cluster('16'), { kind: 'redis', url: 'redis+cluster://10.0.0.1:7000', queueShards: 16 }, 'a count is carried');
    assert.deepEqual(cluster('0'), { kind: 'redis', url: 'redis+cluster://10.0.0.1:7000' }, '0 means the layout default: nothing carried');
  });

  test('redis.wait_replicas and redis.wait_timeout_ms reach the store location when set; bad values are refused', () => {
    const url = 'redis+cluster://10.0.0.1:7000';
    const location = (env: Record<string, string>) =>
      resolveStoreLocation(loadConfig({ env: { NOSTR_PUSH__STORE__URL: url, ...env } }).config);
    assert.deepEqual(location({}), { kind: 'redis', url }, 'auto and the default timeout: nothing carried, the store decides');
    assert.deepEqual(
      location({ NOSTR_PUSH__REDIS__WAIT_REPLICAS: '0', NOSTR_PUSH__REDIS__WAIT_TIMEOUT_MS: '1000' }),
      { kind: 'redis', url, waitReplicas: 0, waitTimeoutMs: 1000 },
      'off and a longer timeout are carried',
    );
    assert.deepEqual(
      problemsOf({ NOSTR_PUSH__STORE__URL: url, NOSTR_PUSH__REDIS__WAIT_REPLICAS: '-2', NOSTR_PUSH__REDIS__WAIT_TIMEOUT_MS: '0' }),
      [
        'redis.wait_replicas must be -1 (auto), 0 (off) or a number of replicas up to 16, got -2',
        'redis.wait_timeout_ms must be a whole number of ms from 1 to 10000, got 0',
      ],
      'out of range',
    );
  });

  test('environment overrides the YAML file, which overrides defaults', () => {
    const dir = mkdtempSync(join(tmpdir(), 'np-config-'));
    const file = join(dir, 'config.yaml');
    writeFileSync(
      file,
      'service:\n  coalesce_window_secs: 60\n  coalesce_immediate_limit: 5\nnostr:\n  relays: [ws://127.0.0.1:1]\nroles: all\n',
    );
    const { config, sources } = loadConfig({ env: { NOSTR_PUSH__SERVICE__COALESCE_WINDOW_SECS: '30' }, configPath: file });
    assert.equal(config.service.coalesce_window_secs, 30);
    assert.equal(config.service.coalesce_immediate_limit, 5);
    assert.deepEqual(config.nostr.relays, ['ws://127.0.0.1:1']);
    assert.deepEqual(sources, ['defaults', `file ${file}`, 'environment']);
  });
});

describe('config validation', () => {
  for (const [field] of POSITIVE_FIELDS) {
    test(`${field} at 0 is rejected naming the field`, () => {
      const problems = problemsOf({ [envName(field)]: '0' });
      assert.ok(
        problems.some((p) => p.startsWith(`${field} must be greater than zero: at 0, `)),
        `expected a problem for ${field}, got ${JSON.stringify(problems)}`,
      );
    });
  }

  test('an empty internal API token is rejected when configured', () => {
    assert.deepEqual(problemsOf({ NOSTR_PUSH__SERVER__INTERNAL_API_TOKEN: '' }), [
      'server.internal_api_token must not be empty when configured',
    ]);
  });

  test('relational checks', () => {
    assert.ok(
      problemsOf({ NOSTR_PUSH__SERVICE__VIDEO_COORDINATE_DEDUP_TTL_SECS: '10' }).some((p) =>
        p.includes('video_coordinate_dedup_ttl_secs must be greater'),
      ),
    );
    assert.ok(problemsOf({ NOSTR_PUSH__SERVICE__NEW_POST_DELIVERY_CONCURRENCY: '6000' }).some((p) => p.includes('must not exceed')));
    assert.ok(problemsOf({ NOSTR_PUSH__SERVICE__COALESCE_FLUSH_TIMEOUT_SECS: '200' }).some((p) => p.includes('twice')));
  });

  test('mute list bounds: whole numbers, and the cache budget holds one list at the per-list bound', () => {
    assert.deepEqual(problemsOf({ NOSTR_PUSH__NOSTR__MUTE_LIST_MAX_ITEMS: '0' }), [
      'nostr.mute_list_max_items must be a whole number, 1 or more',
    ]);
    assert.deepEqual(problemsOf({ NOSTR_PUSH__NOSTR__MUTE_LIST_MAX_ITEMS: '100', NOSTR_PUSH__NOSTR__LIST_CACHE_MUTE_ITEMS: '300' }), []);
    assert.deepEqual(problemsOf({ NOSTR_PUSH__NOSTR__MUTE_LIST_MAX_ITEMS: '100', NOSTR_PUSH__NOSTR__LIST_CACHE_MUTE_ITEMS: '299' }), [
      'nostr.list_cache_mute_items must be a whole number, at least 3 × nostr.mute_list_max_items',
    ]);
  });

  test('the protocol stacks: builtin by default, the standard fallbacks by name, anything else refused', () => {
    assert.deepEqual(problemsOf({ NOSTR_PUSH__DELIVERY__HTTP2_CLIENT: 'node', NOSTR_PUSH__NTFY__WEBSOCKET: 'ws' }), []);
    assert.deepEqual(problemsOf({ NOSTR_PUSH__DELIVERY__HTTP2_CLIENT: 'undici', NOSTR_PUSH__NTFY__WEBSOCKET: 'uws' }), [
      'delivery.http2_client: "undici" must be one of builtin, node',
      'ntfy.websocket: "uws" must be one of builtin, ws',
    ]);
  });

  test('log.format: auto by default; auto, json and pretty by name, anything else refused', () => {
    assert.equal(loadConfig({ env: {} }).config.log.format, 'auto');
    for (const format of ['auto', 'json', 'pretty']) assert.deepEqual(problemsOf({ NOSTR_PUSH__LOG__FORMAT: format }), []);
    assert.deepEqual(problemsOf({ NOSTR_PUSH__LOG__FORMAT: 'text' }), ['log.format: "text" must be one of auto, json, pretty']);
  });

  test('nip9a.post_threads: 0 is the main thread; fractions and negatives are refused', () => {
    assert.deepEqual(problemsOf({ NOSTR_PUSH__NIP9A__POST_THREADS: '0' }), []);
    for (const bad of ['-1', '1.5'])
      assert.deepEqual(
        problemsOf({ NOSTR_PUSH__NIP9A__POST_THREADS: bad }),
        ['nip9a.post_threads must be a whole number, 0 or more (0 makes the callback POSTs on the main thread)'],
        `post_threads ${bad}`,
      );
  });

  test('server.max_body_bytes: 64 KiB by default; below 16 KiB or not whole bytes is refused with the floor', () => {
    assert.equal(loadConfig({ env: {} }).config.server.max_body_bytes, 65_536);
    assert.equal(loadConfig({ env: { NOSTR_PUSH__SERVER__MAX_BODY_BYTES: '1048576' } }).config.server.max_body_bytes, 1_048_576);
    for (const bad of ['16383', '0', '20000.5'])
      assert.deepEqual(
        problemsOf({ NOSTR_PUSH__SERVER__MAX_BODY_BYTES: bad }),
        ["server.max_body_bytes must be a whole number of bytes, at least 16384 (routes' own bodies are up to that size)"],
        bad,
      );
  });

  test('one line per wrong key, all reported at once', () => {
    const problems = problemsOf({
      NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: 'nothex',
      NOSTR_PUSH__SERVER__LISTEN_ADDR: 'nowhere',
      NOSTR_PUSH__NOSTR__RELAYS: 'http://x',
      NOSTR_PUSH__STORE__URL: 'mysql://x',
      NOSTR_PUSH__ROLES: 'listener,bogus',
      NOSTR_PUSH__SERVICE__NOPE: '1',
      NOSTR_PUSH__QUEUE__MAX_ATTEMPTS: 'ten',
    });
    assert.equal(problems.length, 7, JSON.stringify(problems));
  });

  test('unknown YAML keys are reported, not silently ignored', () => {
    const dir = mkdtempSync(join(tmpdir(), 'np-config-'));
    const file = join(dir, 'c.yaml');
    writeFileSync(file, 'service:\n  coalesce_windw_secs: 60\n');
    assert.deepEqual(problemsOf({}, file), [`service.coalesce_windw_secs: unknown key (from ${file})`]);
  });

  test('a removed key is refused with what replaced it', () => {
    const [problem, ...rest] = problemsOf({ NOSTR_PUSH__NIP9A__MAX_REGISTRATIONS_PER_RELAY: '32' });
    assert.deepEqual(rest, []);
    assert.match(
      problem ?? '',
      /^nip9a\.max_registrations_per_relay: removed: .*max_registrations_per_author_per_relay and nip9a\.max_watched_relays/,
    );
  });

  test('nip9a.max_registrations_per_author_per_relay and nip9a.max_watched_relays must be positive', () => {
    const problems = problemsOf({
      NOSTR_PUSH__NIP9A__MAX_REGISTRATIONS_PER_AUTHOR_PER_RELAY: '0',
      NOSTR_PUSH__NIP9A__MAX_WATCHED_RELAYS: '-1',
    });
    assert.equal(problems.length, 2, JSON.stringify(problems));
    assert.ok(problems.some((p) => p.startsWith('nip9a.max_registrations_per_author_per_relay')));
    assert.ok(problems.some((p) => p.startsWith('nip9a.max_watched_relays')));
  });
});

describe('example configuration file', () => {
  test('config/nostr-push.example.yaml holds every key literally, at its default', async () => {
    const { readFileSync } = await import('node:fs');
    const { parse } = await import('yaml');
    const { defaultConfig } = await import('./defaults.ts');
    const path = new URL('../../config/nostr-push.example.yaml', import.meta.url);
    const text = readFileSync(path, 'utf8');
    const parsed = parse(text) as Record<string, unknown>;
    // Unset strings are written as `key:` (null) in the file: present, but not "configured empty".
    const nullEmpty = (v: unknown): unknown =>
      v === ''
        ? null
        : Array.isArray(v)
          ? v
          : typeof v === 'object' && v !== null
            ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, nullEmpty(x)]))
            : v;
    const expected = nullEmpty({ ...defaultConfig(), roles: 'all' });
    assert.deepEqual(parsed, expected);
    // Literal keys, so a typo cannot hide behind a default (divine's shipped-YAML test).
    for (const key of Object.keys(defaultConfig().service)) assert.match(text, new RegExp(`^  ${key}:`, 'm'), key);
    // Loading it changes nothing against the embedded defaults.
    assert.deepEqual(loadConfig({ env: {}, configPath: path.pathname }).config, loadConfig({ env: {} }).config);
  });
});
