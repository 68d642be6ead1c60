import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { npubEncode, truncateNpub } from '../nostr/nip19.ts';
import { formatContentForPush } from './mentions.ts';

const BOB = 'b'.repeat(64);
const CAROL = 'c'.repeat(64);
const NOBODY = 'd'.repeat(64);
const BOB_NPUB = npubEncode(BOB);
const CAROL_NPUB = npubEncode(CAROL);
const NOBODY_NPUB = npubEncode(NOBODY);

const NAMES: ReadonlyMap<string, string> = new Map([
  [BOB, 'bob'],
  [CAROL, 'Carol 🎉'],
]);

function recordingResolver(): { resolve: (pubkey: string) => Promise<string | null>; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    resolve: async (pubkey) => {
      calls.push(pubkey);
      return NAMES.get(pubkey) ?? null;
    },
  };
}

describe('formatContentForPush', () => {
  test('replaces a mention with @name', async () => {
    const { resolve } = recordingResolver();
    assert.equal(await formatContentForPush(`hey nostr:${BOB_NPUB}`, resolve), 'hey @bob');
  });

  test('replaces several mentions, keeping the text around them', async () => {
    const { resolve } = recordingResolver();
    const content = `nostr:${BOB_NPUB}, meet nostr:${CAROL_NPUB}! (nostr:${BOB_NPUB})`;
    assert.equal(await formatContentForPush(content, resolve), '@bob, meet @Carol 🎉! (@bob)');
  });

  test('resolves each distinct npub once', async () => {
    const { resolve, calls } = recordingResolver();
    await formatContentForPush(`nostr:${BOB_NPUB} nostr:${BOB_NPUB} nostr:${CAROL_NPUB} nostr:${BOB_NPUB}`, resolve);
    assert.deepEqual(calls.sort(), [BOB, CAROL].sort());
  });

  test('an unknown user reads as the truncated npub', async () => {
    const { resolve } = recordingResolver();
    assert.equal(await formatContentForPush(`cc nostr:${NOBODY_NPUB}`, resolve), `cc @${truncateNpub(NOBODY_NPUB)}`);
    assert.match(truncateNpub(NOBODY_NPUB), /^npub1.{5}\.\.\..{6}$/);
  });

  test('the match is case-insensitive and the npub lowercased', async () => {
    const { resolve } = recordingResolver();
    assert.equal(await formatContentForPush(`hi NOSTR:${BOB_NPUB.toUpperCase()}`, resolve), 'hi @bob');
  });

  test('content without mentions is returned unchanged, without lookups', async () => {
    const { resolve, calls } = recordingResolver();
    assert.equal(await formatContentForPush('hey nostr:npub1raw and npub1 alone', resolve), 'hey nostr:npub1raw and npub1 alone');
    assert.equal(await formatContentForPush('', resolve), '');
    assert.deepEqual(calls, []);
  });

  test('a well-shaped but undecodable npub is not looked up and reads truncated', async () => {
    const { resolve, calls } = recordingResolver();
    const broken = `npub1${'q'.repeat(58)}`;
    assert.equal(await formatContentForPush(`x nostr:${broken}`, resolve), `x @${truncateNpub(broken)}`);
    assert.deepEqual(calls, []);
  });

  test('a failing lookup falls back to the raw content', async () => {
    const content = `hey nostr:${BOB_NPUB}`;
    const failing = async (): Promise<string | null> => {
      throw new Error('relay down');
    };
    assert.equal(await formatContentForPush(content, failing), content);
  });

  test('only the first distinct mentions are looked up', async () => {
    const { resolve, calls } = recordingResolver();
    const result = await formatContentForPush(`nostr:${BOB_NPUB} nostr:${CAROL_NPUB}`, resolve, { maxResolvedMentions: 1 });
    assert.equal(result, `@bob @${truncateNpub(CAROL_NPUB)}`);
    assert.deepEqual(calls, [BOB]);
  });
});
