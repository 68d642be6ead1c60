import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NtfyMessage } from '../store/port-ntfy.ts';
import { controlFrame, messageFrame, toWireMessage } from './wire.ts';

const MESSAGE: NtfyMessage = {
  id: 'AbCdEf123456',
  topic: 'upTopic',
  timeMs: 1_700_000_000_999,
  expiresMs: 1_700_043_200_999,
  message: 'line one\nline two',
  title: 'T',
  priority: 4,
  tags: ['a'],
  encoding: 'base64',
};

test('the message JSON has ntfy field order, whole seconds and no empty fields', () => {
  assert.equal(
    JSON.stringify(toWireMessage(MESSAGE)),
    '{"id":"AbCdEf123456","time":1700000000,"expires":1700043200,"event":"message","topic":"upTopic","title":"T","message":"line one\\nline two","priority":4,"tags":["a"],"encoding":"base64"}',
  );
  assert.deepEqual(Object.keys(toWireMessage({ id: 'x', topic: 't', timeMs: 0, expiresMs: 1000, message: 'm', tags: [] })), [
    'id',
    'time',
    'expires',
    'event',
    'topic',
    'message',
  ]);
});

test('framing per transport', () => {
  const json = JSON.stringify(toWireMessage(MESSAGE));
  assert.equal(messageFrame('json', MESSAGE), `${json}\n`);
  assert.equal(messageFrame('ws', MESSAGE), `${json}\n`);
  assert.equal(messageFrame('sse', MESSAGE), `data: ${json}\n\n`);
  assert.equal(messageFrame('raw', MESSAGE), 'line one line two\n');
  assert.equal(controlFrame('raw', 'keepalive', 'a,b', 0), '\n');
  const open = controlFrame('sse', 'open', 'a,b', 5_000);
  assert.match(open, /^event: open\ndata: \{"id":"[0-9A-Za-z]{12}","time":5,"event":"open","topic":"a,b"\}\n\n$/);
  assert.match(
    controlFrame('json', 'keepalive', 'a,b', 5_000),
    /^\{"id":"[0-9A-Za-z]{12}","time":5,"event":"keepalive","topic":"a,b"\}\n$/,
  );
});

test('actions, attachment, poll_id and sequence_id in ntfy field order; no expires for a message never stored', () => {
  const wire = toWireMessage({
    id: 'AbCdEf123456',
    topic: 't',
    timeMs: 5_000,
    expiresMs: 0,
    message: 'm',
    sequenceId: 'ScheduledId1',
    contentType: 'text/markdown',
    attachment: { name: 'a.apk', url: 'https://x.example/a.apk' },
    actions: [{ id: 'aaaaaaaaaa', action: 'view', label: 'Open', clear: false, url: 'https://x.example/' }],
  });
  assert.equal(
    JSON.stringify(wire),
    '{"id":"AbCdEf123456","sequence_id":"ScheduledId1","time":5,"event":"message","topic":"t","message":"m",' +
      '"actions":[{"id":"aaaaaaaaaa","action":"view","label":"Open","clear":false,"url":"https://x.example/"}],' +
      '"attachment":{"name":"a.apk","url":"https://x.example/a.apk"},"content_type":"text/markdown"}',
  );
  assert.equal(toWireMessage({ ...MESSAGE, sequenceId: MESSAGE.id }).sequence_id, undefined, 'left out when it is the id itself');
});

test('a poll request is a poll_request event: named on SSE, an empty line on raw', () => {
  const poll: NtfyMessage = { id: 'AbCdEf123456', topic: 't', timeMs: 5_000, expiresMs: 0, message: 'New message', pollId: 'p1' };
  const json = JSON.stringify(toWireMessage(poll));
  assert.equal(json, '{"id":"AbCdEf123456","time":5,"event":"poll_request","topic":"t","message":"New message","poll_id":"p1"}');
  assert.equal(messageFrame('sse', poll), `event: poll_request\ndata: ${json}\n\n`);
  assert.equal(messageFrame('raw', poll), '\n');
});
