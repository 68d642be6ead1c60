/**
 * The schemas of the app platform API: one definition validates each request and describes it in
 * the OpenAPI document (`/v1/openapi.json`), so the two cannot drift.
 */
import { z } from '@hono/zod-openapi';

export const PUBKEY_HEX = /^[0-9a-f]{64}$/;
const Pubkey = z.string().regex(PUBKEY_HEX, 'a 64-character lowercase hex pubkey');

export const Priority = z.enum(['critical', 'normal', 'low']).openapi({
  description: 'Delivery lane: critical overtakes normal overtakes low (low is never starved)',
});

/** Most entries of `data`, and their sizes: a push payload is 4 KiB at FCM. */
const DATA_MAX_ENTRIES = 32;
const DATA_KEY_MAX = 64;
const DATA_VALUE_MAX = 1024;
const TITLE_MAX = 256;
const BODY_MAX = 2048;
/** A week: longer-lived pushes are stale news, and providers keep them 4 weeks at most. */
const TTL_MAX_SECS = 7 * 86_400;

export function sendRequestSchema(maxRecipients: number) {
  return z
    .strictObject({
      recipients: z
        .array(Pubkey)
        .min(1)
        .max(maxRecipients)
        .openapi({ description: `Recipient pubkeys (hex), at most ${maxRecipients}` }),
      type: z
        .string()
        .min(1)
        .max(64)
        .openapi({ description: 'An app-defined type listed in `send_api.types` (mapped to a preference category)' }),
      title: z.string().min(1).max(TITLE_MAX),
      body: z.string().max(BODY_MAX),
      data: z
        .record(z.string().min(1).max(DATA_KEY_MAX), z.string().max(DATA_VALUE_MAX))
        .refine((d) => Object.keys(d).length <= DATA_MAX_ENTRIES, `at most ${DATA_MAX_ENTRIES} entries`)
        .optional()
        .openapi({
          description: 'Extra data map entries; `type`, `title`, `body`, `notificationId` and `receiverPubkey` are set by the service',
        }),
      priority: Priority,
      sendAt: z.iso.datetime({ offset: true }).optional().openapi({ description: 'Send no earlier than this (ISO 8601); absent: now' }),
      collapseKey: z.string().min(1).max(64).optional(),
      ttlSecs: z
        .number()
        .int()
        .positive()
        .max(TTL_MAX_SECS)
        .optional()
        .openapi({ description: 'Nothing is queued later than sendAt + ttlSecs' }),
    })
    .openapi('SendRequest');
}

export const IdempotencyHeaders = z.object({
  'idempotency-key': z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces')
    .optional()
    .openapi({ description: 'Kept 24 h: a retry with the same key answers the first notification; a different body is 409' }),
});

export const SendAccepted = z.object({ id: z.string(), duplicate: z.boolean() }).openapi('SendAccepted');

export const NotificationIdParams = z.object({
  id: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: 'id', in: 'path' } }),
});

export const RecipientOutcome = z
  .object({
    pubkey: z.string(),
    status: z.enum(['pending', 'queued', 'sent', 'failed', 'retrying', 'suppressed']),
    providerMessageId: z.string().optional(),
    reason: z.string().optional(),
    opened: z.boolean(),
  })
  .openapi('RecipientOutcome');

export const NotificationView = z
  .object({
    id: z.string(),
    state: z.enum(['scheduled', 'started', 'done', 'cancelled']),
    type: z.string(),
    priority: Priority,
    sendAt: z.string(),
    createdAt: z.string(),
    counts: z.record(z.string(), z.number()),
    recipients: z.array(RecipientOutcome),
  })
  .openapi('Notification');

export const CancelResult = z.object({ id: z.string(), state: z.literal('cancelled') }).openapi('CancelResult');

export const OpenedBody = z
  .strictObject({
    recipient: Pubkey.optional().openapi({
      description: 'With an app key: whose open this is. With NIP-98: the signer, and may be omitted',
    }),
  })
  .openapi('OpenedRequest');

export const OpenedResult = z.object({ recorded: z.boolean() }).openapi('OpenedResult');

export const DeliveriesQuery = z.object({
  recipient: Pubkey.optional(),
  since: z.iso.datetime({ offset: true }).optional().openapi({ description: 'ISO 8601; default: the start of retention' }),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
});

export const DeliveryEntry = z
  .object({
    notificationId: z.string(),
    recipient: z.string(),
    type: z.string(),
    status: z.enum(['queued', 'suppressed', 'sent', 'failed', 'retrying', 'opened']),
    at: z.string(),
    transport: z.string().optional(),
    tokenPrefix: z.string().optional(),
    providerMessageId: z.string().optional(),
    error: z.string().optional(),
    latencyMs: z.number().optional(),
  })
  .openapi('DeliveryEntry');

export const DeliveriesPage = z.object({ entries: z.array(DeliveryEntry) }).openapi('DeliveriesPage');

export const OpenRatesQuery = z.object({ since: z.iso.datetime({ offset: true }).optional() });

export const OpenRates = z
  .object({
    since: z.string(),
    types: z.array(z.object({ type: z.string(), sent: z.number(), opened: z.number(), openRate: z.number().nullable() })),
  })
  .openapi('OpenRates');

export const ErrorBody = z.object({ error: z.string(), code: z.string() }).openapi('Error');

// ---- campaigns and suppressions (issue 15, docs/campaigns.md) ---------------------------------

/** Most pubkeys of one `{pubkeys}` audience (the record is read with every page): larger audiences are `all`, consent choosing. */
export const CAMPAIGN_MAX_PUBKEYS = 10_000;

export const CampaignRequestSchema = z
  .strictObject({
    idempotencyKey: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces')
      .openapi({ description: 'The campaign delivery claims are per (this key, device): the same key twice sends once' }),
    title: z.string().min(1).max(TITLE_MAX),
    body: z.string().min(1).max(BODY_MAX),
    data: z
      .record(z.string().min(1).max(DATA_KEY_MAX), z.string().max(DATA_VALUE_MAX))
      .refine((d) => Object.keys(d).length <= DATA_MAX_ENTRIES, `at most ${DATA_MAX_ENTRIES} entries`)
      .optional()
      .openapi({
        description:
          'Extra data map entries; `type`, `title`, `body`, `campaignId`, `receiverPubkey`, `receiverNpub` are set by the service',
      }),
    audience: z
      .union([z.literal('all'), z.strictObject({ pubkeys: z.array(Pubkey).min(1).max(CAMPAIGN_MAX_PUBKEYS) })])
      .openapi({ description: '"all" users of the app, or the listed pubkeys; only those who enabled campaigns (kind 3083) are pushed' }),
  })
  .openapi('CampaignRequest');

export const CampaignAccepted = z.object({ id: z.string(), duplicate: z.boolean() }).openapi('CampaignAccepted');

export const CampaignView = z
  .object({
    id: z.string(),
    idempotencyKey: z.string(),
    state: z.enum(['running', 'done']).openapi({ description: '`done` once every page of the audience is expanded' }),
    title: z.string(),
    createdAt: z.string(),
    audience: z.union([z.literal('all'), z.object({ pubkeys: z.number() })]),
    consenting: z.number().openapi({ description: 'Devices queued: consent and a registered timezone offset' }),
    deferred: z.number().openapi({ description: 'Of those, queued for their next 07:00 local' }),
    sent: z.number(),
    failed: z.number(),
    opened: z.number(),
  })
  .openapi('Campaign');

export const SuppressionBody = z
  .strictObject({
    pubkey: Pubkey.optional(),
    token: z.string().min(1).max(4096).optional(),
  })
  .refine((b) => (b.pubkey === undefined) !== (b.token === undefined), 'exactly one of pubkey and token')
  .openapi('SuppressionRequest');

export const SuppressionDeleteBody = z
  .strictObject({
    pubkey: Pubkey.optional(),
    token: z.string().min(1).max(4096).optional(),
    id: z.string().min(1).max(64).optional(),
  })
  .refine((b) => [b.pubkey, b.token, b.id].filter((v) => v !== undefined).length === 1, 'exactly one of pubkey, token and id')
  .openapi('SuppressionDeleteRequest');

export const SuppressionView = z
  .object({
    id: z.string(),
    kind: z.enum(['pubkey', 'token']),
    value: z.string().openapi({ description: 'The pubkey, or a short prefix of the token (never the whole token)' }),
    createdAt: z.string(),
  })
  .openapi('Suppression');

export const SuppressionCreated = SuppressionView.extend({ created: z.boolean() }).openapi('SuppressionCreated');
export const SuppressionList = z.object({ suppressions: z.array(SuppressionView) }).openapi('SuppressionList');
export const SuppressionRemoved = z.object({ id: z.string(), removed: z.literal(true) }).openapi('SuppressionRemoved');
