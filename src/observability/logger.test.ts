import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger, redact, resolveLogFormat } from './logger.ts';

test('redact keeps a short prefix of a token and the origin of a URL', () => {
  assert.equal(redact('abcdefghijklmnop'), 'abcdefgh…');
  assert.equal(redact('1234567é-bad'), '1234567é…');
  assert.equal(redact('short'), 'short');
  assert.equal(redact('https://push.example.com/wpush/v2/gAAAAABsecret?x=1'), 'https://push.example.com/wp…');
  assert.equal(redact(''), '');
});

test('secret fields are redacted in log lines wherever they appear', () => {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
  const log = createLogger({ level: 'info', destination: sink });
  log.info({ token: 'fcm-token-that-is-long', device: { endpoint: 'https://up.example/topic-secret' } }, 'sent');
  const line = JSON.parse(lines[0] as string) as { token: string; device: { endpoint: string } };
  assert.equal(line.token, 'fcm-toke…');
  assert.equal(line.device.endpoint, 'https://up.example/to…');
  assert.ok(!lines[0]?.includes('token-that-is-long'));
});

test('log.format auto is pretty on a terminal only; json and pretty are what they say', () => {
  assert.equal(resolveLogFormat('auto', true), 'pretty');
  assert.equal(resolveLogFormat('auto', false), 'json');
  assert.equal(resolveLogFormat('json', true), 'json');
  assert.equal(resolveLogFormat('pretty', false), 'pretty');
});

test('a pretty logger writes one human line with the fields under it, secrets still redacted', () => {
  const chunks: string[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (chunks.push(String(chunk)), done()) });
  const log = createLogger({ level: 'info', format: 'pretty', destination: sink });
  log.warn({ token: 'fcm-token-that-is-long', summary: { hidden: true } }, 'sent');
  const text = chunks.join('');
  assert.match(text, /^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: sent\n/);
  assert.match(text, /^ {4}token: "fcm-toke…"$/m);
  assert.doesNotMatch(text, /summary|hidden|service|token-that-is-long/);
});
