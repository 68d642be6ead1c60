/**
 * The user API's routes (`inbox.ts`) as the OpenAPI document describes them, and as they are
 * validated (`validation.ts`): a body that is not an object is 422 `UNPROCESSABLE_BODY`, a bad
 * field the route's own code (`INVALID_INBOX_TYPES`, `INVALID_ALERT_WORDS`, `INVALID_DEVICE`,
 * `INVALID_PREFERENCES`). The schemas check the shape; what needs more (a 3079's transport-specific
 * fields, a 3083's filters) is then checked by the same parsers as the registration events, whose
 * reasons are those refusals' messages. A 3079's or a 3083's fields are JSON of the same events,
 * so null stands for absent where the events' parsers take it so, and unknown fields pass.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { INBOX_TYPES } from '../store/port-inbox.ts';
import { TRANSPORTS } from '../engine/control-payloads.ts';
import type { HttpErrorCode } from './errors.ts';
import { parseAlertWordList } from '../engine/inbox/words.ts';
import { errorResponses, jsonBody, jsonResponse, NIP98_ERRORS, SECURITY } from './openapi.ts';
import {
  parsePreferencesPayload,
  parseQuietHoursPayload,
  parseSocialFiltersPayload,
  parseTokenPayload,
} from '../engine/control-payloads.ts';
import { bodyRefusal, catalogued, cataloguedFields, type RefusalMessage } from './validation.ts';

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

const ViewedRequest = catalogued(
  'UNPROCESSABLE_BODY',
  z.object({
    types: catalogued(
      'INVALID_INBOX_TYPES',
      z.array(InboxType).optional(),
      () => `types must be a list of ${INBOX_TYPES.join(', ')}`,
    ).openapi({
      description: 'Absent (or no body): every type',
    }),
  }),
  bodyRefusal('Request body must be a JSON object'),
).openapi('InboxViewedRequest', { example: { types: ['like', 'comment'] } });

/** The reason a word list is refused, as a 3083's `alertWords` would be (`words.ts`), under this body's name for it. */
function alertWordsRefusal(value: unknown): string | null {
  const parsed = parseAlertWordList(value, Number.MAX_SAFE_INTEGER);
  return parsed.ok ? null : parsed.reason.replace(/^alertWords/, 'words');
}

/** `{words}`: single words (as `words.ts` parses them); how many a user may keep is the handler's check (a setting). */
const AlertWords = catalogued(
  'UNPROCESSABLE_BODY',
  z.object({
    words: catalogued(
      'INVALID_ALERT_WORDS',
      z.array(z.string()).superRefine((words, ctx) => {
        const refusal = alertWordsRefusal(words);
        if (refusal !== null) ctx.addIssue({ code: 'custom', message: refusal });
      }),
      (value, issue) => alertWordsRefusal(value) ?? issue.message,
    ).openapi({ description: 'Single words, at most `inbox.max_alert_words_per_user`' }),
  }),
  bodyRefusal('Request body must be a JSON object {"words": [...]}'),
).openapi('AlertWords', { example: { words: ['nostr', 'zapathon'] } });

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

/**
 * A refused field's message: `prefix`, then the reason the events' parser gives for that field
 * (alone in an otherwise valid payload, `base`), so HTTP callers read what a 3079 or 3083 would
 * log; zod's words when the parser takes the field.
 */
function engineReason(prefix: string, base: Record<string, unknown>, reasonOf: (payload: string) => string | null): RefusalMessage {
  return (value, issue) => {
    const reason = reasonOf(JSON.stringify({ ...base, [String(issue.path[0])]: value }));
    return `${prefix}: ${reason ?? `${issue.path.join('.')}: ${issue.message}`}`;
  };
}

const deviceRefusal = engineReason('The device registration is invalid', { token: 'token' }, (payload) => {
  const parsed = parseTokenPayload(payload);
  return parsed.ok ? null : parsed.reason;
});

const preferencesRefusal = engineReason('The preferences are invalid', { kinds: [] }, (payload) => {
  for (const parsed of [parsePreferencesPayload(payload), parseSocialFiltersPayload(payload), parseQuietHoursPayload(payload)])
    if (!parsed.ok) return parsed.reason;
  return null;
});

/** The JSON of a kind 3079 registration (docs/app-developers.md), here as an HTTP body. */
const DeviceRegistration = catalogued(
  'UNPROCESSABLE_BODY',
  z.looseObject(
    cataloguedFields(
      'INVALID_DEVICE',
      {
        // Any JSON: a token other than the path's is its own refusal (`DEVICE_TOKEN_MISMATCH`, the handler's).
        token: z.unknown().optional().openapi({ type: 'string', description: 'When present, the path’s token' }),
        transport: z.enum(TRANSPORTS).optional().openapi({ description: 'Default `fcm`' }),
        timezoneOffsetMinutes: z.number().int().min(-840).max(840).nullish(),
        sandbox: z.boolean().nullish().openapi({ description: 'APNs sandbox (apns devices only)' }),
        encryptTo: z.string().nullish().openapi({ description: 'Hex pubkey: pushes carry NIP-44 encrypted payloads to it' }),
        locale: z.string().nullish().openapi({ description: 'BCP 47 tag, e.g. pt-BR' }),
        endpoint: z.string().nullish().openapi({ description: 'Web Push / UnifiedPush endpoint URL (default: the token)' }),
        p256dh: z.string().nullish().openapi({ description: 'Web Push / UnifiedPush key (base64url)' }),
        auth: z.string().nullish().openapi({ description: 'Web Push / UnifiedPush auth secret (base64url)' }),
        relays: z.array(z.string()).nullish().openapi({ description: 'The user’s read relays (with `nostr.user_relays.enabled`)' }),
      },
      deviceRefusal,
    ),
  ),
  bodyRefusal('Request body must be a JSON object (the content of a 3079)'),
).openapi('DeviceRegistration', { example: { transport: 'fcm', timezoneOffsetMinutes: 120, locale: 'pt-BR' } });

/** The JSON of a kind 3083 preferences event, here as an HTTP body. */
const PreferencesRequest = catalogued(
  'UNPROCESSABLE_BODY',
  z.looseObject({
    ...cataloguedFields(
      'INVALID_PREFERENCES',
      {
        kinds: z.array(z.number().int().min(0).max(65535)).max(1000).openapi({ description: 'Enabled preference categories; empty: none' }),
        campaignsEnabled: z.boolean().optional(),
        mutedPubkeys: z.array(z.string()).nullish(),
        onlyFollowing: z.union([z.boolean(), z.array(z.string())]).nullish(),
        quietHours: z.object({ start: z.string(), end: z.string() }).nullish().openapi({ description: '"HH:MM" local times' }),
        urgentTypes: z.array(z.string()).nullish(),
      },
      preferencesRefusal,
    ),
    // A 3083's alert words that do not parse are ignored, not refused (`control-events.ts`): so here too.
    alertWords: z
      .unknown()
      .optional()
      .openapi({ type: 'array', items: { type: 'string' }, description: 'Replaces the alert words when present' }),
  }),
  bodyRefusal('Request body must be a JSON object (the content of a 3083)'),
).openapi('PreferencesRequest', {
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
        token: catalogued('NOT_FOUND', z.string().min(1)).openapi({ param: { name: 'token', in: 'path' }, description: 'The push token' }),
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
        token: catalogued('DEVICE_NOT_FOUND', z.string().min(1)).openapi({
          param: { name: 'token', in: 'path' },
          description: 'The device’s id (as listed), or its token',
        }),
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
