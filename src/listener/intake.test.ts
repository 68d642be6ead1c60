import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEventVerifier, type NostrEvent } from '../nostr/event.ts';
import { generateSecretKey, publicKeyOf, signEvent } from '../nostr/keys.ts';
import { classifyEvent, type IntakeDeps } from './intake.ts';

const service = generateSecretKey();
const author = generateSecretKey();
const now = Math.floor(Date.now() / 1000);

function note(secret: string, tags: string[][] = []): NostrEvent {
  return signEvent({ kind: 1, created_at: now, tags, content: 'hello' }, secret);
}

async function deps(seen: string[] = []): Promise<IntakeDeps> {
  return { verifier: await createEventVerifier(), servicePubkey: publicKeyOf(service), isSeen: (id) => seen.includes(id) };
}

test('an authentic event is accepted', async () => {
  const event = note(author);
  const result = await classifyEvent(event, now, await deps());
  assert.equal(result.outcome, 'accept');
  assert.equal(result.event.id, event.id);
});

test('bad shapes are rejected with the parseEvent code', async () => {
  const result = await classifyEvent({ id: 5 }, now, await deps());
  assert.equal(result.outcome, 'invalid');
  assert.equal(result.reason, 'bad-id');
  const tooManyTags = { ...note(author), tags: Array.from({ length: 10_000 }, () => ['t', 'x']) };
  const tags = await classifyEvent(tooManyTags, now, await deps());
  assert.equal(tags.outcome === 'invalid' && tags.reason, 'too-many-tags');
});

test('a bad signature or a tampered content is rejected', async () => {
  const event = note(author);
  const tampered = { ...event, content: 'changed' };
  const result = await classifyEvent(tampered, now, await deps());
  assert.equal(result.outcome === 'invalid' && result.reason, 'bad-signature');
  const badSig = { ...event, sig: (event.sig[0] === 'a' ? 'b' : 'a') + event.sig.slice(1) };
  const sig = await classifyEvent(badSig, now, await deps());
  assert.equal(sig.outcome === 'invalid' && sig.reason, 'bad-signature');
});

test('an expired event (NIP-40) is rejected', async () => {
  const result = await classifyEvent(note(author, [['expiration', String(now - 1)]]), now, await deps());
  assert.equal(result.outcome === 'invalid' && result.reason, 'expired');
});

test("the service's own events are skipped and known ids are duplicates", async () => {
  assert.equal((await classifyEvent(note(service), now, await deps())).outcome, 'own');
  const event = note(author);
  assert.equal((await classifyEvent(event, now, await deps([event.id]))).outcome, 'duplicate');
});

test('a verifier with verifyAsync is checked off thread, and its answer is what counts', async () => {
  const event = note(author);
  const inline = await createEventVerifier();
  let offThread = 0;
  const verifier = {
    verify: () => assert.fail('the inline path must not be used'),
    verifyAsync: async (e: NostrEvent) => (offThread++, inline.verify(e)),
  };
  const result = await classifyEvent(event, now, { verifier, servicePubkey: publicKeyOf(service), isSeen: () => false });
  assert.equal(result.outcome, 'accept');
  const refused = await classifyEvent(note(author), now, {
    verifier: { ...verifier, verifyAsync: async () => false },
    servicePubkey: publicKeyOf(service),
    isSeen: () => false,
  });
  assert.equal(refused.outcome === 'invalid' && refused.reason, 'bad-signature');
  assert.equal(offThread, 1);
});
