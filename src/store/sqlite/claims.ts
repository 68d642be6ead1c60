import { randomUUID } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';
import type { Clock, RecipientClaim, VideoRecord } from '../port.ts';
import { ExpiredRowSweeper, expiresAtMs } from './expiry.ts';

/**
 * Per-event and per-(event, recipient) claims. A row whose `expires_at_ms` the clock has reached
 * is treated as absent, so taking a claim is one upsert that only overwrites an expired row.
 */

const TAKE_EVENT_CLAIM = `
  INSERT INTO event_claims (event_id, owner, expires_at_ms) VALUES (@eventId, @owner, @expiresAtMs)
  ON CONFLICT (event_id) DO UPDATE SET owner = excluded.owner, expires_at_ms = excluded.expires_at_ms
  WHERE event_claims.expires_at_ms <= @nowMs`;

/** Whether a live event claim is held by `@owner` (never the empty owner of an unowned claim). */
const EVENT_CLAIM_HELD_BY = `
  SELECT 1 FROM event_claims WHERE event_id = @eventId AND owner = @owner AND owner <> '' AND expires_at_ms > @nowMs`;

/** Whether a live (event, recipient) claim exists. */
const RECIPIENT_CLAIM_HELD = `
  SELECT 1 FROM recipient_claims WHERE event_id = @eventId AND recipient = @recipient AND expires_at_ms > @nowMs`;

const TAKE_RECIPIENT_CLAIM = `
  INSERT INTO recipient_claims (event_id, recipient, owner, expires_at_ms)
  VALUES (@eventId, @recipient, @owner, @expiresAtMs)
  ON CONFLICT (event_id, recipient) DO UPDATE SET owner = excluded.owner, expires_at_ms = excluded.expires_at_ms
  WHERE recipient_claims.expires_at_ms <= @nowMs`;

/** Compare-and-delete; an expired claim is no longer anyone's, so releasing it reports false. */
const RELEASE_RECIPIENT_CLAIM = `
  DELETE FROM recipient_claims
  WHERE event_id = @eventId AND recipient = @recipient AND owner = @owner AND expires_at_ms > @nowMs`;

const RELEASE_EVENT_CLAIM = `DELETE FROM event_claims WHERE event_id = ?`;

const HAS_VIDEO_RECORD = `
  SELECT 1 FROM video_records
  WHERE owner = @owner AND d_tag = @dTag AND recipient = @recipient AND type = @type AND expires_at_ms > @nowMs`;

/** Which of many recipients have a live record of one video and type (`@recipients` is a JSON array). */
const SELECT_VIDEO_RECORDED = `
  SELECT recipient FROM video_records
  WHERE owner = @owner AND d_tag = @dTag AND type = @type AND expires_at_ms > @nowMs
    AND recipient IN (SELECT value FROM json_each(@recipients))`;

const WRITE_VIDEO_RECORD = `
  INSERT INTO video_records (type, owner, d_tag, recipient, expires_at_ms)
  VALUES (@type, @owner, @dTag, @recipient, @expiresAtMs)
  ON CONFLICT (owner, d_tag, recipient, type) DO UPDATE SET expires_at_ms = excluded.expires_at_ms`;

const DELETE_EXPIRED_VIDEO_RECORDS = `
  DELETE FROM video_records WHERE rowid IN (
    SELECT rowid FROM video_records WHERE expires_at_ms <= ? LIMIT ?)`;

const DELETE_EXPIRED_EVENT_CLAIMS = `
  DELETE FROM event_claims WHERE rowid IN (
    SELECT rowid FROM event_claims WHERE expires_at_ms <= ? LIMIT ?)`;

const DELETE_EXPIRED_RECIPIENT_CLAIMS = `
  DELETE FROM recipient_claims WHERE rowid IN (
    SELECT rowid FROM recipient_claims WHERE expires_at_ms <= ? LIMIT ?)`;

interface EventClaimParams {
  eventId: string;
  /** '' for a claim without an owner. */
  owner: string;
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

  readonly claimEvent: (eventId: string, ttlSecs: number, owner?: string) => boolean;
  readonly claimRecipient: (eventId: string, recipient: string, ttlSecs: number) => RecipientClaim | null;
  readonly isRecipientClaimed: (eventId: string, recipient: string) => boolean;
  /**
   * Take `claim` under its own owner token (true when taken), without a transaction of its own:
   * for a caller's transaction, which may do more in the same atomic step.
   */
  insertClaim(claim: RecipientClaim, ttlSecs: number): boolean {
    const nowMs = this.clock.nowMs();
    this.sweeper.maybeSweep(nowMs);
    const { eventId, recipient, owner } = claim;
    return this.takeRecipientClaim.run({ eventId, recipient, owner, expiresAtMs: expiresAtMs(nowMs, ttlSecs), nowMs }).changes > 0;
  }
  readonly release: (claim: RecipientClaim) => boolean;
  readonly releaseEvent: (eventId: string) => void;
  readonly hasVideoRecord: (record: VideoRecord) => boolean;
  /** {@link hasVideoRecord} of many recipients of one video and type: the ones that have it. */
  readonly videoRecordedAmong: (record: Omit<VideoRecord, 'recipient'>, recipients: readonly string[]) => Set<string>;
  readonly writeVideoRecords: (video: Omit<VideoRecord, 'type'>, types: string[], ttlSecs: number) => void;
  /** One record, as one statement without a transaction of its own (for a caller's transaction). */
  readonly writeVideoRecordNow: (video: Omit<VideoRecord, 'type'>, type: string, ttlSecs: number) => void;

  constructor(
    db: Database,
    private readonly clock: Clock,
  ) {
    this.takeEventClaim = db.prepare(TAKE_EVENT_CLAIM);
    this.takeRecipientClaim = db.prepare(TAKE_RECIPIENT_CLAIM);
    this.releaseRecipientClaim = db.prepare(RELEASE_RECIPIENT_CLAIM);
    this.sweeper = new ExpiredRowSweeper(db, [DELETE_EXPIRED_EVENT_CLAIMS, DELETE_EXPIRED_RECIPIENT_CLAIMS, DELETE_EXPIRED_VIDEO_RECORDS]);
    const releaseEventClaim = db.prepare<[string]>(RELEASE_EVENT_CLAIM);
    const hasVideoRecord = db.prepare<[VideoRecord & { nowMs: number }]>(HAS_VIDEO_RECORD);
    const writeVideoRecord = db.prepare<[VideoRecord & { expiresAtMs: number }]>(WRITE_VIDEO_RECORD);
    this.releaseEvent = (eventId) => void releaseEventClaim.run(eventId);
    this.hasVideoRecord = (record) => hasVideoRecord.get({ ...record, nowMs: this.clock.nowMs() }) !== undefined;
    const selectVideoRecorded = db.prepare<[Omit<VideoRecord, 'recipient'> & { nowMs: number; recipients: string }], { recipient: string }>(
      SELECT_VIDEO_RECORDED,
    );
    this.videoRecordedAmong = (record, recipients) =>
      new Set(
        selectVideoRecorded
          .all({ ...record, nowMs: this.clock.nowMs(), recipients: JSON.stringify(recipients) })
          .map((row) => row.recipient),
      );
    this.writeVideoRecordNow = (video, type, ttlSecs) => {
      const nowMs = this.clock.nowMs();
      this.sweeper.maybeSweep(nowMs);
      writeVideoRecord.run({ ...video, type, expiresAtMs: expiresAtMs(nowMs, ttlSecs) });
    };
    this.writeVideoRecords = db.transaction((video: Omit<VideoRecord, 'type'>, types: string[], ttlSecs: number) => {
      for (const type of types) this.writeVideoRecordNow(video, type, ttlSecs);
    });

    const eventClaimHeldBy = db.prepare<[{ eventId: string; owner: string; nowMs: number }]>(EVENT_CLAIM_HELD_BY);
    const recipientClaimHeld = db.prepare<[{ eventId: string; recipient: string; nowMs: number }]>(RECIPIENT_CLAIM_HELD);
    this.isRecipientClaimed = (eventId, recipient) =>
      recipientClaimHeld.get({ eventId, recipient, nowMs: this.clock.nowMs() }) !== undefined;
    this.claimEvent = db.transaction((eventId: string, ttlSecs: number, owner?: string): boolean => {
      const nowMs = this.clock.nowMs();
      this.sweeper.maybeSweep(nowMs);
      const mine = owner ?? '';
      if (this.takeEventClaim.run({ eventId, owner: mine, expiresAtMs: expiresAtMs(nowMs, ttlSecs), nowMs }).changes > 0) return true;
      return owner !== undefined && eventClaimHeldBy.get({ eventId, owner, nowMs }) !== undefined;
    });

    this.claimRecipient = db.transaction((eventId: string, recipient: string, ttlSecs: number): RecipientClaim | null => {
      const claim = { eventId, recipient, owner: randomUUID() };
      return this.insertClaim(claim, ttlSecs) ? claim : null;
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
