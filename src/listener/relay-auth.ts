/**
 * NIP-42 AUTH of one relay session, as the service: sign the relay's challenge (kind 22242 with
 * the `relay` and `challenge` tags), remember which event we sent, and learn from the relay's
 * `OK` for it whether we are authenticated. The session (relay-session.ts) sends the frames and
 * re-sends the subscriptions the relay closed with `auth-required:` once {@link RelayAuth.settle}
 * says AUTH was accepted.
 */
import type { NostrEvent } from '../nostr/event.ts';
import { signEvent } from '../nostr/keys.ts';
import { CLIENT_AUTH } from '../nostr/kinds.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';

export interface RelayAuthOptions {
  relay: string;
  serviceSecretKeyHex: string;
  logger: Logger;
  metrics: Metrics;
}

export class RelayAuth {
  private authenticatedFlag = false;
  private pendingId: string | null = null;

  constructor(private readonly options: RelayAuthOptions) {}

  /** The relay accepted an AUTH of ours on this socket. */
  get authenticated(): boolean {
    return this.authenticatedFlag;
  }

  /**
   * The AUTH event answering `challenge`, signed now (`nowSecs`), to send; null when it could not
   * be signed (counted and logged). A later challenge replaces the pending one.
   */
  answer(challenge: string, nowSecs: number): NostrEvent | null {
    const { logger, relay, metrics } = this.options;
    try {
      const event = signEvent(
        {
          kind: CLIENT_AUTH,
          created_at: nowSecs,
          tags: [
            ['relay', relay],
            ['challenge', challenge],
          ],
          content: '',
        },
        this.options.serviceSecretKeyHex,
      );
      this.pendingId = event.id;
      return event;
    } catch (error) {
      metrics.relayAuth.inc({ relay, outcome: 'failed' });
      logger.error({ relay, err: error }, 'could not sign the NIP-42 AUTH event');
      return null;
    }
  }

  /**
   * The relay's `OK` for `eventId`: true when it accepted our pending AUTH (now authenticated);
   * false for a rejection (counted and logged) or an `OK` that is not about our AUTH.
   */
  settle(eventId: string, accepted: boolean, message: string): boolean {
    if (eventId !== this.pendingId) return false;
    const { logger, relay, metrics } = this.options;
    this.pendingId = null;
    if (!accepted) {
      metrics.relayAuth.inc({ relay, outcome: 'rejected' });
      logger.warn({ relay, message }, 'relay rejected our AUTH');
      return false;
    }
    this.authenticatedFlag = true;
    metrics.relayAuth.inc({ relay, outcome: 'accepted' });
    logger.info({ relay }, 'authenticated to relay (NIP-42)');
    return true;
  }
}
