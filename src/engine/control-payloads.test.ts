import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { parsePreferencesPayload, parseSocialFiltersPayload, parseTokenPayload } from './control-payloads.ts';

describe('token payload (3079/3080)', () => {
  test("divine's shape: token and optional offset, fcm by default", () => {
    assert.deepEqual(parseTokenPayload('{"token":"  fcm-token-1  ","timezoneOffsetMinutes":600}'), {
      ok: true,
      value: { token: 'fcm-token-1', transport: 'fcm', timezoneOffsetMinutes: 600 },
    });
    assert.deepEqual(parseTokenPayload('{"token":"t"}'), { ok: true, value: { token: 't', transport: 'fcm' } });
  });

  test("an empty token is rejected with divine's text", () => {
    assert.deepEqual(parseTokenPayload('{"token":"   "}'), { ok: false, reason: 'Token cannot be empty' });
  });

  test('web push and unifiedpush carry endpoint and keys', () => {
    const body = {
      token: 'https://push.example/abc',
      transport: 'unifiedpush',
      endpoint: 'https://push.example/abc',
      p256dh: 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM',
      auth: 'tBHItJI5svbpez7KI4CCXg',
    };
    const parsed = parseTokenPayload(JSON.stringify(body));
    assert.deepEqual(parsed, {
      ok: true,
      value: { token: body.token, transport: 'unifiedpush', endpoint: body.endpoint, p256dh: body.p256dh, auth: body.auth },
    });
    assert.equal(parseTokenPayload(JSON.stringify({ ...body, p256dh: undefined })).ok, false);
    assert.equal(parseTokenPayload(JSON.stringify({ ...body, endpoint: 'ftp://x' })).ok, false);
  });

  test('a device may name its locale: canonicalised, underscores accepted, rubbish refused', () => {
    assert.deepEqual(parseTokenPayload(JSON.stringify({ token: 't', locale: 'pt-br' })), {
      ok: true,
      value: { token: 't', transport: 'fcm', locale: 'pt-BR' },
    });
    assert.deepEqual(parseTokenPayload(JSON.stringify({ token: 't', locale: 'ja_JP' })), {
      ok: true,
      value: { token: 't', transport: 'fcm', locale: 'ja-JP' },
    });
    assert.deepEqual(parseTokenPayload(JSON.stringify({ token: 't', locale: null })), {
      ok: true,
      value: { token: 't', transport: 'fcm' },
    });
    for (const locale of ['not a locale', 42, '', 'x'.repeat(100)])
      assert.deepEqual(parseTokenPayload(JSON.stringify({ token: 't', locale })), {
        ok: false,
        reason: 'locale must be a BCP 47 language tag such as pt-BR',
      });
  });

  test('an apns device may ask for the sandbox; any device may name an encryptTo key', () => {
    const key = 'AB'.repeat(32);
    assert.deepEqual(parseTokenPayload(JSON.stringify({ token: 'd'.repeat(64), transport: 'apns', sandbox: true, encryptTo: key })), {
      ok: true,
      value: { token: 'd'.repeat(64), transport: 'apns', sandbox: true, encryptTo: key.toLowerCase() },
    });
    assert.deepEqual(parseTokenPayload(JSON.stringify({ token: 't', transport: 'apns', sandbox: false })), {
      ok: true,
      value: { token: 't', transport: 'apns' },
    });
    assert.deepEqual(parseTokenPayload(JSON.stringify({ token: 't', sandbox: true })), {
      ok: false,
      reason: 'sandbox applies to apns devices only',
    });
    assert.deepEqual(parseTokenPayload(JSON.stringify({ token: 't', sandbox: 'yes' })), { ok: false, reason: 'sandbox must be a boolean' });
    assert.deepEqual(parseTokenPayload(JSON.stringify({ token: 't', encryptTo: 'npub1xyz' })), {
      ok: false,
      reason: 'encryptTo must be a 64-character hex public key',
    });
  });

  test('bad shapes are reasons, never throws', () => {
    for (const text of [
      '',
      'not json',
      '[]',
      'null',
      '{"token":5}',
      '{"token":"t","transport":"carrier-pigeon"}',
      '{"token":"t","timezoneOffsetMinutes":"600"}',
      '{"token":"t","timezoneOffsetMinutes":5000}',
    ]) {
      const parsed = parseTokenPayload(text);
      assert.equal(parsed.ok, false, text);
    }
    assert.equal(parseTokenPayload(JSON.stringify({ token: 'x'.repeat(5000) })).ok, false);
  });
});

describe('preferences payload (3083)', () => {
  test('kinds and campaign consent; missing consent is false; duplicates collapse', () => {
    assert.deepEqual(parsePreferencesPayload('{"kinds":[1,7,16,7],"campaignsEnabled":true}'), {
      ok: true,
      value: { kinds: [1, 7, 16], campaignsEnabled: true },
    });
    assert.deepEqual(parsePreferencesPayload('{"kinds":[]}'), { ok: true, value: { kinds: [], campaignsEnabled: false } });
  });

  test('bad shapes are reasons', () => {
    for (const text of ['{}', '{"kinds":"7"}', '{"kinds":[1.5]}', '{"kinds":[-1]}', '{"kinds":[1],"campaignsEnabled":"yes"}', 'nope']) {
      assert.equal(parsePreferencesPayload(text).ok, false, text);
    }
  });
});

describe('social filters of a preferences payload (3083)', () => {
  const muted = 'AB'.repeat(32);
  test('absent fields filter nothing', () => {
    assert.deepEqual(parseSocialFiltersPayload('{"kinds":[7]}'), { ok: true, value: { mutedPubkeys: [], onlyFollowing: null } });
  });

  test('mutedPubkeys are lowercased and deduplicated; onlyFollowing true is every type, a list is those types', () => {
    assert.deepEqual(
      parseSocialFiltersPayload(JSON.stringify({ kinds: [], mutedPubkeys: [muted, muted.toLowerCase()], onlyFollowing: true })),
      {
        ok: true,
        value: { mutedPubkeys: [muted.toLowerCase()], onlyFollowing: 'all' },
      },
    );
    assert.deepEqual(parseSocialFiltersPayload(JSON.stringify({ onlyFollowing: ['like', 'comment', 'like'] })), {
      ok: true,
      value: { mutedPubkeys: [], onlyFollowing: ['like', 'comment'] },
    });
    assert.deepEqual(parseSocialFiltersPayload(JSON.stringify({ onlyFollowing: false })), {
      ok: true,
      value: { mutedPubkeys: [], onlyFollowing: null },
    });
  });

  test('bad shapes are reasons', () => {
    assert.equal(parseSocialFiltersPayload(JSON.stringify({ mutedPubkeys: 'x' })).ok, false);
    assert.equal(parseSocialFiltersPayload(JSON.stringify({ mutedPubkeys: ['npub1abc'] })).ok, false);
    assert.equal(parseSocialFiltersPayload(JSON.stringify({ onlyFollowing: ['zap'] })).ok, false);
    assert.equal(parseSocialFiltersPayload(JSON.stringify({ onlyFollowing: 'yes' })).ok, false);
  });
});
