/**
 * The optional kinds through the engine's real content path and an in-memory SQLite store with a
 * manual clock: gift-wrap opt-in, dedupe and the DM window; zap gates (unverified, anonymous,
 * the payer's mute, a muted word in the payer's comment); a kind-1 reply.
 */
import { test, describe, beforeEach, afterEach, before } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../../store/sqlite/index.ts';
import type { StorePort } from '../../store/port.ts';
import { ManualClock } from '../../util/clock.ts';
import { createLogger } from '../../observability/logger.ts';
import { Metrics } from '../../observability/metrics.ts';
import { signEvent } from '../../nostr/keys.ts';
import { createEventVerifier, type EventVerifier, type NostrEvent } from '../../nostr/event.ts';
import { GIFT_WRAP, MUTE_LIST, TEXT_NOTE, ZAP_RECEIPT, ZAP_REQUEST } from '../../nostr/kinds.ts';
import { defaultConfig, type EventsConfig } from '../../config/defaults.ts';
import { makeUser, type TestUser } from '../../../test/support/nostr-client.ts';
import { lostAnswerOutboundQueue, recordingOutboundQueue } from '../../../test/support/outbound-queue.ts';
import type { ContentDeps } from '../content.ts';
import type { InboundEnvelope } from '../router.ts';
import { handleOptionalEvent, type OptionalEventDeps } from './handler.ts';
import { NO_PROVIDER_LOOKUP } from './zap-receipt.ts';
import type { OutboundNotification } from '../../notification/types.ts';
import { SocialListCache } from '../social-lists.ts';

const SPEC_INVOICE_2500U =
  'lnbc2500u1pvjluezsp5zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygspp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdq5xysxxatsyp3k7enxv4jsxqzpu9qrsgquk0rl77nj30yxdy8j9vdx85fkpmdla2087ne0xh8nhedh8w27kyke0lp53ut353s06fv3qfegext0eh0ymjpf39tuven09sam30g4vgpfna3rh';
const DM_INTERVAL_SECS = 60;

let verifier: EventVerifier;
before(async () => {
  verifier = await createEventVerifier();
});

describe('optional event kinds through the content path', () => {
  let store: StorePort;
  let clock: ManualClock;
  let queued: OutboundNotification[];
  let deps: OptionalEventDeps;
  let alice: TestUser;
  let bob: TestUser;
  let provider: TestUser;
  const now = () => Math.floor(clock.nowMs() / 1000);
  const live = (event: NostrEvent): InboundEnvelope => ({ event, context: 'live', relay: 'ws://r', receivedAtMs: clock.nowMs() });
  const withEvents = (events: Partial<EventsConfig>): OptionalEventDeps => ({ ...deps, events: { ...deps.events, ...events } });

  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 11, 2));
    store = await openSqliteStore({ path: ':memory:', clock });
    queued = [];
    alice = makeUser();
    bob = makeUser();
    provider = makeUser();
    await store.registerToken(alice.pubkey, { token: 'fcm-alice', transport: 'fcm' });
    const content: ContentDeps = {
      store,
      profiles: { displayName: (pk) => Promise.resolve(pk === bob.pubkey ? 'Bob' : null) },
      allowedPubkeys: new Set(),
      defaultPreferenceKinds: [1, 7, 16, 1059, 30023, 34236],
      processedEventTtlSecs: 604800,
      maxEventAgeSecs: 3600,
      clock,
      logger: createLogger({ level: 'silent' }),
      metrics: new Metrics(),
      outbound: recordingOutboundQueue(store, queued),
    };
    deps = {
      events: { ...defaultConfig().events, text_notes: true, zaps: true, gift_wraps: true, dm_push_min_interval_secs: DM_INTERVAL_SECS },
      content,
      giftWraps: {
        store,
        allowedPubkeys: new Set(),
        processedEventTtlSecs: 604800,
        minIntervalSecs: DM_INTERVAL_SECS,
        outbound: content.outbound,
        countInbox: true,
        metrics: content.metrics,
        logger: content.logger,
      },
      verifier,
      noteAuthor: () => Promise.resolve(null),
      zapProvider: NO_PROVIDER_LOOKUP,
    };
  });
  afterEach(() => store.close());

  const wrapTo = (to: string) =>
    signEvent({ kind: GIFT_WRAP, created_at: now() - 86_400, tags: [['p', to]], content: 'x' }, makeUser().secret);
  const zap = (request: { from: TestUser; to: string; tags?: string[][]; comment?: string }) =>
    signEvent(
      {
        kind: ZAP_RECEIPT,
        created_at: now(),
        tags: [
          ['p', request.to],
          ['e', 'e1'.repeat(32)],
          ['bolt11', SPEC_INVOICE_2500U],
          [
            'description',
            JSON.stringify(
              signEvent(
                {
                  kind: ZAP_REQUEST,
                  created_at: now(),
                  tags: [['p', request.to], ...(request.tags ?? [])],
                  content: request.comment ?? '',
                },
                request.from.secret,
              ),
            ),
          ],
        ],
        content: '',
      },
      provider.secret,
    );

  test('gift wraps: nothing without an explicit 1059 in the preferences, even though the defaults have it', async () => {
    assert.equal(await handleOptionalEvent(deps, live(wrapTo(alice.pubkey))), 'gift_wrap');
    assert.equal(queued.length, 0);
  });

  test('gift wraps: once per wrap, one push per window, another once the window has passed', async () => {
    await store.setPreferences(alice.pubkey, { kinds: [1059], campaignsEnabled: false });
    const first = wrapTo(alice.pubkey);
    await handleOptionalEvent(deps, live(first));
    await handleOptionalEvent(deps, live(first));
    await handleOptionalEvent(deps, live(wrapTo(alice.pubkey)));
    assert.equal(queued.length, 1);
    const data = queued[0]?.message.data ?? {};
    assert.equal(data.type, 'directMessage');
    assert.equal(data.eventId, first.id);
    assert.equal(data.senderPubkey, undefined);
    assert.equal(queued[0]?.eventCreatedAt, now(), 'aged from now, not from the backdated created_at');

    clock.advance((DM_INTERVAL_SECS + 1) * 1000);
    await handleOptionalEvent(deps, live(wrapTo(alice.pubkey)));
    assert.equal(queued.length, 2);
    assert.deepEqual(
      (await store.readInboxBadges([alice.pubkey]))[0],
      3,
      'each of the three distinct wraps counts in the inbox, the repeat does not',
    );
  });

  test('gift wraps: a push whose queue step was applied but reported failed is queued once by the retry (issue 42)', async () => {
    await store.setPreferences(alice.pubkey, { kinds: [1059], campaignsEnabled: false });
    const wrap = wrapTo(alice.pubkey);
    const faulty = { ...deps, giftWraps: { ...deps.giftWraps, outbound: lostAnswerOutboundQueue(deps.giftWraps.outbound) } };
    await assert.rejects(handleOptionalEvent(faulty, live(wrap)), /answer lost/);
    await handleOptionalEvent(faulty, live(wrap));
    assert.equal(queued.length, 1);
    assert.equal((await store.queueStats('outbound')).ready, 1, 'queued once, not twice');
  });

  test('gift wraps: a wrap whose window claim was applied but reported failed is pushed by the retry (issue 42)', async () => {
    await store.setPreferences(alice.pubkey, { kinds: [1059], campaignsEnabled: false });
    const wrap = wrapTo(alice.pubkey);
    let lost = 1;
    const claimEvent = store.claimEvent.bind(store);
    const faultyStore = Object.assign(Object.create(store) as StorePort, {
      async claimEvent(...args: Parameters<StorePort['claimEvent']>) {
        const taken = await claimEvent(...args);
        if (lost-- > 0) throw new Error('applied, answer lost');
        return taken;
      },
    });
    const faulty = { ...deps, giftWraps: { ...deps.giftWraps, store: faultyStore } };
    await assert.rejects(handleOptionalEvent(faulty, live(wrap)), /answer lost/);
    await handleOptionalEvent(faulty, live(wrap));
    assert.equal(queued.length, 1, 'the retry finds the window its own');
  });

  test('zaps: an unverified zap is not pushed unless the app allows it; the payer is the sender', async () => {
    await store.setPreferences(alice.pubkey, { kinds: [9735], campaignsEnabled: false });
    const receipt = zap({ from: bob, to: alice.pubkey });
    await handleOptionalEvent(deps, live(receipt));
    assert.equal(queued.length, 0);
    await handleOptionalEvent(withEvents({ zaps_allow_unverified: true }), live(receipt));
    assert.equal(queued.length, 1);
    assert.equal(queued[0]?.type, 'zap');
    assert.equal(queued[0].message.data.body, 'Bob zapped you ⚡250000 sats');
    assert.equal(queued[0].message.data.senderPubkey, bob.pubkey);
  });

  test('zaps: an anonymous zap says "Someone"; zaps are off for users without category 9735', async () => {
    const allowing = withEvents({ zaps_allow_unverified: true });
    await handleOptionalEvent(allowing, live(zap({ from: makeUser(), to: alice.pubkey, tags: [['anon']] })));
    assert.equal(queued.length, 0, 'the default categories do not include 9735');
    await store.setPreferences(alice.pubkey, { kinds: [9735], campaignsEnabled: false });
    await handleOptionalEvent(allowing, live(zap({ from: makeUser(), to: alice.pubkey, tags: [['anon']] })));
    assert.equal(queued[0]?.message.data.body, 'Someone zapped you ⚡250000 sats');
  });

  test('zaps: the provider is looked up only for a recipient with a device, and a known provider verifies', async () => {
    await store.setPreferences(alice.pubkey, { kinds: [9735], campaignsEnabled: false });
    const asked: string[] = [];
    const verifying: OptionalEventDeps = { ...deps, zapProvider: (pk) => (asked.push(pk), Promise.resolve(provider.pubkey)) };
    const carol = makeUser();
    await handleOptionalEvent(verifying, live(zap({ from: bob, to: carol.pubkey })));
    assert.deepEqual(asked, [], 'carol has no device: her zap is not worth an HTTPS request');
    await handleOptionalEvent(verifying, live(zap({ from: bob, to: alice.pubkey })));
    assert.deepEqual(asked, [alice.pubkey]);
    assert.equal(queued.length, 1, 'verified, so pushed without the unverified allowance');
  });

  test("zaps: the recipient's mute applies to the payer, not to the provider who signed the receipt", async () => {
    await store.setPreferences(alice.pubkey, { kinds: [9735], campaignsEnabled: false });
    await store.setSocialFilters(alice.pubkey, { mutedPubkeys: [bob.pubkey], onlyFollowing: null });
    const allowing = { ...withEvents({ zaps_allow_unverified: true }), content: { ...deps.content, social: { lists: null } } };
    await handleOptionalEvent(allowing, live(zap({ from: bob, to: alice.pubkey })));
    assert.equal(queued.length, 0);
  });

  test("zaps: a muted word is looked for in the payer's comment", async () => {
    await store.setPreferences(alice.pubkey, { kinds: [9735], campaignsEnabled: false });
    const muteList = signEvent({ kind: MUTE_LIST, created_at: now(), tags: [['word', 'scam']], content: '' }, alice.secret);
    const lists = new SocialListCache({
      relays: ['ws://mute-lists.invalid'],
      queryRelays: () => Promise.resolve([muteList]),
      verifier,
      queryTimeoutMs: 1_000,
      ttlMs: 60_000,
      maxEntries: 10,
      maxMuteItems: 10,
      maxCachedMuteItems: 100,
      logger: createLogger({ level: 'silent' }),
      clock,
    });
    const muting = { ...withEvents({ zaps_allow_unverified: true }), content: { ...deps.content, social: { lists } } };
    await handleOptionalEvent(muting, live(zap({ from: bob, to: alice.pubkey, comment: 'Not a SCAM, promise' })));
    assert.equal(queued.length, 0);
    const thanks = zap({ from: bob, to: alice.pubkey, comment: 'thanks for the scams talk' });
    await handleOptionalEvent(muting, live(thanks));
    assert.equal(queued.length, 1, '"scams" is not the whole word');
    assert.equal(queued[0]?.eventId, thanks.id);
  });

  test('a parent without a pubkey hint is looked up only when a p-tagged user has a device', async () => {
    const asked: string[] = [];
    const looking: OptionalEventDeps = {
      ...deps,
      noteAuthor: (id) => (asked.push(id), Promise.resolve(alice.pubkey)),
    };
    const reply = (tags: string[][]) => signEvent({ kind: TEXT_NOTE, created_at: now(), tags, content: 're' }, bob.secret);
    await handleOptionalEvent(
      looking,
      live(
        reply([
          ['e', 'e1'.repeat(32), '', 'reply'],
          ['p', makeUser().pubkey],
        ]),
      ),
    );
    assert.deepEqual(asked, [], 'nobody p-tagged could be pushed');
    await handleOptionalEvent(
      looking,
      live(
        reply([
          ['e', 'e2'.repeat(32), '', 'reply'],
          ['p', alice.pubkey],
        ]),
      ),
    );
    assert.deepEqual(asked, ['e2'.repeat(32)]);
    assert.equal(queued[0]?.type, 'reply', 'found: a reply, not a mention');
  });

  test('a kind-1 reply while text notes are off takes divine path: nobody is notified', async () => {
    const reply = signEvent(
      { kind: TEXT_NOTE, created_at: now(), tags: [['e', 'e1'.repeat(32), '', 'root', alice.pubkey]], content: 'hi' },
      bob.secret,
    );
    assert.equal(await handleOptionalEvent(withEvents({ text_notes: false }), live(reply)), 'not_optional');
    assert.equal(await handleOptionalEvent(deps, live(reply)), 'note');
    assert.equal(queued[0]?.type, 'reply');
    assert.equal(queued[0].message.data.title, 'Bob replied');
  });
});
