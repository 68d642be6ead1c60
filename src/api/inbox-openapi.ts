/**
 * The user API's routes (`inbox.ts`) as the OpenAPI document describes them. The handlers check
 * their requests by hand, through the same parsers as the registration events (a 3079's and a
 * 3083's JSON), so these schemas describe the accepted fields; the parsers' reasons are the 4xx
 * messages.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { INBOX_TYPES } from '../store/port-inbox.ts';
import { TRANSPORTS } from '../engine/control-payloads.ts';
import type { HttpErrorCode } from './errors.ts';
import { errorResponses, jsonBody, jsonResponse, NIP98_ERRORS, SECURITY } from './openapi.ts';

/** What every user API route may answer: `X-App` naming no app, NIP-98, and the per-address quota of keys. */
const USER_API_ERRORS: readonly HttpErrorCode[] = ['NOT_FOUND', ...NIP98_ERRORS, 'CLIENT_QUOTA_EXCEEDED'];
/** And those with a JSON body. */
const USER_API_BODY_ERRORS: readonly HttpErrorCode[] = [...USER_API_ERRORS, 'UNSUPPORTED_MEDIA_TYPE', 'INVALID_JSON', 'UNPROCESSABLE_BODY'];

const AppHeader = z.object({
  'x-app': z.string().optional().openapi({ description: 'The app whose inbox this is (tenancy); absent, the default app' }),
});

const InboxType = z.enum(INBOX_TYPES);
const TypeCount = z.object({ total: z.number().int(), viewed: z.number().int(), new: z.number().int() });

const InboxCounts = z
  .object({
    // An object with every type as a required key (a record over the enum documents them as optional).
    types: z
      .object(Object.fromEntries(INBOX_TYPES.map((type) => [type, TypeCount])) as Record<(typeof INBOX_TYPES)[number], typeof TypeCount>)
      .openapi({ description: 'Every inbox type, each present' }),
    totalNew: z.number().int().openapi({ description: 'The badge: the sum of `new`' }),
    throttled: z
      .object({
        limit: z.number().int(),
        pushed: z.number().int(),
        withheld: z.number().int(),
        windowStart: z.string(),
        windowEnd: z.string(),
      })
      .optional()
      .openapi({ description: 'While `throttle.per_user_per_hour` is on: this hour’s pushes, and those withheld (counted above)' }),
  })
  .openapi('InboxCounts');

const ViewedRequest = z
  .object({ types: z.array(InboxType).optional().openapi({ description: 'Absent (or no body): every type' }) })
  .openapi('InboxViewedRequest', { example: { types: ['like', 'comment'] } });

const AlertWords = z
  .object({ words: z.array(z.string()).openapi({ description: 'Single words, at most `inbox.max_alert_words_per_user`' }) })
  .openapi('AlertWords', { example: { words: ['nostr', 'zapathon'] } });

const Announcements = z
  .object({
    announcements: z.array(z.object({ id: z.number().int(), text: z.string(), createdAt: z.string(), expiresAt: z.string() })),
  })
  .openapi('Announcements');

const Device = z
  .object({
    id: z.string().openapi({ description: 'A digest of the token: what `DELETE /v1/devices/{token}` takes besides the token' }),
    transport: z.enum(TRANSPORTS),
    token: z.string().openapi({ description: 'Redacted to a prefix' }),
    timezoneOffsetMinutes: z.number().int().optional(),
    locale: z.string().optional(),
  })
  .openapi('Device');

/** The JSON of a kind 3079 registration (docs/app-developers.md), here as an HTTP body. */
const DeviceRegistration = z
  .object({
    token: z.string().optional().openapi({ description: 'When present, the path’s token' }),
    transport: z.enum(TRANSPORTS).optional().openapi({ description: 'Default `fcm`' }),
    timezoneOffsetMinutes: z.number().int().min(-840).max(840).optional(),
    sandbox: z.boolean().optional().openapi({ description: 'APNs sandbox (apns devices only)' }),
    encryptTo: z.string().optional().openapi({ description: 'Hex pubkey: pushes carry NIP-44 encrypted payloads to it' }),
    locale: z.string().optional().openapi({ description: 'BCP 47 tag, e.g. pt-BR' }),
    endpoint: z.string().optional().openapi({ description: 'Web Push / UnifiedPush endpoint URL (default: the token)' }),
    p256dh: z.string().optional().openapi({ description: 'Web Push / UnifiedPush key (base64url)' }),
    auth: z.string().optional().openapi({ description: 'Web Push / UnifiedPush auth secret (base64url)' }),
    relays: z.array(z.string()).optional().openapi({ description: 'The user’s read relays (with `nostr.user_relays.enabled`)' }),
  })
  .openapi('DeviceRegistration', { example: { transport: 'fcm', timezoneOffsetMinutes: 120, locale: 'pt-BR' } });

/** The JSON of a kind 3083 preferences event, here as an HTTP body. */
const PreferencesRequest = z
  .object({
    kinds: z.array(z.number().int().min(0).max(65535)).max(1000).openapi({ description: 'Enabled preference categories; empty: none' }),
    campaignsEnabled: z.boolean().optional(),
    alertWords: z.array(z.string()).optional().openapi({ description: 'Replaces the alert words when present' }),
    mutedPubkeys: z.array(z.string()).optional(),
    onlyFollowing: z.union([z.boolean(), z.array(z.string())]).optional(),
    quietHours: z.object({ start: z.string(), end: z.string() }).nullable().optional().openapi({ description: '"HH:MM" local times' }),
    urgentTypes: z.array(z.string()).optional(),
  })
  .openapi('PreferencesRequest', {
    example: { kinds: [1, 7, 16, 1059, 34236], campaignsEnabled: true, quietHours: { start: '22:00', end: '07:00' } },
  });

const Preferences = z
  .object({ preferences: z.object({ kinds: z.array(z.number().int()), campaignsEnabled: z.boolean() }).nullable() })
  .openapi('Preferences');

const RegisteredDevice = z.object({ device: Device }).openapi('RegisteredDevice');

const user = { tags: ['user'], security: SECURITY.nip98 };

export const INBOX_ROUTES = {
  counts: createRoute({
    ...user,
    method: 'get',
    path: '/v1/inbox/counts',
    operationId: 'getInboxCounts',
    summary: 'The caller’s inbox counts per type, and the badge',
    request: { headers: AppHeader },
    responses: { 200: jsonResponse('The counts', InboxCounts), ...errorResponses(USER_API_ERRORS) },
  }),
  viewed: createRoute({
    ...user,
    method: 'post',
    path: '/v1/inbox/viewed',
    operationId: 'markInboxViewed',
    summary: 'Mark types (or everything) viewed; answers the counts after',
    request: { headers: AppHeader, body: jsonBody(ViewedRequest, 'Optional', false) },
    responses: { 200: jsonResponse('The counts after', InboxCounts), ...errorResponses([...USER_API_BODY_ERRORS, 'INVALID_INBOX_TYPES']) },
  }),
  getAlertWords: createRoute({
    ...user,
    method: 'get',
    path: '/v1/alert-words',
    operationId: 'getAlertWords',
    summary: 'The caller’s alert words',
    request: { headers: AppHeader },
    responses: { 200: jsonResponse('The words', AlertWords), ...errorResponses(USER_API_ERRORS) },
  }),
  putAlertWords: createRoute({
    ...user,
    method: 'put',
    path: '/v1/alert-words',
    operationId: 'setAlertWords',
    summary: 'Replace the caller’s alert words',
    request: { headers: AppHeader, body: jsonBody(AlertWords) },
    responses: {
      200: jsonResponse('The words stored', AlertWords),
      ...errorResponses([...USER_API_BODY_ERRORS, 'INVALID_ALERT_WORDS', 'TOO_MANY_ALERT_WORDS']),
    },
  }),
  announcements: createRoute({
    ...user,
    method: 'get',
    path: '/v1/announcements',
    operationId: 'getAnnouncements',
    summary: 'The active announcements, newest first (marks them seen)',
    request: { headers: AppHeader },
    responses: { 200: jsonResponse('The announcements', Announcements), ...errorResponses(USER_API_ERRORS) },
  }),
  devices: createRoute({
    ...user,
    method: 'get',
    path: '/v1/devices',
    operationId: 'listDevices',
    summary: 'The caller’s registered devices, tokens redacted',
    request: { headers: AppHeader },
    responses: {
      200: jsonResponse('The devices', z.object({ devices: z.array(Device) }).openapi('Devices')),
      ...errorResponses(USER_API_ERRORS),
    },
  }),
  registerDevice: createRoute({
    ...user,
    method: 'put',
    path: '/v1/devices/{token}',
    operationId: 'registerDevice',
    summary: 'Register a device, as a kind 3079 does',
    request: {
      headers: AppHeader,
      params: z.object({
        token: z
          .string()
          .min(1)
          .openapi({ param: { name: 'token', in: 'path' }, description: 'The push token' }),
      }),
      body: jsonBody(DeviceRegistration, 'The content of a 3079'),
    },
    responses: {
      200: jsonResponse('Updated', RegisteredDevice),
      201: jsonResponse('Registered (new to the caller)', RegisteredDevice),
      ...errorResponses([...USER_API_BODY_ERRORS, 'DEVICE_TOKEN_MISMATCH', 'INVALID_DEVICE']),
    },
  }),
  removeDevice: createRoute({
    ...user,
    method: 'delete',
    // `{token}` as in the registration's path (OpenAPI holds one template per path); an id is taken too.
    path: '/v1/devices/{token}',
    operationId: 'removeDevice',
    summary: 'Remove one of the caller’s devices, as a kind 3080 does',
    request: {
      headers: AppHeader,
      params: z.object({
        token: z
          .string()
          .min(1)
          .openapi({ param: { name: 'token', in: 'path' }, description: 'The device’s id (as listed), or its token' }),
      }),
    },
    responses: { 204: { description: 'Removed' }, ...errorResponses([...USER_API_ERRORS, 'DEVICE_NOT_FOUND']) },
  }),
  preferences: createRoute({
    ...user,
    method: 'put',
    path: '/v1/preferences',
    operationId: 'setPreferences',
    summary: 'Set the caller’s preferences, as a kind 3083 does',
    request: { headers: AppHeader, body: jsonBody(PreferencesRequest, 'The content of a 3083') },
    responses: {
      200: jsonResponse('The preferences stored', Preferences),
      ...errorResponses([...USER_API_BODY_ERRORS, 'INVALID_PREFERENCES']),
    },
  }),
};
