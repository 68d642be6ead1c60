/**
 * @nostr-push/client: what an app needs to use a nostr-push service for its users.
 *
 * - {@link registrationEvent}, {@link deregistrationEvent}, {@link preferencesEvent}: kinds
 *   3079/3080/3083, NIP-44 encrypted to the service and signed by any {@link NostrSigner}
 *   (`window.nostr`, {@link localSigner}, {@link nip46Signer}); publish them to a relay the service watches.
 * - {@link createPushClient}: typed NIP-98 calls of the user API (inbox, alert words,
 *   announcements, devices and preferences over HTTP, NIP-9a callback URLs).
 * - {@link connectInboxSocket}: the live count hints, reconnecting with backoff.
 * - {@link nip98Fetch}, {@link nip98Authorization}: NIP-98 for any other request.
 */
export { localSigner, nip46Signer, type EventTemplate, type Nip46RemoteSigner, type NostrSigner, type SignedEvent } from './signer.js';
export {
  KIND_DEREGISTER_DEVICE,
  KIND_PREFERENCES,
  KIND_REGISTER_DEVICE,
  deregistrationEvent,
  preferencesEvent,
  registrationEvent,
  type ControlEventOptions,
} from './events.js';
export {
  KIND_HTTP_AUTH,
  nip98Authorization,
  nip98Fetch,
  payloadHash,
  type FetchFunction,
  type Nip98FetchInit,
  type Nip98Request,
} from './nip98.js';
export { PushApiError, createPushClient, type PushClient, type PushClientOptions } from './api.js';
export {
  INBOX_SOCKET_PATH,
  connectInboxSocket,
  type Backoff,
  type InboxSocket,
  type InboxSocketOptions,
  type InboxWebSocket,
  type InboxWebSocketConstructor,
} from './inbox-socket.js';
export type * from './types.js';
