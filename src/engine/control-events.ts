import type { NostrEvent } from '../nostr/event.ts';
import { DEREGISTER_TOKEN, PREFERENCES, REGISTER_TOKEN } from '../nostr/kinds.ts';
import type { StorePort } from '../store/port.ts';
import type { Logger } from '../observability/logger.ts';
import { redact } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { parsePreferencesPayload, parseSocialFiltersPayload, parseQuietHoursPayload, parseTokenPayload } from './control-payloads.ts';
import { parseAlertWordList } from './inbox/words.ts';
import { MAX_ALERT_WORDS_PER_USER } from '../store/port-inbox.ts';
import { applyRegistrationRelays } from './user-relay-lists.ts';

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
  /**
   * Users' relays (issue 36): a registration's `relays` are stored as the user's `app` list and
   * `onRegistered` is told of every registration (the fetch of the user's 10002 and 10050).
   * Absent: `nostr.user_relays.enabled` is off and `relays` is ignored.
   */
  userRelays?: { onRegistered(pubkey: string): void };
}

/**
 * Kinds 3079 (register), 3080 (deregister) and 3083 (preferences), after the router's gates.
 * Bad input is an outcome, not an error: it is logged at warn, counted, and the event is done.
 * Store failures propagate so the inbound queue retries the event.
 */
export async function handleControlEvent(deps: ControlHandlerDeps, event: NostrEvent): Promise<ControlOutcome> {
  const outcome = await decideControlEvent(deps, event);
  deps.metrics.controlEvents.inc({ kind: String(event.kind), outcome });
  return outcome;
}

/**
 * The `alertWords` of a 3083 (issue 13), when present: they replace the user's watch list. Absent,
 * the list stays (words set through the user API survive a preferences update without them). A
 * bad list is logged and ignored; the preferences themselves were applied.
 */
async function applyAlertWords(store: StorePort, pubkey: string, plaintext: string, log: Logger): Promise<void> {
  const body = JSON.parse(plaintext) as Record<string, unknown>;
  if (!('alertWords' in body)) return;
  const parsed = parseAlertWordList(body.alertWords, MAX_ALERT_WORDS_PER_USER);
  if (!parsed.ok) {
    log.warn({ reason: parsed.reason }, 'alertWords of a preferences event ignored');
    return;
  }
  await store.replaceAlertWords(pubkey, parsed.words);
  log.info({ words: parsed.words.length }, 'alert words replaced');
}

async function decideControlEvent(deps: ControlHandlerDeps, event: NostrEvent): Promise<ControlOutcome> {
  const { store, logger } = deps;
  const log = logger.child({ eventId: event.id, kind: event.kind, pubkey: event.pubkey });

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

  if (event.kind === PREFERENCES) {
    const parsed = parsePreferencesPayload(plaintext);
    const filters = parseSocialFiltersPayload(plaintext);
    const quiet = parseQuietHoursPayload(plaintext);
    if (!parsed.ok || !filters.ok || !quiet.ok) {
      const reason = !parsed.ok ? parsed.reason : !filters.ok ? filters.reason : quiet.ok ? '' : quiet.reason;
      log.warn({ reason }, 'invalid preferences payload');
      return 'invalid_payload';
    }
    await store.setPreferences(event.pubkey, parsed.value);
    // A 3083 is the whole description: one without mutes or onlyFollowing clears them.
    await store.setSocialFilters(event.pubkey, filters.value);
    await store.setQuietHours(event.pubkey, quiet.value);
    log.info(
      {
        kinds: parsed.value.kinds,
        campaignsEnabled: parsed.value.campaignsEnabled,
        mutedPubkeys: filters.value.mutedPubkeys.length,
        onlyFollowing: filters.value.onlyFollowing,
      },
      'preferences updated',
    );
    await applyAlertWords(store, event.pubkey, plaintext, log);
    return 'preferences_set';
  }

  const parsed = parseTokenPayload(plaintext);
  if (!parsed.ok) {
    log.warn({ reason: parsed.reason }, 'invalid token payload');
    return 'invalid_payload';
  }
  const device = parsed.value;

  if (event.kind === REGISTER_TOKEN) {
    const { previousOwner } = await store.registerToken(event.pubkey, device);
    // A registered user is known to the inbox counters from now on, even after the device goes.
    await store.rememberInboxUser(event.pubkey);
    if (deps.userRelays) {
      const relays = await applyRegistrationRelays(deps, event.pubkey, JSON.parse(plaintext) as Record<string, unknown>, event);
      if (relays.outcome === 'invalid') log.warn({ reason: relays.reason }, 'relays of a registration ignored');
      deps.userRelays.onRegistered(event.pubkey);
    }
    if (previousOwner) {
      log.info({ token: redact(device.token), previousOwner }, 'token re-registration moved ownership');
      return 'transferred';
    }
    log.info({ token: redact(device.token), transport: device.transport }, 'token registered');
    return 'registered';
  }

  if (event.kind === DEREGISTER_TOKEN) {
    // Preferences stay: they belong to the identity, not the device.
    if (await store.removeToken(event.pubkey, device.token)) {
      log.info({ token: redact(device.token) }, 'token deregistered');
      return 'deregistered';
    }
    log.warn({ token: redact(device.token) }, 'deregistration rejected: token unknown or owned by another pubkey');
    return 'deregistration_refused';
  }
  throw new Error(`not a control kind: ${event.kind}`);
}
