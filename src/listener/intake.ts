import {
  isAuthentic,
  isEventRejection,
  parseEvent,
  type EventRejectionCode,
  type MaybeOffThreadVerifier,
  type NostrEvent,
} from '../nostr/event.ts';
import { isExpired } from '../nostr/nip40.ts';

/** The `reason` label of `push_events_invalid_total`: a parseEvent code, or what failed after it. */
export type InvalidEventReason = EventRejectionCode | 'bad-signature' | 'expired';

/** What the listener makes of the body of an EVENT frame. */
export type EventIntake =
  /** Well-formed, authentic, unexpired, not ours, not seen before: hand it on. */
  | { outcome: 'accept'; event: NostrEvent }
  /** Already taken from some relay or subscription. */
  | { outcome: 'duplicate'; event: NostrEvent }
  /** Authored by the service key: skipped in every path. */
  | { outcome: 'own'; event: NostrEvent }
  /** Rejected; `event` is set when the shape was fine (bad signature, expired). */
  | { outcome: 'invalid'; reason: InvalidEventReason; message: string; event: NostrEvent | null };

export interface IntakeDeps {
  /** Checked off the main thread through `verifyAsync` when the verifier has it. */
  verifier: MaybeOffThreadVerifier;
  servicePubkey: string;
  isSeen(id: string): boolean;
}

/**
 * Classifies an untrusted EVENT body. The order puts the cheap checks first: the duplicate and
 * own-key checks run before the signature, which is the expensive step. Checking "seen" before
 * verifying is safe because only verified events are ever marked seen.
 */
export async function classifyEvent(value: unknown, nowSecs: number, deps: IntakeDeps): Promise<EventIntake> {
  const parsed = parseEvent(value);
  if (isEventRejection(parsed)) return { outcome: 'invalid', reason: parsed.code, message: parsed.message, event: null };
  if (deps.isSeen(parsed.id)) return { outcome: 'duplicate', event: parsed };
  if (parsed.pubkey === deps.servicePubkey) return { outcome: 'own', event: parsed };
  if (isExpired(parsed, nowSecs)) return { outcome: 'invalid', reason: 'expired', message: 'NIP-40 expiration has passed', event: parsed };
  if (!(await isAuthentic(deps.verifier, parsed)))
    return { outcome: 'invalid', reason: 'bad-signature', message: 'id or signature does not verify', event: parsed };
  return { outcome: 'accept', event: parsed };
}
