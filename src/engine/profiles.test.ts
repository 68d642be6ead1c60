import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { Relay, useWebSocketImplementation } from 'nostr-tools/relay';
import { createLogger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import { createEventVerifier, type EventVerifier, type NostrEvent } from '../nostr/event.ts';
import { generateSecretKey, publicKeyOf, signEvent } from '../nostr/keys.ts';
import { shortNpub } from '../nostr/nip19.ts';
import type { CachedProfile, StorePort } from '../store/port.ts';
import { ManualClock } from '../util/clock.ts';
import { startTestRelay, type TestRelay } from '../../test/support/relay.ts';
import {
  createProfileResolver,
  MAX_DISPLAY_NAME_CHARS,
  RECENT_NAME_TTL_MS,
  parseProfileContent,
  RelayProfileResolver,
  senderNameOrFallback,
  type ProfileResolver,
  type RelayProfileResolverOptions,
} from './profiles.ts';
import type { RelayFilter, RelayQueryFunction } from './relay-query.ts';

const logger = createLogger({ level: 'silent' });
const SECRET = generateSecretKey();
const PUBKEY = publicKeyOf(SECRET);
const CACHE_TTL_SECS = 300;

let verifier: EventVerifier;
before(async () => {
  verifier = await createEventVerifier();
});

class MemoryProfileCache implements Pick<StorePort, 'getCachedProfile' | 'cacheProfile'> {
  readonly entries = new Map<string, CachedProfile>();
  readonly writes: Array<{ profile: CachedProfile; ttlSecs: number }> = [];
  failReads = false;
  failWrites = false;

  async getCachedProfile(pubkey: string): Promise<CachedProfile | null> {
    if (this.failReads) throw new Error('store down');
    return this.entries.get(pubkey) ?? null;
  }

  async cacheProfile(profile: CachedProfile, ttlSecs: number): Promise<void> {
    if (this.failWrites) throw new Error('store down');
    this.writes.push({ profile, ttlSecs });
    this.entries.set(profile.pubkey, profile);
  }
}

interface QueryCall {
  relays: readonly string[];
  filter: RelayFilter;
  timeoutMs: number;
}

function scriptedQuery(answers: unknown[] | (() => Promise<unknown[]>)): { query: RelayQueryFunction; calls: QueryCall[] } {
  const calls: QueryCall[] = [];
  return {
    calls,
    query: async (relays, filter, timeoutMs) => {
      calls.push({ relays, filter, timeoutMs });
      return typeof answers === 'function' ? answers() : answers;
    },
  };
}

function profileEvent(content: unknown, createdAt: number, secret = SECRET): NostrEvent {
  return signEvent(
    { kind: 0, created_at: createdAt, tags: [], content: typeof content === 'string' ? content : JSON.stringify(content) },
    secret,
  );
}

function resolverWith(
  query: RelayQueryFunction,
  store = new MemoryProfileCache(),
  extra: Partial<RelayProfileResolverOptions> = {},
): RelayProfileResolver {
  return new RelayProfileResolver({
    store,
    verifier,
    profileRelays: ['wss://profiles.example'],
    mainRelays: ['wss://main.example', 'wss://profiles.example'],
    cacheTtlSecs: CACHE_TTL_SECS,
    queryRelays: query,
    logger,
    ...extra,
  });
}

describe('RelayProfileResolver: cache', () => {
  test('a cache hit answers without asking the relays, display_name before name', async () => {
    const store = new MemoryProfileCache();
    store.entries.set(PUBKEY, { pubkey: PUBKEY, name: 'alice', display_name: 'Alice A.' });
    const { query, calls } = scriptedQuery([]);
    assert.equal(await resolverWith(query, store).displayName(PUBKEY), 'Alice A.');
    assert.equal(calls.length, 0);
  });

  test('a cached profile with only a name gives the name; with no names, null without a query', async () => {
    const store = new MemoryProfileCache();
    const other = publicKeyOf(generateSecretKey());
    store.entries.set(PUBKEY, { pubkey: PUBKEY, name: 'alice' });
    store.entries.set(other, { pubkey: other });
    const { query, calls } = scriptedQuery([]);
    const resolver = resolverWith(query, store);
    assert.equal(await resolver.displayName(PUBKEY), 'alice');
    assert.equal(await resolver.displayName(other), null);
    assert.equal(calls.length, 0);
  });

  test('a name found is remembered for RECENT_NAME_TTL_MS: the store is not read again until then; misses are never remembered', async () => {
    const store = new MemoryProfileCache();
    let reads = 0;
    const counting = Object.assign(store, {
      getCachedProfile: async (pubkey: string) => (reads++, store.entries.get(pubkey) ?? null),
    });
    const other = publicKeyOf(generateSecretKey());
    store.entries.set(PUBKEY, { pubkey: PUBKEY, name: 'alice' });
    const clock = new ManualClock(Date.UTC(2026, 11, 2));
    const { query } = scriptedQuery([]);
    const resolver = resolverWith(query, counting, { clock });
    assert.equal(await resolver.displayName(PUBKEY), 'alice');
    store.entries.set(PUBKEY, { pubkey: PUBKEY, name: 'alice renamed' });
    assert.equal(await resolver.displayName(PUBKEY), 'alice', 'answered from memory');
    assert.equal(reads, 1);
    clock.advance(RECENT_NAME_TTL_MS);
    assert.equal(await resolver.displayName(PUBKEY), 'alice renamed', 'the store again once the memo expired');
    assert.equal(reads, 2);
    assert.equal(await resolver.displayName(other), null);
    store.entries.set(other, { pubkey: other, name: 'bob' });
    assert.equal(await resolver.displayName(other), 'bob', 'a miss is asked again at once');
  });

  test('a failing cache read falls through to the relays', async () => {
    const store = new MemoryProfileCache();
    store.failReads = true;
    const { query, calls } = scriptedQuery([profileEvent({ name: 'alice' }, 100)]);
    assert.equal(await resolverWith(query, store).displayName(PUBKEY), 'alice');
    assert.equal(calls.length, 1);
  });
});

describe('RelayProfileResolver: relay lookup', () => {
  test('a miss asks the profile and main relays once for the kind 0, with the timeout, and caches what it found', async () => {
    const store = new MemoryProfileCache();
    const { query, calls } = scriptedQuery([profileEvent({ name: 'alice', display_name: 'Alice' }, 100)]);
    const resolver = resolverWith(query, store, { queryTimeoutMs: 1234 });
    assert.equal(await resolver.displayName(PUBKEY), 'Alice');
    assert.deepEqual(calls, [
      {
        relays: ['wss://profiles.example', 'wss://main.example'],
        filter: { kinds: [0], authors: [PUBKEY], limit: 1 },
        timeoutMs: 1234,
      },
    ]);
    assert.deepEqual(store.writes, [{ profile: { pubkey: PUBKEY, name: 'alice', display_name: 'Alice' }, ttlSecs: CACHE_TTL_SECS }]);
    assert.equal(await resolver.displayName(PUBKEY), 'Alice');
    assert.equal(calls.length, 1, 'the second lookup is a cache hit');
  });

  test('the newest created_at wins, whatever order the relays answer in', async () => {
    const older = profileEvent({ name: 'old name' }, 100);
    const newer = profileEvent({ name: 'new name' }, 200);
    assert.equal(await resolverWith(scriptedQuery([newer, older]).query).displayName(PUBKEY), 'new name');
    assert.equal(await resolverWith(scriptedQuery([older, newer, older]).query).displayName(PUBKEY), 'new name');
  });

  test('a created_at tie goes to the lower id', async () => {
    const a = profileEvent({ name: 'first' }, 100);
    const b = profileEvent({ name: 'second' }, 100);
    const expected = a.id < b.id ? 'first' : 'second';
    assert.equal(await resolverWith(scriptedQuery([a, b]).query).displayName(PUBKEY), expected);
    assert.equal(await resolverWith(scriptedQuery([b, a]).query).displayName(PUBKEY), expected);
  });

  test('a forged newer profile is ignored, even when it shares the genuine id', async () => {
    const genuine = profileEvent({ name: 'genuine' }, 100);
    const forgedNewer = { ...profileEvent({ name: 'forged' }, 200), sig: genuine.sig };
    const brokenCopy = { ...genuine, sig: '0'.repeat(128) };
    assert.equal(await resolverWith(scriptedQuery([forgedNewer, brokenCopy, genuine]).query).displayName(PUBKEY), 'genuine');
  });

  test('events of another author or kind, and malformed answers, are ignored', async () => {
    const stranger = profileEvent({ name: 'stranger' }, 300, generateSecretKey());
    const note = signEvent({ kind: 1, created_at: 300, tags: [], content: '{"name":"note"}' }, SECRET);
    const store = new MemoryProfileCache();
    const resolver = resolverWith(scriptedQuery([stranger, note, null, 'junk', { id: 1 }]).query, store);
    assert.equal(await resolver.displayName(PUBKEY), null);
    assert.equal(store.writes.length, 0, 'misses are never cached');
  });

  test('no profile anywhere: null, nothing cached', async () => {
    const store = new MemoryProfileCache();
    assert.equal(await resolverWith(scriptedQuery([]).query, store).displayName(PUBKEY), null);
    assert.equal(store.writes.length, 0);
  });

  test('junk content: null, nothing cached', async () => {
    for (const content of ['not json', '[1,2]', 'null', '"name"', `{"name":"${'x'.repeat(70_000)}"}`]) {
      const store = new MemoryProfileCache();
      assert.equal(
        await resolverWith(scriptedQuery([profileEvent(content, 100)]).query, store).displayName(PUBKEY),
        null,
        content.slice(0, 20),
      );
      assert.equal(store.writes.length, 0);
    }
  });

  test('a profile without usable names is cached (it was found) and gives null', async () => {
    const store = new MemoryProfileCache();
    const resolver = resolverWith(scriptedQuery([profileEvent({ name: '  ', display_name: 7, about: 'hi' }, 100)]).query, store);
    assert.equal(await resolver.displayName(PUBKEY), null);
    assert.deepEqual(
      store.writes.map((w) => w.profile),
      [{ pubkey: PUBKEY }],
    );
  });

  test('a failing cache write still returns the name', async () => {
    const store = new MemoryProfileCache();
    store.failWrites = true;
    assert.equal(await resolverWith(scriptedQuery([profileEvent({ name: 'alice' }, 1)]).query, store).displayName(PUBKEY), 'alice');
  });

  test('a failing query resolves null (never rejects) and is counted', async () => {
    const metrics = new Metrics();
    const { query } = scriptedQuery(async () => {
      throw new Error('boom');
    });
    assert.equal(await resolverWith(query, new MemoryProfileCache(), { metrics }).displayName(PUBKEY), null);
    assert.match(await metrics.render(), /push_profile_lookups_total\{outcome="error"\} 1/);
  });

  test('concurrent lookups of one pubkey share one query', async () => {
    let release: (answers: unknown[]) => void = () => {};
    const { query, calls } = scriptedQuery(() => new Promise<unknown[]>((resolve) => (release = resolve)));
    const resolver = resolverWith(query);
    const lookups = [resolver.displayName(PUBKEY), resolver.displayName(PUBKEY), resolver.displayName(PUBKEY)];
    await new Promise((resolve) => setImmediate(resolve));
    release([profileEvent({ name: 'alice' }, 1)]);
    assert.deepEqual(await Promise.all(lookups), ['alice', 'alice', 'alice']);
    assert.equal(calls.length, 1);
  });

  test('a value that is not a hex pubkey is null without any lookup', async () => {
    const store = new MemoryProfileCache();
    store.failReads = true;
    const { query, calls } = scriptedQuery([]);
    assert.equal(await resolverWith(query, store).displayName('npub1xyz'), null);
    assert.equal(calls.length, 0);
  });

  test('no relays configured: a miss is null without a query', async () => {
    const { query, calls } = scriptedQuery([]);
    assert.equal(await resolverWith(query, new MemoryProfileCache(), { profileRelays: [], mainRelays: [] }).displayName(PUBKEY), null);
    assert.equal(calls.length, 0);
  });

  test('createProfileResolver reads nostr.* (timeout in seconds)', async () => {
    const { query, calls } = scriptedQuery([]);
    const resolver = createProfileResolver(
      { profile_relays: ['wss://p'], relays: ['wss://m'], profile_cache_ttl_secs: 60, query_timeout_secs: 2 },
      { store: new MemoryProfileCache(), verifier, logger, queryRelays: query },
    );
    await resolver.displayName(PUBKEY);
    assert.deepEqual(
      calls.map((c) => [c.relays, c.timeoutMs]),
      [[['wss://p', 'wss://m'], 2000]],
    );
  });
});

describe('parseProfileContent', () => {
  test('takes name and display_name, folding whitespace and control characters', () => {
    assert.deepEqual(parseProfileContent('{"name":" al\\nice ","display_name":"A\\u0000\\tB","picture":"x"}'), {
      name: 'al ice',
      display_name: 'A B',
    });
  });

  test('cuts long names to the code-point limit', () => {
    const names = parseProfileContent(JSON.stringify({ name: '😀'.repeat(MAX_DISPLAY_NAME_CHARS + 10) }));
    assert.equal(names?.name, '😀'.repeat(MAX_DISPLAY_NAME_CHARS));
  });

  test('an empty display_name defers to name', async () => {
    const { query } = scriptedQuery([profileEvent({ name: 'alice', display_name: '' }, 1)]);
    assert.equal(await resolverWith(query).displayName(PUBKEY), 'alice');
  });
});

describe('senderNameOrFallback', () => {
  const named: ProfileResolver = { displayName: async () => 'Alice' };
  const anonymous: ProfileResolver = { displayName: async () => null };
  const broken: ProfileResolver = {
    displayName: async () => {
      throw new Error('boom');
    },
  };

  test('the display name when there is one', async () => {
    assert.equal(await senderNameOrFallback(named, PUBKEY), 'Alice');
  });

  test('the 12-character short npub on null or error', async () => {
    const fallback = shortNpub(PUBKEY);
    assert.equal(fallback.length, 15);
    assert.ok(fallback.startsWith('npub1') && fallback.endsWith('...'));
    assert.equal(await senderNameOrFallback(anonymous, PUBKEY), fallback);
    assert.equal(await senderNameOrFallback(broken, PUBKEY), fallback);
  });

  test('the resolver method does the same', async () => {
    assert.equal(await resolverWith(scriptedQuery([]).query).senderNameOrFallback(PUBKEY), shortNpub(PUBKEY));
  });
});

describe('RelayProfileResolver against a real relay', () => {
  let relay: TestRelay;
  before(async () => {
    relay = await startTestRelay();
  });
  after(async () => {
    await relay.stop();
  });

  test('resolves a kind 0 published with nostr-tools, over the default ws query', async () => {
    useWebSocketImplementation(WebSocket);
    const publisher = await Relay.connect(relay.url);
    try {
      await publisher.publish(profileEvent({ name: 'alice', display_name: 'Alice on a relay' }, Math.floor(Date.now() / 1000)));
    } finally {
      publisher.close();
    }
    const store = new MemoryProfileCache();
    const resolver = new RelayProfileResolver({
      store,
      verifier,
      profileRelays: [relay.url],
      mainRelays: [],
      cacheTtlSecs: CACHE_TTL_SECS,
      logger,
    });
    assert.equal(await resolver.displayName(PUBKEY), 'Alice on a relay');
    assert.equal(store.writes.length, 1);
    const stranger = publicKeyOf(generateSecretKey());
    assert.equal(await resolver.senderNameOrFallback(stranger), shortNpub(stranger));
  });
});
