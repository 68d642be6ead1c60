import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decrypt as nip44Decrypt, getConversationKey as nip44ConversationKey } from 'nostr-tools/nip44';
import { generateSecretKey, publicKeyOf } from '../nostr/keys.ts';
import { RecordingTransport } from '../../test/support/recording-transport.ts';
import { buildApnsConfig } from './fcm/message.ts';
import { toApnsRequest } from './apns/message.ts';
import { unwrapTransport, withPayloadEncryption } from './encrypted-payload.ts';
import type { PushMessage } from '../notification/types.ts';

const like: PushMessage = {
  data: { type: 'like', eventId: 'e'.repeat(64), title: 'New like', body: 'Bob liked your post', senderPubkey: 'b'.repeat(64) },
  collapseKey: 'group-1',
};

describe('payloads encrypted to the device', () => {
  const service = (() => {
    const secret = generateSecretKey();
    return { secret, pubkey: publicKeyOf(secret) };
  })();
  const device = (() => {
    const secret = generateSecretKey();
    return { secret, pubkey: publicKeyOf(secret) };
  })();

  test('an encryptTo device gets type, eventId and one encrypted field that nostr-tools decrypts to the whole data map', async () => {
    const recording = new RecordingTransport();
    const transport = withPayloadEncryption(recording, service.secret);
    const outcomes = await transport.sendBatch(
      [
        { token: 'plain', transport: 'fcm' },
        { token: 'sealed', transport: 'fcm', encryptTo: device.pubkey },
      ],
      like,
    );
    assert.deepEqual([...outcomes.values()], [{ ok: true }, { ok: true }]);
    const plain = recording.sent.find((s) => s.token === 'plain');
    const sealed = recording.sent.find((s) => s.token === 'sealed');
    assert.deepEqual(plain?.message, like, 'a device without encryptTo gets the message as it is');
    assert.ok(sealed);
    assert.deepEqual(Object.keys(sealed.message.data), ['type', 'eventId', 'encrypted']);
    assert.equal(sealed.message.data.type, 'like');
    assert.equal(sealed.message.collapseKey, 'group-1');
    const key = nip44ConversationKey(new Uint8Array(Buffer.from(device.secret, 'hex')), service.pubkey);
    assert.deepEqual(JSON.parse(nip44Decrypt(sealed.message.data.encrypted ?? '', key)), like.data);
    assert.ok(!JSON.stringify(sealed.message).includes('Bob'), 'no clear text of the notification');
  });

  test('the sealed message still shows an iOS banner (placeholder alert, mutable-content) for the Notification Service Extension', async () => {
    const recording = new RecordingTransport();
    await withPayloadEncryption(recording, service.secret).sendBatch([{ token: 't', transport: 'fcm', encryptTo: device.pubkey }], like);
    const sealed = recording.sent[0]?.message;
    assert.ok(sealed);
    assert.deepEqual(buildApnsConfig(sealed)?.payload.aps, { alert: { title: 'New like' }, 'mutable-content': 1 });
    const request = toApnsRequest(sealed, { topic: 'app', expiresAtSecs: 0 });
    assert.ok(request);
    assert.deepEqual(request.headers[0], ['apns-push-type', 'alert']);
    assert.deepEqual(Object.keys(request.payload), ['aps', 'type', 'eventId', 'encrypted']);
  });

  test('a device key that is not a curve point fails that device only', async () => {
    const recording = new RecordingTransport();
    const outcomes = await withPayloadEncryption(recording, service.secret).sendBatch(
      [
        { token: 'bad', transport: 'fcm', encryptTo: 'f'.repeat(64) },
        { token: 'good', transport: 'fcm' },
      ],
      like,
    );
    assert.equal(outcomes.get('bad')?.ok, false);
    assert.deepEqual(outcomes.get('good'), { ok: true });
  });

  test('unwrapTransport reaches the wrapped transport', () => {
    const recording = new RecordingTransport();
    assert.equal(unwrapTransport(withPayloadEncryption(recording, service.secret)), recording);
    assert.equal(unwrapTransport(recording), recording);
  });
});
