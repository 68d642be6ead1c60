import { randomUUID } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';
import type { Clock, RecipientClaim } from '../port.ts';
import { ExpiredRowSweeper, expiresAtMs } from './expiry.ts';

/**
 * Per-event and per-(event, recipient) claims. A row whose `expires_at_ms` the clock has reached
 * is treated as absent, so taking a claim is one upsert that only overwrites an expired row.
 */

const TAKE_EVENT_CLAIM = `
  INSERT INTO event_claims (event_id, expires_at_ms) VALUES (@eventId, @expiresAtMs)
  ON CONFLICT (event_id) DO UPDATE SET expires_at_ms = excluded.expires_at_ms
  WHERE event_claims.expires_at_ms <= @nowMs`;

const TAKE_RECIPIENT_CLAIM = `
  INSERT INTO recipient_claims (event_id, recipient, owner, expires_at_ms)
  VALUES (@eventId, @recipient, @owner, @expiresAtMs)
  ON CONFLICT (event_id, recipient) DO UPDATE SET owner = excluded.owner, expires_at_ms = excluded.expires_at_ms
  WHERE recipient_claims.expires_at_ms <= @nowMs`;

/** Compare-and-delete; an expired claim is no longer anyone's, so releasing it reports false. */
const RELEASE_RECIPIENT_CLAIM = `
  DELETE FROM recipient_claims
  WHERE event_id = @eventId AND recipient = @recipient AND owner = @owner AND expires_at_ms > @nowMs`;

const DELETE_EXPIRED_EVENT_CLAIMS = `
  DELETE FROM event_claims WHERE rowid IN (
    SELECT rowid FROM event_claims WHERE expires_at_ms <= ? LIMIT ?)`;

const DELETE_EXPIRED_RECIPIENT_CLAIMS = `
  DELETE FROM recipient_claims WHERE rowid IN (
    SELECT rowid FROM recipient_claims WHERE expires_at_ms <= ? LIMIT ?)`;

interface EventClaimParams {
  eventId: string;
  expiresAtMs: number;
  nowMs: number;
}

interface RecipientClaimParams {
  eventId: string;
  recipient: string;
  owner: string;
  expiresAtMs: number;
  nowMs: number;
}

export class ClaimTable {
  private readonly takeEventClaim: Statement<[EventClaimParams]>;
  private readonly takeRecipientClaim: Statement<[RecipientClaimParams]>;
  private readonly releaseRecipientClaim: Statement<[Omit<RecipientClaimParams, 'expiresAtMs'>]>;
  private readonly sweeper: ExpiredRowSweeper;

  readonly claimEvent: (eventId: string, ttlSecs: number) => boolean;
  readonly claimRecipient: (eventId: string, recipient: string, ttlSecs: number) => RecipientClaim | null;
  readonly release: (claim: RecipientClaim) => boolean;

  constructor(
    db: Database,
    private readonly clock: Clock,
  ) {
    this.takeEventClaim = db.prepare(TAKE_EVENT_CLAIM);
    this.takeRecipientClaim = db.prepare(TAKE_RECIPIENT_CLAIM);
    this.releaseRecipientClaim = db.prepare(RELEASE_RECIPIENT_CLAIM);
    this.sweeper = new ExpiredRowSweeper(db, [DELETE_EXPIRED_EVENT_CLAIMS, DELETE_EXPIRED_RECIPIENT_CLAIMS]);

    this.claimEvent = db.transaction((eventId: string, ttlSecs: number): boolean => {
      const nowMs = this.clock.nowMs();
      this.sweeper.maybeSweep(nowMs);
      return this.takeEventClaim.run({ eventId, expiresAtMs: expiresAtMs(nowMs, ttlSecs), nowMs }).changes > 0;
    });

    this.claimRecipient = db.transaction((eventId: string, recipient: string, ttlSecs: number): RecipientClaim | null => {
      const nowMs = this.clock.nowMs();
      this.sweeper.maybeSweep(nowMs);
      const owner = randomUUID();
      const taken = this.takeRecipientClaim.run({ eventId, recipient, owner, expiresAtMs: expiresAtMs(nowMs, ttlSecs), nowMs });
      return taken.changes > 0 ? { eventId, recipient, owner } : null;
    });

    this.release = db.transaction(
      (claim: RecipientClaim): boolean =>
        this.releaseRecipientClaim.run({
          eventId: claim.eventId,
          recipient: claim.recipient,
          owner: claim.owner,
          nowMs: this.clock.nowMs(),
        }).changes > 0,
    );
  }
}
