import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { NostrEvent } from '../nostr/event.ts';
import { npubEncode, shortNpub } from '../nostr/nip19.ts';
import type { ProfileResolver } from './profiles.ts';
import { LazyEventCopy } from './event-copy.ts';

/** The words of a copy and its sender (its template is tested in templates/). */
const words = ({ title, body, senderName }: { title: string; body: string; senderName: string }) => ({ title, body, senderName });

const ALICE = 'a'.repeat(64);
const BOB = 'b'.repeat(64);

function event(kind: number, content: string): NostrEvent {
  return { id: 'f'.repeat(64), pubkey: ALICE, created_at: 1, kind, tags: [], content, sig: '0'.repeat(128) };
}

/** A resolver that counts lookups per pubkey; names from `names`, failures for `failing`. */
function countingResolver(names: Record<string, string>, failing: ReadonlySet<string> = new Set()): ProfileResolver & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async displayName(pubkey) {
      calls.push(pubkey);
      if (failing.has(pubkey)) throw new Error('lookup failed');
      return names[pubkey] ?? null;
    },
  };
}

describe('LazyEventCopy', () => {
  test('nothing is resolved until a copy is first asked for', async () => {
    const profiles = countingResolver({ [ALICE]: 'Alice' });
    const copy = new LazyEventCopy({ event: event(7, '+'), types: ['like', 'like'], profiles });
    assert.deepEqual(profiles.calls, []);
    assert.deepEqual(words(await copy.copyFor('like')), { title: 'New like', body: 'Alice liked your post', senderName: 'Alice' });
    assert.deepEqual(profiles.calls, [ALICE]);
  });

  test('the sender name is resolved once for every recipient, even concurrently', async () => {
    const profiles = countingResolver({ [ALICE]: 'Alice' });
    const copy = new LazyEventCopy({ event: event(7, '+'), types: ['like'], profiles });
    const copies = await Promise.all([copy.copyFor('like'), copy.copyFor('like'), copy.copyFor('like')]);
    await copy.copyFor('like');
    assert.equal(new Set(copies.map((c) => c.body)).size, 1);
    assert.deepEqual(profiles.calls, [ALICE]);
  });

  test('a like never formats the content', async () => {
    const profiles = countingResolver({ [ALICE]: 'Alice', [BOB]: 'bob' });
    const copy = new LazyEventCopy({ event: event(7, `nostr:${npubEncode(BOB)}`), types: ['like'], profiles });
    assert.deepEqual(await copy.parts(), { senderName: 'Alice' });
    assert.deepEqual(profiles.calls, [ALICE]);
  });

  test('a mention body uses the resolved content: "Alice: hey @bob"', async () => {
    const profiles = countingResolver({ [ALICE]: 'Alice', [BOB]: 'bob' });
    const copy = new LazyEventCopy({ event: event(30023, `hey nostr:${npubEncode(BOB)}`), types: ['mention'], profiles });
    assert.deepEqual(words(await copy.copyFor('mention')), { title: 'You were mentioned', body: 'Alice: hey @bob', senderName: 'Alice' });
    await copy.copyFor('mention');
    assert.deepEqual(profiles.calls.sort(), [ALICE, BOB].sort(), 'sender and mention resolved once each');
  });

  test('content the formatter cannot use stays raw: "Alice: hey nostr:npub1raw"', async () => {
    const profiles = countingResolver({ [ALICE]: 'Alice' });
    const copy = new LazyEventCopy({ event: event(1111, 'hey nostr:npub1raw'), types: ['comment'], profiles });
    assert.equal((await copy.copyFor('comment')).body, 'Alice: hey nostr:npub1raw');
  });

  test('a failed mention lookup falls back to the raw content', async () => {
    const raw = `hey nostr:${npubEncode(BOB)}`;
    const profiles = countingResolver({ [ALICE]: 'Alice' }, new Set([BOB]));
    const copy = new LazyEventCopy({ event: event(1111, raw), types: ['comment'], profiles });
    assert.equal((await copy.copyFor('comment')).body, `Alice: ${raw}`);
  });

  test('an unresolvable sender reads as the short npub, fixed for the whole fan-out', async () => {
    const profiles = countingResolver({}, new Set([ALICE]));
    const copy = new LazyEventCopy({ event: event(7, '+'), types: ['like'], profiles });
    assert.equal((await copy.copyFor('like')).body, `${shortNpub(ALICE)} liked your post`);
    assert.equal((await copy.copyFor('like')).senderName, shortNpub(ALICE));
    assert.equal(profiles.calls.length, 1);
  });

  test('a video delivered as mention and as new post shares one name; the bell copy ignores content', async () => {
    const profiles = countingResolver({ [ALICE]: 'Alice' });
    const copy = new LazyEventCopy({ event: event(34236, 'my new vine'), types: ['mention', 'newPost'], profiles });
    assert.equal((await copy.copyFor('mention')).body, 'Alice: my new vine');
    assert.deepEqual(words(await copy.copyFor('newPost')), { title: 'New vine', body: 'Alice posted a new vine', senderName: 'Alice' });
    assert.deepEqual(profiles.calls, [ALICE]);
  });

  test('a content type that was not announced still gets formatted content', async () => {
    const profiles = countingResolver({ [ALICE]: 'Alice' });
    const copy = new LazyEventCopy({ event: event(34236, 'clip'), types: ['newPost'], profiles });
    assert.equal((await copy.copyFor('mention')).body, 'Alice: clip');
  });
});
