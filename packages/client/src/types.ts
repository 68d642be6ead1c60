/**
 * The request and response types of the user API, taken from the server's OpenAPI document
 * (src/generated/openapi.ts, written by the build from /v1/openapi.json): a change of a route's
 * schema on the server changes these types at the next build.
 */
import type { components, operations } from './generated/openapi.js';

export type { components, operations, paths } from './generated/openapi.js';

type Schemas = components['schemas'];

/** The operationIds of the server's routes. */
export type OperationId = keyof operations;

/** The JSON body an operation takes (`never` for none). */
export type RequestBody<O extends OperationId> =
  NonNullable<operations[O]['requestBody']> extends { content: { 'application/json': infer Body } } ? Body : never;

/** The JSON an operation answers with `status` (default 200). */
export type ResponseBody<O extends OperationId, Status extends number = 200> = operations[O]['responses'] extends {
  [S in Status]: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;

/** `/health`: its `pubkey` is the service key registrations are encrypted to. */
export type Health = Schemas['Health'];
/** The JSON content of a kind 3079 (and the body of `PUT /v1/devices/{token}`, where `token` may be left out). */
export type DeviceRegistration = Schemas['DeviceRegistration'];
/** A 3079's content: the device registration with its token. */
export type DeviceRegistrationPayload = DeviceRegistration & { token: string };
/** The JSON content of a kind 3083 (and the body of `PUT /v1/preferences`). */
export type PreferencesPayload = Schemas['PreferencesRequest'];
/** `PUT /v1/preferences`'s answer. */
export type Preferences = Schemas['Preferences'];
/** The caller's inbox counts per type, and `totalNew` (the badge). */
export type InboxCounts = Schemas['InboxCounts'];
/** An inbox counter's type (`like`, `comment`, …). */
export type InboxType = NonNullable<Schemas['InboxViewedRequest']['types']>[number];
export type AlertWords = Schemas['AlertWords'];
export type Announcements = Schemas['Announcements'];
/** A registered device as the server shows it (the token redacted to a prefix). */
export type Device = Schemas['Device'];
export type Devices = Schemas['Devices'];
export type RegisteredDevice = Schemas['RegisteredDevice'];
/** A NIP-9a callback URL (its secret shown only in the answer that created it). */
export type Nip9aCallback = Schemas['Nip9aCallback'];
export type Nip9aCallbacks = Schemas['Nip9aCallbacks'];
export type Nip9aRegistrations = Schemas['Nip9aRegistrations'];
export type Nip9aRegistrationResult = Schemas['Nip9aRegistrationResult'];
export type VapidPublicKey = Schemas['VapidPublicKey'];
export type OpenedResult = Schemas['OpenedResult'];

/**
 * What the inbox socket sends whenever one of the user's counters changes (src/api/inbox-socket.ts;
 * a WebSocket message, so not in the OpenAPI document): the type that changed and the new badge.
 */
export interface InboxHint {
  type: InboxType;
  totalNew: number;
}
