/**
 * Payloads encrypted to the device (issue 16): a device registered with `"encryptTo": "<device
 * pubkey hex>"` gets its push's data map as one field, `encrypted` — the whole map as JSON,
 * NIP-44 v2 encrypted from the service key to the device key — plus only `type` and `eventId` in
 * clear. The provider (Google, Apple, a UnifiedPush distributor) learns nothing else: not the
 * sender, not the text, not the referenced event.
 *
 * The app decrypts with its device secret and the service pubkey (`nip44.decrypt(encrypted,
 * getConversationKey(deviceSecret, servicePubkey))` in nostr-tools; docs/encrypted-payloads.md).
 * So that iOS still shows a banner its Notification Service Extension can replace with the real
 * text, the message carries a placeholder alert naming only the type (`PushMessage.apnsAlert`).
 *
 * Done as a wrapper around each transport, so every path that sends (the delivery stage, bells,
 * the direct-message hook, summaries) encrypts without knowing about it.
 */
import { ConversationKeyCache, createConversationKeyDeriver, encryptNip44 } from '../nostr/nip44.ts';
import type { DeviceRegistration } from '../store/port.ts';
import type { PushTransport, SendOutcome } from './types.ts';
import type { PushMessage } from '../notification/types.ts';

/** Devices whose conversation key is kept (one ECDH per device key, not per push). */
export const ENCRYPTION_KEY_CACHE_ENTRIES = 10_000;

/** The banner iOS shows until the extension decrypts: the type's title only (the type is in clear anyway). */
const PLACEHOLDER_TITLES: Readonly<Record<string, string>> = {
  like: 'New like',
  comment: 'New comment',
  mention: 'New mention',
  repost: 'New repost',
  directMessage: 'New message',
  newPost: 'New vine',
};
const DEFAULT_PLACEHOLDER_TITLE = 'New notification';

/** The encrypted form of `message` for one device, given the conversation key with it. */
export function encryptedMessage(message: PushMessage, conversationKey: Uint8Array): PushMessage {
  const { type, eventId } = message.data;
  const data: Record<string, string> = {};
  if (type !== undefined) data.type = type;
  if (eventId !== undefined) data.eventId = eventId;
  data.encrypted = encryptNip44(JSON.stringify(message.data), conversationKey);
  const encrypted: PushMessage = { data, apnsAlert: { title: PLACEHOLDER_TITLES[type ?? ''] ?? DEFAULT_PLACEHOLDER_TITLE } };
  if (message.collapseKey !== undefined) encrypted.collapseKey = message.collapseKey;
  return encrypted;
}

/** A transport wrapped by {@link withPayloadEncryption}, which keeps the one it wraps. */
export interface EncryptingTransport extends PushTransport {
  readonly inner: PushTransport;
}

/** The transport under any encryption wrapper (to reach a concrete class's own members). */
export function unwrapTransport(transport: PushTransport): PushTransport {
  return 'inner' in transport ? unwrapTransport((transport as EncryptingTransport).inner) : transport;
}

/** `transport`, encrypting the message for every device that asked for it. */
export function withPayloadEncryption(transport: PushTransport, serviceSecretHex: string): EncryptingTransport {
  const keys = new ConversationKeyCache(createConversationKeyDeriver(serviceSecretHex), ENCRYPTION_KEY_CACHE_ENTRIES);
  return {
    inner: transport,
    handles: (device) => transport.handles(device),
    close: () => transport.close(),
    async sendBatch(devices: DeviceRegistration[], message: PushMessage, signal?: AbortSignal): Promise<Map<string, SendOutcome>> {
      if (!devices.some((d) => d.encryptTo !== undefined)) return transport.sendBatch(devices, message, signal);
      const plain = devices.filter((d) => d.encryptTo === undefined);
      const outcomes = new Map<string, SendOutcome>();
      const sends: Array<Promise<Map<string, SendOutcome>>> = [];
      if (plain.length > 0) sends.push(transport.sendBatch(plain, message, signal));
      for (const device of devices) {
        if (device.encryptTo === undefined) continue;
        let sealed: PushMessage;
        try {
          sealed = encryptedMessage(message, keys.get(device.encryptTo));
        } catch (err) {
          // A registration key that is not a curve point: this device cannot be served, the others can.
          outcomes.set(device.token, {
            ok: false,
            error: { kind: 'invalid_request', message: `cannot encrypt to the device key: ${(err as Error).message}` },
          });
          continue;
        }
        sends.push(transport.sendBatch([device], sealed, signal));
      }
      for (const results of await Promise.all(sends)) for (const [token, outcome] of results) outcomes.set(token, outcome);
      return outcomes;
    },
  };
}
