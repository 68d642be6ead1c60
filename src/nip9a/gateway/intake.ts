/**
 * Registrations entering the gateway, by either path (the `/nip9a` relay endpoint after NIP-42
 * AUTH, `PUT /v1/nip9a/registrations` after NIP-98): a kind 30390 stored under the addressable
 * rules and limits, or a kind 5 deleting the author's registrations. The caller has verified the
 * event's id and signature and authenticated `authedPubkey`.
 *
 * Answers are NIP-01 `OK` messages with the standard prefixes (`invalid:`, `blocked:`,
 * `restricted:`, `rate-limited:`, `duplicate:`, `error:`); the HTTP route maps the prefixes to
 * its error codes.
 */
import type { NostrEvent } from '../../nostr/event.ts';
import { RELAY_PUSH } from '../../nostr/kinds.ts';
import type { Logger } from '../../observability/logger.ts';
import type { StorePort } from '../../store/port.ts';
import { parseNip9aRegistration } from '../registration.ts';
import type { GatewaySettings } from './config.ts';
import type { GatewayMetrics } from './metrics.ts';

/** NIP-09 deletion. */
export const DELETION = 5;

export interface IntakeDeps {
  store: StorePort;
  settings: GatewaySettings;
  metrics: GatewayMetrics;
  logger: Logger;
  /** Told after a change (an in-process gateway reloads at once instead of at its next poll). */
  onChange?: () => void;
}

export interface IntakeAnswer {
  accepted: boolean;
  /** The NIP-01 OK message (empty when there is nothing to say). */
  message: string;
  /** What happened, for the HTTP answer and metrics. */
  outcome: 'stored' | 'replaced' | 'stale' | 'deleted' | 'invalid' | 'blocked' | 'restricted' | 'limit' | 'relay_cap' | 'error';
}

const answer = (accepted: boolean, outcome: IntakeAnswer['outcome'], message: string): IntakeAnswer => ({ accepted, outcome, message });

/** Store a 30390 or apply a kind 5 from `authedPubkey`. Never throws: a store failure is `error:`. */
export async function acceptGatewayEvent(
  deps: IntakeDeps,
  event: NostrEvent,
  authedPubkey: string,
  via: 'relay' | 'http',
): Promise<IntakeAnswer> {
  const result = await decide(deps, event, authedPubkey).catch((err: unknown): IntakeAnswer => {
    deps.logger.error({ err: (err as Error).message, eventId: event.id }, 'nip9a registration failed on a store error');
    return answer(false, 'error', 'error: the registration could not be stored; try again');
  });
  deps.metrics.registrations.inc({ via, outcome: result.outcome });
  if (!result.accepted && result.outcome !== 'error')
    deps.logger.warn({ via, eventId: event.id, pubkey: event.pubkey.slice(0, 8), reason: result.message }, 'nip9a registration refused');
  if (result.outcome === 'stored' || result.outcome === 'replaced' || result.outcome === 'deleted') deps.onChange?.();
  return result;
}

async function decide(deps: IntakeDeps, event: NostrEvent, authedPubkey: string): Promise<IntakeAnswer> {
  const { store, settings } = deps;
  if (event.pubkey !== authedPubkey) return answer(false, 'restricted', 'restricted: authors may only publish their own registrations');
  if (event.kind === DELETION) return deleteRegistrations(deps, event);
  if (event.kind !== RELAY_PUSH)
    return answer(false, 'blocked', `blocked: kind ${event.kind} is not accepted here (only 30390 registrations and kind 5 deletions)`);
  const checked = parseNip9aRegistration(event, { limits: settings.limits, callbackPolicy: settings.policy });
  if (!checked.ok) return answer(false, checked.reason.startsWith('blocked:') ? 'blocked' : 'invalid', checked.reason);
  const { registration } = checked;
  const put = await store.putNip9aRegistration(
    {
      pubkey: registration.pubkey,
      d: registration.d,
      eventId: event.id,
      createdAt: event.created_at,
      relays: registration.relays,
      eventJson: JSON.stringify(event),
    },
    settings.registrationLimits,
  );
  const limits = settings.registrationLimits;
  switch (put.outcome) {
    case 'stored':
    case 'replaced':
      return answer(true, put.outcome, '');
    case 'stale':
      return answer(true, 'stale', 'duplicate: this or a newer version of the registration is stored');
    case 'author_limit':
      return answer(false, 'limit', `rate-limited: at most ${limits.perAuthor} registrations per author`);
    case 'author_relay_limit':
      return answer(false, 'limit', `rate-limited: at most ${limits.perAuthorPerRelay} of your registrations may name ${put.relay}`);
    case 'watched_relays_limit':
      return answer(
        false,
        'relay_cap',
        `blocked: this gateway watches its maximum of ${limits.maxWatchedRelays} relays and cannot add ${put.relay}; relays it already watches are open`,
      );
  }
}

/** NIP-09: `a` tags of the author's 30390 addresses (versions up to the deletion's time) and `e` tags of registration ids. */
async function deleteRegistrations(deps: IntakeDeps, deletion: NostrEvent): Promise<IntakeAnswer> {
  const { store } = deps;
  const prefix = `${RELAY_PUSH}:${deletion.pubkey}:`;
  const eventIds = new Set(deletion.tags.filter((t) => t[0] === 'e' && typeof t[1] === 'string').map((t) => t[1] as string));
  const ds = deletion.tags.filter((t) => t[0] === 'a' && t[1]?.startsWith(prefix)).map((t) => (t[1] as string).slice(prefix.length));
  let deleted = 0;
  const mine = await store.listNip9aRegistrations(deletion.pubkey);
  for (const stored of mine) {
    const byAddress = ds.includes(stored.d) && stored.createdAt <= deletion.created_at;
    if (!byAddress && !eventIds.has(stored.eventId)) continue;
    if (await store.deleteNip9aRegistration(stored.pubkey, stored.d, stored.eventId)) deleted += 1;
  }
  return answer(true, 'deleted', deleted === 0 ? 'deleted: no registration of yours matched' : `deleted: ${deleted} registration(s)`);
}
