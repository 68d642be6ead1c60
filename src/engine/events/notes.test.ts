import { test } from 'node:test';
import assert from 'node:assert/strict';
import { npubEncode } from 'nostr-tools/nip19';
import type { NostrEvent } from '../../nostr/event.ts';
import { NoteCopy, noteRecipients, type NoteAuthorLookup } from './notes.ts';

const AUTHOR = 'a'.repeat(64);
const PARENT_AUTHOR = 'b'.repeat(64);
const ROOT_AUTHOR = 'c'.repeat(64);
const MENTIONED = 'd'.repeat(64);
const ROOT = '1'.repeat(64);
const PARENT = '2'.repeat(64);

function note(tags: string[][], content = 'hello'): NostrEvent {
  return { id: 'f'.repeat(64), pubkey: AUTHOR, created_at: 1_712_345_678, kind: 1, tags, content, sig: '0'.repeat(128) };
}

/** A lookup that knows some notes' authors and records what it was asked. */
function lookup(known: Record<string, string>): NoteAuthorLookup & { asked: string[] } {
  const asked: string[] = [];
  const fn = (eventId: string) => {
    asked.push(eventId);
    return Promise.resolve(known[eventId] ?? null);
  };
  return Object.assign(fn, { asked });
}

test('a marked reply notifies the parent and root authors from their hints, then the p-tagged as mentions', async () => {
  const authors = lookup({});
  const recipients = await noteRecipients(
    note([
      ['e', ROOT, '', 'root', ROOT_AUTHOR],
      ['e', PARENT, '', 'reply', PARENT_AUTHOR],
      ['p', ROOT_AUTHOR],
      ['p', PARENT_AUTHOR],
      ['p', MENTIONED],
      ['p', AUTHOR],
    ]),
    authors,
  );
  assert.deepEqual(recipients, [
    { pubkey: PARENT_AUTHOR, type: 'reply' },
    { pubkey: ROOT_AUTHOR, type: 'reply' },
    { pubkey: MENTIONED, type: 'mention' },
  ]);
  assert.deepEqual(authors.asked, [], 'hints need no relay query');
});

test('a positional reply without hints asks the relays for the authors; a direct reply asks once', async () => {
  const authors = lookup({ [ROOT]: ROOT_AUTHOR, [PARENT]: PARENT_AUTHOR });
  assert.deepEqual(
    await noteRecipients(
      note([
        ['e', ROOT],
        ['e', PARENT],
      ]),
      authors,
    ),
    [
      { pubkey: PARENT_AUTHOR, type: 'reply' },
      { pubkey: ROOT_AUTHOR, type: 'reply' },
    ],
  );
  const direct = lookup({ [ROOT]: ROOT_AUTHOR });
  assert.deepEqual(await noteRecipients(note([['e', ROOT]]), direct), [{ pubkey: ROOT_AUTHOR, type: 'reply' }]);
  assert.deepEqual(direct.asked, [ROOT]);
});

test('a parent nobody can find notifies nobody as its author; a reply to oneself notifies nobody', async () => {
  assert.deepEqual(await noteRecipients(note([['e', PARENT, '', 'reply']]), lookup({})), []);
  assert.deepEqual(await noteRecipients(note([['e', PARENT, '', 'reply', AUTHOR]]), lookup({})), []);
});

test('a plain note notifies those it mentions, by p tag or NIP-27 reference', async () => {
  const recipients = await noteRecipients(note([['p', MENTIONED]], `hey nostr:${npubEncode(ROOT_AUTHOR)}`), lookup({}));
  assert.deepEqual(recipients, [
    { pubkey: MENTIONED, type: 'mention' },
    { pubkey: ROOT_AUTHOR, type: 'mention' },
  ]);
});

test('note copy: the sender name and the mention-formatted text, worded for notes', async () => {
  const names: Record<string, string> = { [AUTHOR]: 'Alice', [MENTIONED]: 'dave' };
  const copy = new NoteCopy(note([], `thanks nostr:${npubEncode(MENTIONED)}`), { displayName: (p) => Promise.resolve(names[p] ?? null) });
  assert.deepEqual(withoutTemplate(await copy.copyFor('reply')), { title: 'Alice replied', body: 'thanks @dave', senderName: 'Alice' });
  assert.deepEqual(withoutTemplate(await copy.copyFor('mention')), {
    title: 'Alice mentioned you',
    body: 'thanks @dave',
    senderName: 'Alice',
  });
});

/** The copy as the wire sees it: the template it was rendered from travels beside it for other languages. */
function withoutTemplate<T extends { template?: unknown }>(copy: T): Omit<T, 'template'> {
  const { template: _template, ...rest } = copy;
  return rest;
}
