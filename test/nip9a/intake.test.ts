/** Registrations entering the gateway (intake.ts): addressable replacement, limits and NIP-09 deletion. */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { defaultConfig } from '../../src/config/defaults.ts';
import { gatewaySettings, nip9aConfigProblems } from '../../src/nip9a/gateway/config.ts';
import { acceptGatewayEvent, type IntakeDeps } from '../../src/nip9a/gateway/intake.ts';
import { gatewayMetrics } from '../../src/nip9a/gateway/metrics.ts';
import type { NostrEvent } from '../../src/nostr/event.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { makeUser } from '../support/nostr-client.ts';

const alice = makeUser();
const mallory = makeUser();
const T = 1_800_000_000;

function reg(d: string, createdAt = T, secret = alice.secret, callback = 'https://push.example.org/cb'): NostrEvent {
  return signEvent(
    {
      kind: 30390,
      created_at: createdAt,
      content: '',
      tags: [
        ['d', d],
        ['relay', 'wss://relay.example.com'],
        ['filter', '{"kinds":[1]}'],
        ['callback', callback],
      ],
    },
    secret,
  );
}

describe('NIP-9a intake', () => {
  let store: StorePort;
  let deps: IntakeDeps;
  let changes = 0;

  beforeEach(async () => {
    store = await openSqliteStore({ path: ':memory:' });
    changes = 0;
    deps = {
      store,
      settings: gatewaySettings({ ...defaultConfig().nip9a, callback_origins: ['https://push.example.org'] }),
      metrics: gatewayMetrics(new Metrics()),
      logger: createLogger({ level: 'silent' }),
      onChange: () => (changes += 1),
    };
  });
  afterEach(async () => {
    await store.close();
  });

  test('a registration is stored; a newer one replaces it; an older one is a harmless duplicate', async () => {
    assert.deepEqual(await acceptGatewayEvent(deps, reg('x'), alice.pubkey, 'http'), { accepted: true, outcome: 'stored', message: '' });
    const newer = reg('x', T + 1);
    assert.equal((await acceptGatewayEvent(deps, newer, alice.pubkey, 'http')).outcome, 'replaced');
    const older = await acceptGatewayEvent(deps, reg('x', T - 1), alice.pubkey, 'http');
    assert.deepEqual([older.accepted, older.outcome], [true, 'stale']);
    assert.match(older.message, /^duplicate:/);
    assert.equal((await store.getNip9aRegistration(alice.pubkey, 'x'))?.eventId, newer.id);
    assert.equal(changes, 2);
  });

  test('another author, other kinds, blocked callbacks and the per-author limit are refused with NIP-01 prefixes', async () => {
    assert.match((await acceptGatewayEvent(deps, reg('x', T, mallory.secret), alice.pubkey, 'relay')).message, /^restricted:/);
    const note = signEvent({ kind: 1, created_at: T, content: '', tags: [] }, alice.secret);
    assert.match((await acceptGatewayEvent(deps, note, alice.pubkey, 'relay')).message, /^blocked: kind 1/);
    assert.match(
      (await acceptGatewayEvent(deps, reg('x', T, alice.secret, 'https://other.example.net/cb'), alice.pubkey, 'relay')).message,
      /^blocked: callback: origin https:\/\/other.example.net is not on this gateway's allowlist/,
    );
    for (const d of ['a', 'b', 'c', 'd']) assert.equal((await acceptGatewayEvent(deps, reg(d), alice.pubkey, 'relay')).outcome, 'stored');
    assert.match((await acceptGatewayEvent(deps, reg('e'), alice.pubkey, 'relay')).message, /^rate-limited: at most 4/);
  });

  test('per author per relay and the watched-relay cap answer with their own outcome and reason', async () => {
    deps = {
      ...deps,
      settings: gatewaySettings({
        ...defaultConfig().nip9a,
        callback_origins: ['https://push.example.org'],
        max_registrations_per_author_per_relay: 2,
        max_watched_relays: 1,
      }),
    };
    for (const d of ['a', 'b']) assert.equal((await acceptGatewayEvent(deps, reg(d), alice.pubkey, 'relay')).outcome, 'stored');
    const third = await acceptGatewayEvent(deps, reg('c'), alice.pubkey, 'relay');
    assert.deepEqual([third.accepted, third.outcome], [false, 'limit']);
    assert.match(third.message, /^rate-limited: at most 2 of your registrations may name wss:\/\/relay\.example\.com\//);
    const elsewhere = signEvent(
      {
        kind: 30390,
        created_at: T,
        content: '',
        tags: [
          ['d', 'new-relay'],
          ['relay', 'wss://other-relay.example.com'],
          ['filter', '{"kinds":[1]}'],
          ['callback', 'https://push.example.org/cb'],
        ],
      },
      mallory.secret,
    );
    const capped = await acceptGatewayEvent(deps, elsewhere, mallory.pubkey, 'http');
    assert.deepEqual([capped.accepted, capped.outcome], [false, 'relay_cap']);
    assert.match(
      capped.message,
      /^blocked: this gateway watches its maximum of 1 relays and cannot add wss:\/\/other-relay\.example\.com\//,
    );
    // The relay already watched stays open to another author.
    assert.equal((await acceptGatewayEvent(deps, reg('m', T, mallory.secret), mallory.pubkey, 'http')).outcome, 'stored');
  });

  test("kind 5 deletes by address (versions up to its time) and by id, only the author's own", async () => {
    const x = reg('x');
    await acceptGatewayEvent(deps, x, alice.pubkey, 'relay');
    await acceptGatewayEvent(deps, reg('y'), alice.pubkey, 'relay');
    await acceptGatewayEvent(deps, reg('z'), alice.pubkey, 'relay');
    const byOther = signEvent(
      {
        kind: 5,
        created_at: T + 5,
        content: '',
        tags: [
          ['a', `30390:${alice.pubkey}:x`],
          ['e', x.id],
        ],
      },
      mallory.secret,
    );
    await acceptGatewayEvent(deps, byOther, mallory.pubkey, 'relay');
    assert.equal((await store.listNip9aRegistrations(alice.pubkey)).length, 3);
    const tooEarly = signEvent({ kind: 5, created_at: T - 5, content: '', tags: [['a', `30390:${alice.pubkey}:y`]] }, alice.secret);
    await acceptGatewayEvent(deps, tooEarly, alice.pubkey, 'relay');
    assert.notEqual(await store.getNip9aRegistration(alice.pubkey, 'y'), null, 'a deletion older than the version does not remove it');
    const deletion = signEvent(
      {
        kind: 5,
        created_at: T + 5,
        content: '',
        tags: [
          ['a', `30390:${alice.pubkey}:y`],
          ['e', x.id],
        ],
      },
      alice.secret,
    );
    const answer = await acceptGatewayEvent(deps, deletion, alice.pubkey, 'relay');
    assert.equal(answer.message, 'deleted: 2 registration(s)');
    assert.deepEqual(
      (await store.listNip9aRegistrations(alice.pubkey)).map((r) => r.d),
      ['z'],
    );
  });
});

describe('nip9a config', () => {
  const base = defaultConfig().nip9a;
  test("the defaults are the seed's bounds and pass", () => {
    assert.deepEqual(nip9aConfigProblems(base, 'production'), []);
    assert.deepEqual(
      [
        base.max_registrations_per_author,
        base.max_registrations_per_author_per_relay,
        base.max_watched_relays,
        base.max_registration_bytes,
      ],
      [4, 4, 1000, 8192],
    );
    assert.deepEqual([base.max_filters, base.max_ignore_filters, base.max_pending_deliveries_per_relay], [8, 8, 256]);
    assert.deepEqual([base.request_timeout_secs, base.max_attempts, base.retry_delays_secs], [5, 4, [30, 120, 600]]);
    assert.deepEqual([base.outcome_dedup_entries, base.outcome_dedup_max_age_secs], [2048, 7 * 86_400]);
    assert.deepEqual(base.callback_origins, []);
  });
  test('loopback callbacks: true only under NODE_ENV=test, I_UNDERSTAND anywhere', () => {
    assert.match(nip9aConfigProblems({ ...base, allow_loopback_callbacks: 'true' }, 'production').join(), /refused outside NODE_ENV=test/);
    assert.deepEqual(nip9aConfigProblems({ ...base, allow_loopback_callbacks: 'true' }, 'test'), []);
    assert.deepEqual(nip9aConfigProblems({ ...base, allow_loopback_callbacks: 'I_UNDERSTAND' }, 'production'), []);
    assert.match(nip9aConfigProblems({ ...base, allow_loopback_callbacks: 'yes' }, 'test').join(), /must be false, true or I_UNDERSTAND/);
  });
  test('allowlist entries that are not public https origins are refused at start', () => {
    const problems = nip9aConfigProblems(
      { ...base, callback_origins: ['https://push.example.org', 'http://x.example.org', 'https://10.0.0.1'] },
      'production',
    );
    assert.equal(problems.length, 2);
  });
});
