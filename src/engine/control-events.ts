import type { NostrEvent } from '../nostr/event.ts';
import { DEREGISTER_TOKEN, PREFERENCES, REGISTER_TOKEN } from '../nostr/kinds.ts';
import type { DeviceRegistration, StorePort } from '../store/port.ts';
import type { Logger } from '../observability/logger.ts';
import { redact } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { parsePreferencesPayload, parseSocialFiltersPayload, parseQuietHoursPayload, parseTokenPayload } from './control-payloads.ts';
import { parseAlertWordList } from './inbox/words.ts';
import { INBOX_MAX_ALERT_WORDS_PER_USER } from '../config/defaults.ts';
import { applyRegistrationRelays, type UserRelayRegistration } from './user-relay-lists.ts';

/**
 * Decrypts the NIP-44 content of a control event addressed to the service. Rejects with
 * {@link PlaintextContentError} for content that is not a NIP-44 payload at all, any other error
 * when decryption fails (bad MAC, wrong key, bad padding).
 */
export interface ControlDecryptor {
  decrypt(event: NostrEvent): Promise<string>;
  /**
   * Start decrypting `event` ahead of its turn (the engine handles events one by one, but can
   * let worker threads decrypt a whole leased batch in parallel). Optional; a later `decrypt` of
   * the same event takes the prefetched result.
   */
  prefetch?(event: NostrEvent): void;
}

export class PlaintextContentError extends Error {
  constructor() {
    super('content is not a NIP-44 payload');
    this.name = 'PlaintextContentError';
  }
}

/** What became of one control event; also the `outcome` label of `push_control_events_total`. */
export type ControlOutcome =
  | 'registered'
  | 'transferred'
  | 'deregistered'
  | 'deregistration_refused'
  | 'preferences_set'
  | 'plaintext_rejected'
  | 'decrypt_failed'
  | 'invalid_payload';

export interface ControlHandlerDeps {
  store: StorePort;
  decryptor: ControlDecryptor;
  logger: Logger;
  metrics: Metrics;
  /** `inbox.max_alert_words_per_user`; absent: {@link INBOX_MAX_ALERT_WORDS_PER_USER}. */
  maxAlertWordsPerUser?: number;
  /** Users' relays (issue 36); see {@link ControlApplyOptions.userRelays}. */
  userRelays?: UserRelayRegistration;
}

/**
 * Kinds 3079 (register), 3080 (deregister) and 3083 (preferences), after the router's gates.
 * Bad input is an outcome, not an error: it is logged at warn, counted, and the event is done.
 * Store failures propagate so the inbound queue retries the event.
 */
export async function handleControlEvent(deps: ControlHandlerDeps, event: NostrEvent): Promise<ControlOutcome> {
  const kind = event.kind;
  if (!isControlKind(kind)) throw new Error(`not a control kind: ${kind}`);
  const outcome = await decideControlEvent(deps, event, kind);
  // The HTTP registration routes count their outcomes under the same kinds.
  deps.metrics.controlEvents.inc({ kind: String(event.kind), outcome });
  return outcome;
}

/**
 * The `alertWords` of a 3083 (issue 13), when present: they replace the user's watch list. Absent,
 * the list stays (words set through the user API survive a preferences update without them). A
 * bad list is logged and ignored; the preferences themselves were applied.
 */
async function applyAlertWords(store: StorePort, pubkey: string, plaintext: string, maxWords: number, log: Logger): Promise<void> {
  const body = JSON.parse(plaintext) as Record<string, unknown>;
  if (!('alertWords' in body)) return;
  const parsed = parseAlertWordList(body.alertWords, maxWords);
  if (!parsed.ok) {
    log.warn({ reason: parsed.reason }, 'alertWords of a preferences event ignored');
    return;
  }
  await store.replaceAlertWords(pubkey, parsed.words);
  log.info({ words: parsed.words.length }, 'alert words replaced');
}

async function decideControlEvent(deps: ControlHandlerDeps, event: NostrEvent, kind: ControlKind): Promise<ControlOutcome> {
  const log = deps.logger.child({ eventId: event.id, kind: event.kind, pubkey: event.pubkey });

  let plaintext: string;
  try {
    plaintext = await deps.decryptor.decrypt(event);
  } catch (err) {
    if (err instanceof PlaintextContentError) {
      log.warn('control event with plaintext content - rejecting');
      return 'plaintext_rejected';
    }
    log.warn({ err: (err as Error).message }, 'control event failed to decrypt');
    return 'decrypt_failed';
  }
  const options: ControlApplyOptions = {
    ...(deps.maxAlertWordsPerUser === undefined ? {} : { maxAlertWordsPerUser: deps.maxAlertWordsPerUser }),
    ...(deps.userRelays ? { userRelays: deps.userRelays } : {}),
    origin: { id: event.id, created_at: event.created_at },
  };
  return (await applyControlPayload(deps.store, log, event.pubkey, kind, plaintext, options)).outcome;
}

/** The kinds whose payloads {@link applyControlPayload} applies. */
export type ControlKind = typeof REGISTER_TOKEN | typeof DEREGISTER_TOKEN | typeof PREFERENCES;

function isControlKind(kind: number): kind is ControlKind {
  return kind === REGISTER_TOKEN || kind === DEREGISTER_TOKEN || kind === PREFERENCES;
}

/** What {@link applyControlPayload} needs beyond the payload. */
export interface ControlApplyOptions {
  /** `inbox.max_alert_words_per_user`: a 3083's `alertWords` over it are ignored. */
  maxAlertWordsPerUser?: number;
  /**
   * Users' relays (issue 36), the same for both registration paths: a registration's `relays`
   * become the user's `app` list (counted in `metrics`), the user's kind 10002 and 10050 are asked
   * for (`requestLists`), and a registration or deregistration is recorded as a change of the
   * user's coverage (the listener follows it). Absent: `nostr.user_relays.enabled` is off and
   * `relays` is ignored.
   */
  userRelays?: UserRelayRegistration;
  /** What registered: the event's id and `created_at`, or an HTTP request's body digest and arrival time. */
  origin?: { id: string; created_at: number };
}

/** What {@link applyControlPayload} did; `reason` says why a payload was refused. */
export interface ControlApplied {
  outcome: ControlOutcome;
  reason?: string;
  /** The device registered (3079) or removed (3080). */
  device?: DeviceRegistration;
}

/**
 * Apply the decrypted JSON of a 3079, 3080 or 3083 for `pubkey`: the one function behind both
 * registration paths, the events the relays carry and the HTTP user API (`src/api/inbox.ts`), so
 * both validate, store and log alike. Bad input is an outcome with a reason, never a throw; store
 * failures propagate.
 */
export async function applyControlPayload(
  store: StorePort,
  log: Logger,
  pubkey: string,
  kind: ControlKind,
  plaintext: string,
  options: ControlApplyOptions = {},
): Promise<ControlApplied> {
  const maxAlertWordsPerUser = options.maxAlertWordsPerUser ?? INBOX_MAX_ALERT_WORDS_PER_USER;
  if (kind === PREFERENCES) {
    const parsed = parsePreferencesPayload(plaintext);
    const filters = parseSocialFiltersPayload(plaintext);
    const quiet = parseQuietHoursPayload(plaintext);
    if (!parsed.ok || !filters.ok || !quiet.ok) {
      const reason = !parsed.ok ? parsed.reason : !filters.ok ? filters.reason : quiet.ok ? '' : quiet.reason;
      log.warn({ reason }, 'invalid preferences payload');
      return { outcome: 'invalid_payload', reason };
    }
    await store.setPreferences(pubkey, parsed.value);
    // A 3083 is the whole description: one without mutes or onlyFollowing clears them.
    await store.setSocialFilters(pubkey, filters.value);
    await store.setQuietHours(pubkey, quiet.value);
    log.info(
      {
        kinds: parsed.value.kinds,
        campaignsEnabled: parsed.value.campaignsEnabled,
        mutedPubkeys: filters.value.mutedPubkeys.length,
        onlyFollowing: filters.value.onlyFollowing,
      },
      'preferences updated',
    );
    await applyAlertWords(store, pubkey, plaintext, maxAlertWordsPerUser, log);
    return { outcome: 'preferences_set' };
  }

  const parsed = parseTokenPayload(plaintext);
  if (!parsed.ok) {
    log.warn({ reason: parsed.reason }, 'invalid token payload');
    return { outcome: 'invalid_payload', reason: parsed.reason };
  }
  const device = parsed.value;

  if (kind === REGISTER_TOKEN) {
    const { previousOwner } = await store.registerToken(pubkey, device);
    // A registered user is known to the inbox counters from now on, even after the device goes.
    await store.rememberInboxUser(pubkey);
    if (options.userRelays) {
      const payload = JSON.parse(plaintext) as Record<string, unknown>;
      const origin = options.origin ?? { id: '', created_at: 0 };
      const relays = await applyRegistrationRelays({ store, metrics: options.userRelays.metrics, logger: log }, pubkey, payload, origin);
      if (relays.outcome === 'invalid') log.warn({ reason: relays.reason }, 'relays of a registration ignored');
      // The user (and a previous owner of the token) may cover relays differently now.
      await store.noteUserRelayChange(previousOwner ? [pubkey, previousOwner] : [pubkey]);
      options.userRelays.requestLists(pubkey);
    }
    if (previousOwner) {
      log.info({ token: redact(device.token), previousOwner }, 'token re-registration moved ownership');
      return { outcome: 'transferred', device };
    }
    log.info({ token: redact(device.token), transport: device.transport }, 'token registered');
    return { outcome: 'registered', device };
  }

  // Preferences stay: they belong to the identity, not the device.
  if (await store.removeToken(pubkey, device.token)) {
    if (options.userRelays) await store.noteUserRelayChange([pubkey]);
    log.info({ token: redact(device.token) }, 'token deregistered');
    return { outcome: 'deregistered', device };
  }
  log.warn({ token: redact(device.token) }, 'deregistration rejected: token unknown or owned by another pubkey');
  return { outcome: 'deregistration_refused', device };
}
