import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { frameText, machinePrefix, parseRelayFrame, peekEventFrame } from './relay-frames.ts';

const ID = 'a'.repeat(64);

describe('parseRelayFrame', () => {
  test('parses every relay-to-client frame type', () => {
    assert.deepEqual(parseRelayFrame(`["EVENT","s",{"id":"${ID}"}]`), { type: 'EVENT', subscriptionId: 's', event: { id: ID } });
    assert.deepEqual(parseRelayFrame('["EOSE","s"]'), { type: 'EOSE', subscriptionId: 's' });
    assert.deepEqual(parseRelayFrame('["CLOSED","s","error: gone"]'), { type: 'CLOSED', subscriptionId: 's', reason: 'error: gone' });
    assert.deepEqual(parseRelayFrame('["CLOSED","s"]'), { type: 'CLOSED', subscriptionId: 's', reason: '' });
    assert.deepEqual(parseRelayFrame('["NOTICE","hello"]'), { type: 'NOTICE', message: 'hello' });
    assert.deepEqual(parseRelayFrame(`["OK","${ID}",true,""]`), { type: 'OK', eventId: ID, accepted: true, message: '' });
    assert.deepEqual(parseRelayFrame('["AUTH","challenge-1"]'), { type: 'AUTH', challenge: 'challenge-1' });
  });

  test('names what is wrong with a malformed frame instead of throwing', () => {
    const cases: Array<[string, string]> = [
      ['not json', 'not_json'],
      ['', 'not_json'],
      ['{"a":1}', 'not_array'],
      ['[]', 'not_array'],
      ['[1,2]', 'not_array'],
      ['["EVENT"]', 'bad_event'],
      ['["EVENT","s"]', 'bad_event'],
      ['["EVENT",5,{}]', 'bad_event'],
      [`["EVENT","${'x'.repeat(65)}",{}]`, 'bad_event'],
      ['["EOSE"]', 'bad_eose'],
      ['["CLOSED","s",5]', 'bad_closed'],
      ['["NOTICE",{}]', 'bad_notice'],
      ['["OK","id","yes"]', 'bad_ok'],
      ['["AUTH",""]', 'bad_auth'],
      [`["AUTH","${'c'.repeat(2000)}"]`, 'bad_auth'],
      ['["COUNT","s",{"count":1}]', 'unknown_type'],
    ];
    for (const [text, reason] of cases) assert.deepEqual(parseRelayFrame(text), { type: 'invalid', reason }, text);
  });

  test('cuts a huge NOTICE for the logs', () => {
    const frame = parseRelayFrame(JSON.stringify(['NOTICE', 'n'.repeat(10_000)]));
    assert.equal(frame.type, 'NOTICE');
    assert.ok(frame.message.length < 600);
  });
});

describe('peekEventFrame', () => {
  test('reads the subscription id and event id without parsing', () => {
    assert.deepEqual(peekEventFrame(`["EVENT", "push-live-events", {"kind":1,"id": "${ID}","tags":[]}]`), {
      subscriptionId: 'push-live-events',
      eventId: ID,
    });
  });

  test('does not take an escaped "id" inside content for the event id', () => {
    const text = JSON.stringify(['EVENT', 's', { content: `{"id":"${ID}"}`, kind: 1 }]);
    assert.deepEqual(peekEventFrame(text), { subscriptionId: 's', eventId: null });
  });

  test('returns null for frames that are not EVENT frames', () => {
    assert.equal(peekEventFrame('["EOSE","s"]'), null);
    assert.equal(peekEventFrame('garbage'), null);
    assert.equal(peekEventFrame('["EVENT","s\\"x",{}]'), null);
  });
});

test('machinePrefix reads the NIP-01 prefix of a CLOSED or OK message', () => {
  assert.equal(machinePrefix('auth-required: we need AUTH'), 'auth-required');
  assert.equal(machinePrefix('rate-limited: slow down'), 'rate-limited');
  assert.equal(machinePrefix('no prefix here'), '');
  assert.equal(machinePrefix(''), '');
});

test('frameText decodes every ws payload form', () => {
  assert.equal(frameText(Buffer.from('ab')), 'ab');
  assert.equal(frameText([Buffer.from('a'), Buffer.from('b')]), 'ab');
  assert.equal(frameText(new TextEncoder().encode('ab').buffer), 'ab');
});
