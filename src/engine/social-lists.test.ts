import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../observability/logger.ts';
import { createEventVerifier, type EventVerifier, type NostrEvent } from '../nostr/event.ts';
import { generateSecretKey, publicKeyOf, signEvent } from '../nostr/keys.ts';
import { CONTACTS, MUTE_LIST, RELAY_LIST } from '../nostr/kinds.ts';
import { ManualClock } from '../util/clock.ts';
import { startTestRelay, type TestRelay } from '../../test/support/relay.ts';
import { publish } from '../../test/support/publisher.ts';
import { createRelayQuery, type RelayQueryFunction } from './relay-query.ts';
import { EMPTY_MUTE_LIST, parseMuteList } from '../nostr/nip51-mutes.ts';
import { Metrics } from '../observability/metrics.ts';
import { MatchableText } from '../util/whole-words.ts';
import { MuteSubject } from './mute-match.ts';
import { SocialListCache, socialListQueryCap, writeRelays, type SocialListCacheOptions, type SocialLists } from './social-lists.ts';
import { onlyFollowingCovers, socialGateOutcome } from './social-gate.ts';

const user = () => {
  const secret = generateSecretKey();
  return { secret, pubkey: publicKeyOf(secret) };
};
const sign = (secret: string, kind: number, tags: string[][], createdAt: number): NostrEvent =>
  signEvent({ kind, created_at: createdAt, tags, content: '' }, secret);
const pTags = (...pubkeys: string[]) => pubkeys.map((p) => ['p', p]);

describe('SocialListCache against real relays', () => {
  let main: TestRelay;
  let outbox: TestRelay;
  let verifier: EventVerifier;
  let queries = 0;
  let query: RelayQueryFunction;
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const [alice, bob, carol, dave] = [user(), user(), user(), user()];

  const cache = (overrides: Partial<SocialListCacheOptions> = {}) =>
    new SocialListCache({
      relays: [main.url],
      queryRelays: query,
      verifier,
      queryTimeoutMs: 5_000,
      ttlMs: 60_000,
      maxEntries: 100,
      maxMuteItems: 1000,
      maxCachedMuteItems: 1_000_000,
      logger: createLogger({ level: 'silent' }),
      clock,
      ...overrides,
    });

  before(async () => {
    [main, outbox] = await Promise.all([startTestRelay(), startTestRelay()]);
    verifier = await createEventVerifier();
    const real = createRelayQuery({ maxEventsPerRelay: socialListQueryCap() });
    query = (relays, filter, timeoutMs) => {
      queries++;
      return real(relays, filter, timeoutMs);
    };
  });
  after(async () => {
    await Promise.all([main.stop(), outbox.stop()]);
  });

  test('the newest mute and contact lists win; a forged newer one is ignored', async () => {
    const owner = user();
    await publish(main.url, sign(owner.secret, MUTE_LIST, pTags(bob.pubkey), 1000));
    await publish(main.url, sign(owner.secret, CONTACTS, pTags(carol.pubkey, dave.pubkey), 1000));
    await publish(main.url, sign(owner.secret, MUTE_LIST, pTags(carol.pubkey), 2000));
    const forged = { ...sign(owner.secret, MUTE_LIST, pTags(dave.pubkey), 3000), sig: 'f'.repeat(128) };
    const lists = await cache({ queryRelays: async (relays, filter, ms) => [...(await query(relays, filter, ms)), forged] }).lists(
      owner.pubkey,
    );
    assert.deepEqual([...lists.mutes.pubkeys], [carol.pubkey]);
    assert.deepEqual([...(lists.follows ?? [])].sort(), [carol.pubkey, dave.pubkey].sort());
  });

  test('the whole public mute list is read: pubkeys, hashtags, words and threads; a long one keeps its newest items', async () => {
    const owner = user();
    const oldThread = '1'.repeat(64);
    const newThread = '2'.repeat(64);
    const tags = [
      ...pTags(bob.pubkey),
      ['t', 'OldTag'],
      ['t', '#NewTag'],
      ['word', 'old words'],
      ['word', 'Spoiler'],
      ['e', oldThread],
      ['e', newThread],
    ];
    await publish(main.url, sign(owner.secret, MUTE_LIST, tags, 1000));
    const metrics = new Metrics();
    const { mutes } = await cache({ maxMuteItems: 1, metrics }).lists(owner.pubkey);
    assert.deepEqual([...mutes.pubkeys], [bob.pubkey], 'pubkeys are not bounded by the item limit');
    assert.deepEqual([...mutes.hashtags], ['newtag']);
    assert.deepEqual([...mutes.threads], [newThread]);
    assert.equal(mutes.words.matches(new MatchableText('no SPOILERS, one spoiler')), true);
    assert.equal(mutes.words.matches(new MatchableText('old words')), false, 'the older word was left out');
    const dropped = await metrics.registry.getSingleMetricAsString('push_mute_list_items_dropped_total');
    for (const item of ['hashtag', 'word', 'thread']) assert.match(dropped, new RegExp(`item="${item}"} 1$`, 'm'));
  });

  test('the cache holds at most its mute-item budget over all users, forgetting the oldest users first', async () => {
    const words = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ['word', `${prefix}${i}`]);
    const [first, second, third, huge] = [user(), user(), user(), user()];
    await publish(main.url, sign(first.secret, MUTE_LIST, [...pTags(bob.pubkey), ...words(3, 'a')], 1000));
    await publish(main.url, sign(second.secret, MUTE_LIST, words(4, 'b'), 1000));
    await publish(main.url, sign(third.secret, MUTE_LIST, words(3, 'c'), 1000));
    const tenMuted = Array.from({ length: 10 }, () => user().pubkey);
    await publish(main.url, sign(huge.secret, MUTE_LIST, pTags(...tenMuted), 1000));
    const metrics = new Metrics();
    const lists = cache({ maxCachedMuteItems: 9, metrics });
    await lists.lists(first.pubkey);
    await lists.lists(second.pubkey);
    assert.equal(lists.muteItems, 8, 'a pubkey and three words, four words');
    await lists.lists(third.pubkey);
    assert.equal(lists.size, 2, 'the first user made room');
    assert.equal(lists.muteItems, 7);
    assert.match(await metrics.registry.getSingleMetricAsString('push_social_list_cache_mute_items'), / 7$/m);
    const before = queries;
    await lists.lists(second.pubkey);
    assert.equal(queries, before, 'the second user is still cached');
    await lists.lists(first.pubkey);
    assert.equal(queries - before, 1, 'the first user is asked for again');
    const hugeLists = await lists.lists(huge.pubkey);
    assert.equal(hugeLists.mutes.pubkeys.size, 10, 'a list over the whole budget is still honoured');
    await lists.lists(huge.pubkey);
    assert.equal(queries - before, 3, 'but never cached: asked for each time');
    assert.equal(lists.size, 2, 'and the cache was not emptied for it');
  });

  test('lists the main relays lack are fetched from the kind 10002 write relays', async () => {
    const owner = user();
    await publish(
      main.url,
      sign(
        owner.secret,
        RELAY_LIST,
        [
          ['r', outbox.url, 'write'],
          ['r', 'wss://read.example', 'read'],
        ],
        1000,
      ),
    );
    await publish(outbox.url, sign(owner.secret, MUTE_LIST, pTags(alice.pubkey), 1000));
    const lists = await cache().lists(owner.pubkey);
    assert.deepEqual([...lists.mutes.pubkeys], [alice.pubkey]);
    assert.equal(lists.follows, null, 'no contact list anywhere');
  });

  test('users looked up in one turn share one query, each getting their own lists', async () => {
    const [first, second] = [user(), user()];
    await publish(main.url, sign(first.secret, MUTE_LIST, pTags(bob.pubkey), 1000));
    await publish(main.url, sign(second.secret, CONTACTS, pTags(carol.pubkey), 1000));
    const before = queries;
    const [a, b] = await Promise.all([cache().lists(first.pubkey), cache().lists(second.pubkey)]);
    assert.equal(queries - before, 2, 'two caches, one query each');
    const shared = cache();
    const before2 = queries;
    const [c, d] = await Promise.all([shared.lists(first.pubkey), shared.lists(second.pubkey)]);
    assert.equal(queries - before2, 1, 'one cache: both users in one REQ');
    for (const lists of [a, c]) assert.deepEqual([...lists.mutes.pubkeys], [bob.pubkey]);
    for (const lists of [b, d]) {
      assert.deepEqual(lists.mutes.pubkeys, new Set());
      assert.deepEqual([...(lists.follows ?? [])], [carol.pubkey]);
    }
  });

  test('a user without lists mutes nobody and has no follows; the miss is cached too', async () => {
    const lists = cache();
    const stranger = user();
    const before = queries;
    assert.deepEqual(await lists.lists(stranger.pubkey), { mutes: EMPTY_MUTE_LIST, follows: null });
    await lists.lists(stranger.pubkey);
    assert.equal(queries - before, 1);
  });

  test('cached for the TTL, fetched again after it; concurrent lookups share one query; bounded size', async () => {
    const owner = user();
    await publish(main.url, sign(owner.secret, MUTE_LIST, pTags(bob.pubkey), 1000));
    const lists = cache({ maxEntries: 2 });
    const before = queries;
    await Promise.all([lists.lists(owner.pubkey), lists.lists(owner.pubkey), lists.lists(owner.pubkey)]);
    assert.equal(queries - before, 1);
    assert.deepEqual([...(await lists.lists(owner.pubkey)).mutes.pubkeys], [bob.pubkey]);
    assert.equal(queries - before, 1, 'still the cached list: no query');
    clock.advance(60_000);
    assert.deepEqual([...(await lists.lists(owner.pubkey)).mutes.pubkeys], [bob.pubkey]);
    assert.equal(queries - before, 2, 'asked again once the TTL is over');
    await lists.lists(user().pubkey);
    await lists.lists(user().pubkey);
    assert.equal(lists.size, 2);
  });
});

describe('social gate decisions', () => {
  const sender = 'a'.repeat(64);
  const other = 'b'.repeat(64);
  const mutingPubkeys = (...pubkeys: string[]): SocialLists => ({
    mutes: { ...EMPTY_MUTE_LIST, pubkeys: new Set(pubkeys) },
    follows: null,
  });
  const nobodyMuted = (follows: Set<string> | null): SocialLists => ({ mutes: EMPTY_MUTE_LIST, follows });

  test('muted by the public list or the shared private mutes, whatever the type', () => {
    assert.deepEqual(socialGateOutcome(mutingPubkeys(sender), null, sender, 'like'), { outcome: 'muted', mutedBy: 'pubkey' });
    assert.deepEqual(socialGateOutcome(nobodyMuted(null), { mutedPubkeys: [sender], onlyFollowing: null }, sender, 'comment'), {
      outcome: 'muted',
      mutedBy: 'pubkey',
    });
    assert.equal(socialGateOutcome(mutingPubkeys(other), null, sender, 'repost'), null);
  });

  test('muted by what the event is about, when the gate is given it', () => {
    const lists: SocialLists = { mutes: parseMuteList({ tags: [['word', 'spoiler']] }, 10).list, follows: null };
    const event = { id: 'c'.repeat(64), pubkey: sender, kind: 1111, created_at: 1, tags: [], content: 'big SPOILER ahead', sig: '' };
    assert.deepEqual(socialGateOutcome(lists, null, sender, 'comment', new MuteSubject(event)), { outcome: 'muted', mutedBy: 'word' });
    assert.equal(socialGateOutcome(lists, null, sender, 'comment'), null, 'without a subject (a summary) only the sender counts');
  });

  test('onlyFollowing drops a stranger for the types it covers; an unknown contact list lets through', () => {
    const follows = nobodyMuted(new Set([other]));
    const notFollowed = { outcome: 'not_followed' };
    assert.deepEqual(socialGateOutcome(follows, { mutedPubkeys: [], onlyFollowing: 'all' }, sender, 'like'), notFollowed);
    assert.equal(socialGateOutcome(follows, { mutedPubkeys: [], onlyFollowing: 'all' }, other, 'like'), null);
    assert.equal(socialGateOutcome(follows, { mutedPubkeys: [], onlyFollowing: ['comment'] }, sender, 'like'), null);
    assert.deepEqual(socialGateOutcome(follows, { mutedPubkeys: [], onlyFollowing: ['comment'] }, sender, 'comment'), notFollowed);
    assert.equal(socialGateOutcome(nobodyMuted(null), { mutedPubkeys: [], onlyFollowing: 'all' }, sender, 'like'), null);
    assert.equal(onlyFollowingCovers(null, 'like'), false);
  });

  test('write relays: unmarked and write-marked ws(s) r tags, once each', () => {
    const event = {
      tags: [
        ['r', 'wss://a.example'],
        ['r', 'wss://b.example', 'write'],
        ['r', 'wss://c.example', 'read'],
        ['r', 'https://x'],
        ['r', 'wss://a.example'],
      ],
    } as NostrEvent;
    assert.deepEqual(writeRelays(event), ['wss://a.example', 'wss://b.example']);
  });
});
