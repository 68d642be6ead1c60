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
  assert.deepEqual(Object.keys(toWireMessage({ id: 'x', topic: 't', timeMs: 0, expiresMs: 0, message: 'm', tags: [] })), [
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
