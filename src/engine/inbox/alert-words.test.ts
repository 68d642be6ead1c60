import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../../store/sqlite/index.ts';
import type { StorePort } from '../../store/port.ts';
import { ManualClock } from '../../util/clock.ts';
import { createLogger } from '../../observability/logger.ts';
import { Metrics } from '../../observability/metrics.ts';
import { signEvent } from '../../nostr/keys.ts';
import { COMMENT, LONG_FORM, REACTION, VIDEO } from '../../nostr/kinds.ts';
import { makeUser, type TestUser } from '../../../test/support/nostr-client.ts';
import { recordingOutboundQueue } from '../../../test/support/outbound-queue.ts';
import { KEYWORD_PREFERENCE_CATEGORY } from '../content.ts';
import { AlertWordPresence, handleAlertWords, matchedText, type AlertWordDeps } from './alert-words.ts';
import type { OutboundNotification } from '../../notification/types.ts';

const DEFAULT_KINDS = [1, 7, 16, 1059, 30023, 34236];

describe('alert words', () => {
  let store: StorePort;
  let clock: ManualClock;
  let queued: OutboundNotification[];
  let deps: AlertWordDeps;
  let watcher: TestUser;
  let muted: TestUser;
  let author: TestUser;

  const post = (kind: number, content: string, tags: string[][] = [], by: TestUser = author) =>
    signEvent({ kind, created_at: Math.floor(clock.nowMs() / 1000), tags, content }, by.secret);

  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 0, 1));
    store = await openSqliteStore({ path: ':memory:', clock });
    queued = [];
    [watcher, muted, author] = [makeUser(), makeUser(), makeUser()];
    deps = {
      store,
      profiles: { displayName: async (pubkey) => (pubkey === author.pubkey ? 'Ann' : null) },
      allowedPubkeys: new Set(),
      defaultPreferenceKinds: DEFAULT_KINDS,
      processedEventTtlSecs: 3600,
      outbound: recordingOutboundQueue(store, queued),
      maxEventAgeSecs: 3600,
      clock,
      logger: createLogger({ level: 'silent' }),
      metrics: new Metrics(),
    };
    await store.registerToken(watcher.pubkey, { token: 'watcher-phone', transport: 'fcm' });
    await store.registerToken(muted.pubkey, { token: 'muted-phone', transport: 'fcm' });
    await store.setPreferences(watcher.pubkey, { kinds: [...DEFAULT_KINDS, KEYWORD_PREFERENCE_CATEGORY], campaignsEnabled: false });
    await store.replaceAlertWords(watcher.pubkey, ['sunset', 'harbour']);
    await store.replaceAlertWords(muted.pubkey, ['sunset']);
  });
  afterEach(() => store.close());

  test('a video title naming two words: each watcher counts each word once, one push to the one who enabled keyword', async () => {
    const video = post(VIDEO, '', [
      ['d', 'v1'],
      ['title', 'Sunset at the HARBOUR'],
    ]);
    const presence = new AlertWordPresence(deps, 0);
    assert.deepEqual(await handleAlertWords(deps, video, presence), { counted: 3, pushed: 1 });
    assert.equal((await store.readInboxCounts(watcher.pubkey)).types.keyword.total, 2);
    assert.equal((await store.readInboxCounts(muted.pubkey)).types.keyword.total, 1);
    assert.equal(queued.length, 1);
    assert.equal(queued[0]?.recipient, watcher.pubkey);
    assert.equal(queued[0].type, 'keyword');
    assert.equal(queued[0].message.data.body, 'Ann mentioned “sunset”');
    // Again (a second relay, a retry): nothing counted, nothing queued.
    assert.deepEqual(await handleAlertWords(deps, video, presence), { counted: 0, pushed: 0 });
    assert.equal(queued.length, 1);
  });

  test('comments and long-form posts match on content and summary; other kinds, the author and near-words do not', async () => {
    const presence = new AlertWordPresence(deps, 0);
    assert.equal((await handleAlertWords(deps, post(COMMENT, 'what a sunset!'), presence)).counted, 2);
    assert.equal((await handleAlertWords(deps, post(LONG_FORM, 'text', [['summary', 'a harbour story']]), presence)).counted, 1);
    assert.equal((await handleAlertWords(deps, post(REACTION, 'sunset'), presence)).counted, 0);
    assert.equal((await handleAlertWords(deps, post(COMMENT, 'sunsets and harbours'), presence)).counted, 0);
    assert.equal(
      (await handleAlertWords(deps, post(COMMENT, 'my sunset', [], watcher), presence)).counted,
      1,
      'not the author, only muted',
    );
    assert.equal((await store.readInboxCounts(watcher.pubkey)).types.keyword.total, 2);
  });

  test('content older than notification.max_event_age_secs neither counts nor pushes', async () => {
    const old = signEvent(
      { kind: COMMENT, created_at: Math.floor(clock.nowMs() / 1000) - 3601, tags: [], content: 'sunset' },
      author.secret,
    );
    assert.deepEqual(await handleAlertWords(deps, old, new AlertWordPresence(deps, 0)), { counted: 0, pushed: 0 });
    assert.equal(queued.length, 0);
  });

  test('the allowlist limits who counts', async () => {
    deps.allowedPubkeys = new Set([muted.pubkey]);
    assert.deepEqual(await handleAlertWords(deps, post(COMMENT, 'sunset'), new AlertWordPresence(deps, 0)), { counted: 1, pushed: 0 });
    assert.equal((await store.readInboxCounts(watcher.pubkey)).types.keyword.total, 0);
  });

  test('while no word is watched the index is asked once per refresh interval, and a word added is matched after it', async () => {
    await store.replaceAlertWords(watcher.pubkey, []);
    await store.replaceAlertWords(muted.pubkey, []);
    const presence = new AlertWordPresence(deps, 5_000);
    assert.equal(await presence.any(), false);
    await store.replaceAlertWords(watcher.pubkey, ['sunset']);
    assert.equal(await presence.any(), false, 'believed for the interval');
    clock.advance(5_000);
    assert.equal(await presence.any(), true);
  });

  test('matchedText: content, then title and summary tags, nothing else', () => {
    const event = post(VIDEO, 'body', [
      ['title', 'T'],
      ['summary', 'S'],
      ['alt', 'ignored'],
    ]);
    assert.equal(matchedText(event), 'body\nT\nS');
  });
});
