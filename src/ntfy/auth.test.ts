import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_ACCESS_VALUES, parseTokenEntry, TopicAuthorizer, type TokenEntry } from './auth.ts';
import { NtfyError } from './errors.ts';

const entry = (text: string): TokenEntry => parseTokenEntry(text) as TokenEntry;
const codeOf = (fn: () => unknown): number | undefined => {
  try {
    fn();
  } catch (err) {
    return err instanceof NtfyError ? err.code : undefined;
  }
  return undefined;
};
const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`;

test('token entries: <token>:<access>:<pattern>, the token may hold colons; problems never show the token', () => {
  const parsed = entry('user:pass:ro:up*');
  assert.equal(parsed.token, 'user:pass');
  assert.deepEqual(parsed.access, { read: true, write: false });
  assert.ok(parsed.pattern.test('upAnything') && !parsed.pattern.test('xup'));
  for (const bad of ['tk_secret', 'tk_secret:rw', 'tk_secret:admin:*', 'tk_secret:rw:bad.topic', ':rw:*']) {
    const problem = parseTokenEntry(bad);
    assert.ok(typeof problem === 'string', bad);
    assert.ok(!problem.includes('tk_secret'), problem);
  }
});

test('with no token configured every credential is ignored', () => {
  const open = new TopicAuthorizer(DEFAULT_ACCESS_VALUES['read-write'] as never, []);
  assert.equal(open.authenticate('Bearer whatever', undefined), null);
  assert.equal(open.enforcing, false);
  open.authorize(null, ['any'], 'write');
});

test('header forms, ?auth=, ignored schemes, 401 for unknown and 403 for not permitted', () => {
  const auth = new TopicAuthorizer(DEFAULT_ACCESS_VALUES['read-only'] as never, [
    entry('tk_a:rw:alerts*'),
    entry('tk_a:deny:*'),
    entry('bob:pw:wo:up*'),
  ]);
  assert.equal(auth.authenticate('Bearer tk_a', undefined), 'tk_a');
  assert.equal(auth.authenticate('bearer tk_a', undefined), 'tk_a');
  assert.equal(auth.authenticate(basic(':tk_a'), undefined), 'tk_a');
  assert.equal(auth.authenticate(basic('bob:pw'), undefined), 'bob:pw');
  assert.equal(auth.authenticate(undefined, Buffer.from(basic('bob:pw')).toString('base64url')), 'bob:pw');
  assert.equal(auth.authenticate('vapid t=x, k=y', undefined), null);
  assert.equal(auth.authenticate('WebPush eyJ', undefined), null);
  assert.equal(
    auth.authenticate('vapid t=x, k=y', Buffer.from('Bearer tk_a').toString('base64url')),
    'tk_a',
    'an ignored header leaves ?auth= to decide',
  );
  assert.equal(
    codeOf(() => auth.authenticate('Bearer nope', undefined)),
    40101,
  );
  assert.equal(
    codeOf(() => auth.authenticate(undefined, 'garbage')),
    40101,
  );
  auth.authorize('tk_a', ['alerts1', 'alerts2'], 'write');
  assert.equal(
    codeOf(() => auth.authorize('tk_a', ['alerts1', 'other'], 'read')),
    40301,
    'first match wins: deny for other',
  );
  auth.authorize(null, ['other'], 'read');
  assert.equal(
    codeOf(() => auth.authorize(null, ['other'], 'write')),
    40301,
  );
  auth.authorize('bob:pw', ['up1'], 'write');
  assert.equal(
    codeOf(() => auth.authorize('bob:pw', ['up1'], 'read')),
    40301,
  );
});
