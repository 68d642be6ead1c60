import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { finalizeEvent, generateSecretKey } from 'nostr-tools/pure';
import type { NostrEvent } from '../nostr/event.ts';
import { parseNip9aRegistration, registrationWants, type Nip9aRegistration } from './registration.ts';
import type { CallbackPolicy } from './ssrf.ts';

const policy: CallbackPolicy = { allowedOrigins: new Set(['https://push.example.org']), allowLoopback: false };
const secret = generateSecretKey();

function registration(tags: string[][], createdAt = 1_700_000_000): NostrEvent {
  return finalizeEvent({ kind: 30390, created_at: createdAt, content: '', tags }, secret);
}

const BASE = [
  ['d', 'inbox'],
  ['relay', 'wss://Relay.Example.com'],
  ['filter', '{"kinds":[1,1111],"#p":["' + 'c'.repeat(64) + '"]}'],
  ['callback', 'https://push.example.org/cb/secret'],
];

function refusal(tags: string[][]): string {
  const checked = parseNip9aRegistration(registration(tags), { callbackPolicy: policy });
  if (checked.ok) assert.fail('expected a refusal');
  return checked.reason;
}

describe('kind 30390 parsing', () => {
  test('a valid registration is parsed, its relay normalised', () => {
    const checked = parseNip9aRegistration(registration([...BASE, ['ignore', '{"#t":["muted"]}'], ['include_event']]), {
      callbackPolicy: policy,
    });
    assert.ok(checked.ok);
    assert.deepEqual(checked.registration.relays, ['wss://relay.example.com/']);
    assert.equal(checked.registration.includeEvent, true);
    assert.deepEqual(checked.registration.ignores, [{ tags: { t: ['muted'] } }]);
  });

  test('search, limit and unknown filter fields are refused', () => {
    assert.match(refusal([...BASE, ['filter', '{"search":"x"}']]), /search/);
    assert.match(refusal([...BASE, ['filter', '{"kinds":[1],"limit":5}']]), /limit/);
    assert.match(refusal([...BASE, ['ignore', '{"foo":[1]}']]), /unknown filter field "foo"/);
    assert.match(refusal([...BASE, ['filter', '[1]']]), /not a JSON object/);
  });

  test('at most 8 filters and 8 ignore filters', () => {
    const nine = (name: string) => Array.from({ length: 9 }, (_, i) => [name, `{"kinds":[${i}]}`]);
    assert.match(refusal([...BASE.filter((t) => t[0] !== 'filter'), ...nine('filter')]), /9 filters, at most 8/);
    assert.match(refusal([...BASE, ...nine('ignore')]), /9 ignore filters, at most 8/);
  });

  test('d, relay, filter and callback are required; d and callback once', () => {
    assert.match(refusal(BASE.filter((t) => t[0] !== 'd')), /no d tag/);
    assert.match(refusal(BASE.filter((t) => t[0] !== 'relay')), /no relay/);
    assert.match(refusal(BASE.filter((t) => t[0] !== 'filter')), /no filter/);
    assert.match(refusal(BASE.filter((t) => t[0] !== 'callback')), /no callback/);
    assert.match(refusal([...BASE, ['d', 'again']]), /more than one d/);
    assert.match(refusal([...BASE, ['callback', 'https://push.example.org/2']]), /more than one callback/);
  });

  test('over 8 KiB is refused', () => {
    assert.match(refusal([...BASE, ['padding', 'x'.repeat(8200)]]), /over the 8192-byte limit/);
  });

  test('a callback outside the allowlist is blocked, with the SSRF reason', () => {
    const reason = refusal([...BASE.filter((t) => t[0] !== 'callback'), ['callback', 'https://10.0.0.1/cb']]);
    assert.match(reason, /^blocked: .*10\.0\.0\.1 is a private address/);
  });

  test('a relay that is not wss is refused', () => {
    assert.match(refusal([...BASE.filter((t) => t[0] !== 'relay'), ['relay', 'ws://relay.example.com']]), /only wss/);
  });
});

describe('registration matching', () => {
  const checked = parseNip9aRegistration(registration([...BASE, ['ignore', '{"#t":["muted"]}']]), { callbackPolicy: policy });
  assert.ok(checked.ok);
  const reg: Nip9aRegistration = checked.registration;
  const other = generateSecretKey();
  const event = (tags: string[][], kind = 1, createdAt = 1_700_000_100): NostrEvent =>
    finalizeEvent({ kind, created_at: createdAt, content: 'hi', tags }, other);

  test('a matching filter wants the event', () => {
    assert.equal(registrationWants(reg, event([['p', 'c'.repeat(64)]])), true);
  });
  test('an ignore match suppresses it', () => {
    assert.equal(
      registrationWants(
        reg,
        event([
          ['p', 'c'.repeat(64)],
          ['t', 'muted'],
        ]),
      ),
      false,
    );
  });
  test('other kinds and other tags do not match', () => {
    assert.equal(registrationWants(reg, event([['p', 'c'.repeat(64)]], 7)), false);
    assert.equal(registrationWants(reg, event([['p', 'd'.repeat(64)]])), false);
  });
  test('events older than the registration are not delivered (no backfill)', () => {
    assert.equal(registrationWants(reg, event([['p', 'c'.repeat(64)]], 1, 1_699_999_999)), false);
  });
});
