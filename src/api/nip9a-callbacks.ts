/**
 * The NIP-9a callback receiver's HTTP surface (issue 12, half 1).
 *
 * Users manage their callback URLs with NIP-98:
 * - `POST /v1/nip9a/callbacks` `{relay}` → 201 `{id, url, relay, createdAt}`: a new URL
 *   `{server.public_url}/nip9a/cb/{secret}`, bound to the caller and that relay; the secret is
 *   shown this once and stored only as a hash;
 * - `GET /v1/nip9a/callbacks` → `{callbacks: [{id, url (secret redacted), relay, createdAt}]}`;
 * - `DELETE /v1/nip9a/callbacks/{id}` → 204, or 404 when it is not the caller's.
 *
 * Relays POST `{id, relay, event?}` to `POST /nip9a/cb/{secret}`, answered as soon as the work is
 * durably on the inbound queue (202 `queued`, or 200 `duplicate` for a (relay, callback, event id)
 * already received), never after the push. An unknown or revoked secret is a 404, which makes a
 * NIP-9a relay delete its registration.
 *
 * What a stranger can make us store here is bounded per client (issue 35, docs/security.md): at
 * most `max_callbacks_per_owner` live URLs per key (409 `NIP9A_TOO_MANY_CALLBACKS`), and at most
 * `max_callbacks_per_address_per_day` new URLs per client address per UTC day, whichever keys sign
 * (429 `CLIENT_QUOTA_EXCEEDED` with `Retry-After`; counted in the store, so replicas share it). A URL
 * that received nothing for `idle_callback_ttl_days` is deleted by the janitor: the receiver records
 * a URL's last POST at most once a day per URL and process ({@link CallbackActivity}).
 */
import { randomBytes } from 'node:crypto';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../observability/logger.ts';
import { redact } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { MaybeOffThreadVerifier } from '../nostr/event.ts';
import { nip98ReplayGuard } from '../nostr/nip98.ts';
import type { StorePort } from '../store/port.ts';
import { NIP9A_CALLBACK_ACTIVITY_RESOLUTION_MS, type Nip9aAcceptance, type Nip9aCallback } from '../store/port-nip9a-callbacks.ts';
import { requestClientAddress, type ClientAddressPolicy } from './client-address.ts';
import type { Nip9aReceiverConfig } from '../config/defaults.ts';
import { TurnBatcher } from '../util/turn-batcher.ts';
import {
  CALLBACK_PATH_PREFIX,
  SECRET_HINT_CHARS,
  callbackUrl,
  hashSecret,
  isSecretShaped,
  newSecret,
  normalizeRelayUrl,
  redactedCallbackUrl,
} from '../nip9a/receiver/callback-url.ts';
import { CALLBACK_MAX_BODY_BYTES, acceptEnvelope, callbackItemId } from '../nip9a/receiver/envelope.ts';
import { CallbackRateLimiter } from '../nip9a/receiver/rate-limit.ts';
import { HttpError } from './errors.ts';
import { isJsonContentType, parseJsonBytes, readBodyBytes } from './json-body.ts';
import type { LargerBody } from './body-limit.ts';
import { authenticateNip98, type Nip98Auth } from './nip98-auth.ts';
import type { RateLimits } from './rate-limits.ts';
import { mountDocumented } from './openapi.ts';
import { exactJsonBody, validatingRouter, type ExactBodyVariables } from './validation.ts';
import { NIP9A_CALLBACK_ROUTES } from './nip9a-openapi.ts';

/** A management request is `{relay}`: a few hundred bytes; anything much larger is not a real client. */
export const MANAGEMENT_MAX_BODY_BYTES = 4 * 1024;
/** Random bytes of a callback's public id. */
const CALLBACK_ID_BYTES = 12;
/** The quota scope of callback URLs created from one address (port-client-quotas.ts). */
export const CALLBACKS_PER_ADDRESS_QUOTA = 'nip9a_callbacks';
/** The per-address quota's window: a UTC day. */
export const CALLBACKS_PER_ADDRESS_WINDOW_MS = 86_400_000;

export interface Nip9aCallbackDeps {
  store: StorePort;
  /** NIP-98 checks inline; an included event off the main thread when the verifier has `verifyAsync`. */
  verifier: MaybeOffThreadVerifier;
  /** `server.public_url`; empty means callback URLs cannot be made (every management route answers 503). */
  publicUrl: string;
  receiver: Nip9aReceiverConfig;
  /** Who is asking (`server.trusted_proxies`): the per-address quota's key. */
  clientAddresses: ClientAddressPolicy;
  /** `notification.event_kinds`: included events of these kinds take the engine's content path. */
  contentKinds: readonly number[];
  /** Wakes this process's inbound consumers once work is queued. */
  onQueued: () => void;
  /**
   * Per-client limits (`rate-limits.ts`): management per address and pubkey (`nip9a_callbacks`),
   * relay POSTs per callback owner; absent, only the per-URL limit applies.
   */
  rateLimits?: RateLimits;
  metrics: Metrics;
  logger: Logger;
}

interface CallbackView {
  id: string;
  url: string;
  relay: string;
  createdAt: number;
}

function view(publicUrl: string, callback: Nip9aCallback, url?: string): CallbackView {
  return {
    id: callback.id,
    url: url ?? redactedCallbackUrl(publicUrl, callback.secretHint),
    relay: callback.relay,
    createdAt: Math.floor(callback.createdAtMs / 1000),
  };
}

/** Relays' callback POSTs carry the matched event, so they may be larger than `server.max_body_bytes`. */
export const NIP9A_CALLBACK_LARGER_BODY: LargerBody = {
  method: 'POST',
  path: `${CALLBACK_PATH_PREFIX}:secret`,
  maxBytes: CALLBACK_MAX_BODY_BYTES,
  reason: 'a NIP-9a relay may include the matched event: up to 4 MiB and a 4 KiB envelope (the seed’s bound)',
};

/** What the management routes' middleware sets: the caller, and the body's bytes. */
interface ManagementEnv {
  Variables: ExactBodyVariables & { owner: string };
}

export function nip9aCallbackRoutes(
  deps: Nip9aCallbackDeps,
  receiver: CallbackReceiver = createCallbackReceiver(deps),
): OpenAPIHono<ManagementEnv> {
  const app = validatingRouter<ManagementEnv>();
  const { store, metrics, logger } = deps;
  const auth: Nip98Auth = {
    verifier: deps.verifier,
    replay: nip98ReplayGuard(store),
    clock: store.clock,
    publicUrl: deps.publicUrl,
    logger,
    ...(deps.rateLimits ? { limits: deps.rateLimits.caller('nip9a_callbacks') } : {}),
  };
  const manage = (operation: string, outcome: string) => metrics.nip9aCallbackManagement.inc({ operation, outcome });

  /**
   * A management route's middleware, before its schemas are checked: the body read when it has one
   * (NIP-98 needs the exact bytes), the configuration check, NIP-98, and the count of a refused relay.
   */
  const caller = (operation: string, withBody: boolean): MiddlewareHandler<ManagementEnv>[] => {
    const configured: MiddlewareHandler<ManagementEnv> = async (c, next) => {
      if (deps.publicUrl === '') {
        manage(operation, 'not_configured');
        throw new HttpError('PUBLIC_URL_NOT_CONFIGURED');
      }
      await next();
      if (c.error instanceof HttpError && c.error.code === 'NIP9A_INVALID_RELAY') manage(operation, 'invalid');
    };
    const authenticated: MiddlewareHandler<ManagementEnv> = async (c, next) => {
      try {
        c.set('owner', await authenticateNip98(c, auth, withBody ? c.get('exactBody') : undefined));
      } catch (err) {
        manage(operation, err instanceof HttpError && err.code === 'RATE_LIMITED' ? 'rate_limited' : 'unauthorized');
        throw err;
      }
      await next();
    };
    // The Content-Type and the body first, as ever: a body of the wrong type is a 415 even when unconfigured.
    return [
      ...(withBody ? [exactJsonBody<ManagementEnv>({ maxBytes: MANAGEMENT_MAX_BODY_BYTES, required: true })] : []),
      configured,
      authenticated,
    ];
  };

  app.openapi({ ...NIP9A_CALLBACK_ROUTES.create, middleware: caller('create', true) }, async (c) => {
    const owner = c.get('owner');
    // The schema refused any relay this does not normalise.
    const relay = normalizeRelayUrl(c.req.valid('json').relay);
    if (relay === null) throw new HttpError('NIP9A_INVALID_RELAY');
    if ((await store.listNip9aCallbacks(owner)).length >= deps.receiver.max_callbacks_per_owner) {
      manage('create', 'too_many');
      throw new HttpError('NIP9A_TOO_MANY_CALLBACKS');
    }
    const id = randomBytes(CALLBACK_ID_BYTES).toString('hex');
    const quota = await store.takeClientQuota({
      scope: CALLBACKS_PER_ADDRESS_QUOTA,
      client: requestClientAddress(c, deps.clientAddresses),
      member: id,
      limit: deps.receiver.max_callbacks_per_address_per_day,
      windowMs: CALLBACKS_PER_ADDRESS_WINDOW_MS,
    });
    if (!quota.allowed) {
      manage('create', 'address_quota');
      logger.warn({ owner, used: quota.used }, 'NIP-9a callback URL refused: the client address made its share today');
      c.header('Retry-After', String(Math.ceil(quota.retryAfterMs / 1000)));
      throw new HttpError(
        'CLIENT_QUOTA_EXCEEDED',
        `${quota.used} callback URLs were created from this address today (nip9a.receiver.max_callbacks_per_address_per_day); retry after the Retry-After header`,
      );
    }
    const secret = newSecret();
    const callback: Nip9aCallback = {
      id,
      secretHash: hashSecret(secret),
      secretHint: secret.slice(0, SECRET_HINT_CHARS),
      owner,
      relay,
      createdAtMs: store.clock.nowMs(),
    };
    await store.createNip9aCallback(callback);
    manage('create', 'created');
    logger.info({ owner, callbackId: callback.id, relay }, 'NIP-9a callback URL created');
    return c.json(view(deps.publicUrl, callback, callbackUrl(deps.publicUrl, secret)), 201);
  });

  app.openapi({ ...NIP9A_CALLBACK_ROUTES.list, middleware: caller('list', false) }, async (c) => {
    const callbacks = await store.listNip9aCallbacks(c.get('owner'));
    manage('list', 'listed');
    return c.json({ callbacks: callbacks.map((callback) => view(deps.publicUrl, callback)) }, 200);
  });

  app.openapi({ ...NIP9A_CALLBACK_ROUTES.revoke, middleware: caller('revoke', false) }, async (c) => {
    const owner = c.get('owner');
    const { id } = c.req.valid('param');
    if (!(await store.revokeNip9aCallback(owner, id))) {
      manage('revoke', 'not_found');
      throw new HttpError('NOT_FOUND', 'No callback URL of yours has that id');
    }
    manage('revoke', 'revoked');
    logger.info({ owner, callbackId: id }, 'NIP-9a callback URL revoked');
    return c.body(null, 204);
  });

  // The one route not validated by its schema (`openapi.ts`, `mountDocumented`): the receiver checks
  // the URL, then its rate, then reads the body, and answers the front's hot path the same way.
  mountDocumented(app, NIP9A_CALLBACK_ROUTES.receive, async (c) => {
    const answer = await receiver({
      secret: c.req.param('secret') ?? '',
      contentType: c.req.header('content-type'),
      readBody: (maxBytes) => readBodyBytes(c, maxBytes),
    });
    // The answer's status is one the catalogue or the receiver chose; Hono types it as a literal.
    return c.json(answer.body, answer.status as 200, answer.headers);
  });
  return app;
}

/** What the receiver reads of a relay's `POST /nip9a/cb/{secret}`, whoever parsed the request. */
export interface CallbackRequest {
  /** The path segment after `/nip9a/cb/`, percent-decoded. */
  secret: string;
  contentType: string | undefined;
  /** The body, refusing more than `maxBytes` with HttpError BODY_TOO_LARGE. */
  readBody(maxBytes: number): Promise<Uint8Array>;
}

/** The answer to a relay: a status, a JSON body and, for a 429, `Retry-After`. */
export interface CallbackAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * `POST /nip9a/cb/{secret}`: a relay's push, queued durably before the answer. One instance per
 * process (it holds the rate limiter and the turn's receipts), answered through Hono
 * ({@link nip9aCallbackRoutes}) and, on the hot path, straight from Node's request
 * (`nip9a-callback-front.ts`). Refusals are answers; anything else thrown is a bug the caller
 * turns into a 500.
 */
export type CallbackReceiver = (request: CallbackRequest) => Promise<CallbackAnswer>;

export function createCallbackReceiver(deps: Nip9aCallbackDeps): CallbackReceiver {
  const { store, metrics } = deps;
  const log = deps.logger;
  const limiter = new CallbackRateLimiter(deps.receiver.rate_per_sec, deps.receiver.rate_burst, store.clock);
  // Off (`rate_limits.enabled: false`), the hot path does not even await it.
  const ownerLimit = deps.rateLimits?.enabled ? deps.rateLimits.callbackOwner : null;
  const contentKinds = new Set(deps.contentKinds);
  // Relays POST many callbacks at once: the receipts of one turn reach the store as one call.
  const receipts = new TurnBatcher<Nip9aAcceptance, boolean>((entries) =>
    store.acceptNip9aReceipts(deps.receiver.receipt_ttl_secs, entries),
  );
  const count = (outcome: string) => metrics.nip9aCallbackRequests.inc({ outcome });
  const activity = new CallbackActivity(store, log);
  const refusal = (error: HttpError, headers?: Record<string, string>): CallbackAnswer => ({
    status: error.status,
    body: error.toJSON(),
    ...(headers ? { headers } : {}),
  });

  return async (request) => {
    const { secret } = request;
    if (!isJsonContentType(request.contentType)) {
      count('unsupported_media_type');
      log.warn({ secret: redact(secret) }, 'NIP-9a callback refused: Content-Type is not application/json');
      return refusal(new HttpError('UNSUPPORTED_MEDIA_TYPE'));
    }
    const callback = isSecretShaped(secret) ? await store.findNip9aCallback(hashSecret(secret)) : null;
    if (!callback) {
      count('not_found');
      log.warn({ secret: redact(secret) }, 'NIP-9a callback to an unknown or revoked URL');
      return refusal(new HttpError('NOT_FOUND'));
    }
    const rate = limiter.take(callback.id);
    if (!rate.allowed) {
      count('rate_limited');
      metrics.rateLimited.inc({ route_group: 'nip9a_receiver', key_kind: 'callback_url' });
      // One line per flood: the first refusal after the URL was last allowed.
      if (rate.firstRefusal) log.warn({ callbackId: callback.id, retryAfterSecs: rate.retryAfterSecs }, 'NIP-9a callback rate-limited');
      return refusal(new HttpError('RATE_LIMITED'), { 'Retry-After': String(rate.retryAfterSecs) });
    }
    // All URLs of one owner together (URLs are free to mint): counted, and logged, by the limit itself.
    const ownerRefusal = ownerLimit ? await ownerLimit.take(callback.owner) : null;
    if (ownerRefusal) {
      count('rate_limited');
      return refusal(new HttpError('RATE_LIMITED'), { 'Retry-After': String(ownerRefusal.retryAfterSecs) });
    }
    let body: unknown;
    try {
      body = parseJsonBytes(await request.readBody(CALLBACK_MAX_BODY_BYTES));
    } catch (err) {
      // Anything else the read throws is the request stream failing: a relay that went away
      // mid-body is bad input, not a bug (the answer most likely reaches no one).
      const refused = err instanceof HttpError ? err : new HttpError('BODY_UNREADABLE');
      count(refused.code === 'BODY_TOO_LARGE' ? 'too_large' : refused.code === 'INVALID_JSON' ? 'invalid_json' : 'body_unreadable');
      log.warn({ callbackId: callback.id, err: (err as Error).message }, 'NIP-9a callback body refused');
      return refusal(refused);
    }
    const accepted = await acceptEnvelope(body, { callback, verifier: deps.verifier, contentKinds, nowMs: store.clock.nowMs() });
    if ('code' in accepted) {
      count(accepted.code.toLowerCase());
      log.warn({ callbackId: callback.id, code: accepted.code, reason: accepted.reason }, 'NIP-9a callback refused');
      return refusal(new HttpError(accepted.code, accepted.reason));
    }
    const fresh = await receipts.add({
      receipt: { callbackId: callback.id, relay: accepted.relay, eventId: accepted.eventId },
      item: { id: callbackItemId(callback.id, accepted.eventId), payload: accepted.item },
    });
    await activity.received(callback.id);
    if (!fresh) {
      count('duplicate');
      return { status: 200, body: { status: 'duplicate' } };
    }
    deps.onQueued();
    count('queued');
    return { status: 202, body: { status: 'queued' } };
  };
}

/**
 * Records that a callback URL received something, for the idle sweep: at most once per URL per
 * day and process (a set of the ids recorded today, emptied when the day turns), so the hot path
 * costs a set lookup and the store one write per URL a day. A failed write is logged, never a
 * refusal (the POST was queued already); the URL's next POST records it.
 */
export class CallbackActivity {
  private dayMs = -1;
  private readonly recordedToday = new Set<string>();

  constructor(
    private readonly store: Pick<StorePort, 'touchNip9aCallback' | 'clock'>,
    private readonly logger: Logger,
  ) {}

  async received(callbackId: string): Promise<void> {
    const nowMs = this.store.clock.nowMs();
    const dayMs = Math.floor(nowMs / NIP9A_CALLBACK_ACTIVITY_RESOLUTION_MS) * NIP9A_CALLBACK_ACTIVITY_RESOLUTION_MS;
    if (dayMs !== this.dayMs || this.recordedToday.size >= CALLBACK_ACTIVITY_MEMO_ENTRIES) {
      this.dayMs = dayMs;
      this.recordedToday.clear();
    }
    if (this.recordedToday.has(callbackId)) return;
    this.recordedToday.add(callbackId);
    try {
      await this.store.touchNip9aCallback(callbackId, dayMs);
    } catch (err) {
      this.recordedToday.delete(callbackId);
      this.logger.warn({ callbackId, err: (err as Error).message }, 'NIP-9a callback activity not recorded');
    }
  }
}

/** Ids remembered per day at most (a few MiB); past it the memo starts over, costing only repeated writes. */
const CALLBACK_ACTIVITY_MEMO_ENTRIES = 100_000;
