import type { Database } from 'better-sqlite3';
import type { Logger } from '../../observability/logger.ts';
import type { BellBatch, BellWatcherState, VideoCoordinate } from '../port-bells.ts';
import type { RecipientClaim } from '../port.ts';
import type { BellTables } from './bells.ts';
import type { ClaimTable } from './claims.ts';
import type { RecordTables } from './records.ts';
import type { TokenTable } from './tokens.ts';

/**
 * Bell pages on SQLite: the batched steps of one fan-out page, each one transaction over the
 * same tables the single-watcher operations use. One commit per step instead of five per watcher
 * is what lets a page of 1,000 bells cost milliseconds of store time.
 */

const BELL_RECORD_TYPES = ['newPost'];

export interface BellPageTables {
  tokens: TokenTable;
  records: RecordTables;
  claims: ClaimTable;
  bells: BellTables;
}

export class BellPageOps {
  readonly readWatchers: (video: VideoCoordinate, watchers: readonly string[]) => BellWatcherState[];
  readonly claimMany: (eventId: string, recipients: readonly string[], ttlSecs: number) => Array<RecipientClaim | null>;
  private readonly recordInTransaction: (batch: BellBatch) => unknown;

  constructor(
    db: Database,
    private readonly logger: Logger,
    private readonly tables: BellPageTables,
  ) {
    const { tokens, claims, bells } = tables;
    this.readWatchers = db.transaction((video: VideoCoordinate, watchers: readonly string[]): BellWatcherState[] =>
      watchers.map((watcher) => ({
        watcher,
        devices: tokens.listDevices(watcher),
        preferenceKinds: this.preferenceKinds(watcher),
        alreadyNotified: claims.hasVideoRecord({ type: 'newPost', owner: video.owner, dTag: video.dTag, recipient: watcher }),
        rateLimited: bells.isRateLimited(watcher, video.owner),
      })),
    );

    const claimMany = db.transaction((eventId: string, recipients: readonly string[], ttlSecs: number) =>
      recipients.map((recipient) => claims.claimRecipient(eventId, recipient, ttlSecs)),
    );
    // IMMEDIATE: take the write lock up front, so a second process writing the file waits for it
    // (busy_timeout) instead of failing the read-then-write upgrade with SQLITE_BUSY_SNAPSHOT.
    this.claimMany = (eventId, recipients, ttlSecs) => claimMany.immediate(eventId, recipients, ttlSecs);

    // Each part is its own savepoint (the table operations are transactions themselves), so a part
    // that fails rolls back alone and the others still commit.
    const record = db.transaction((batch: BellBatch): unknown => {
      let firstError: unknown = null;
      const attempt = (work: () => unknown) => {
        try {
          work();
        } catch (err) {
          firstError ??= err;
        }
      };
      const { video } = batch;
      attempt(() => tokens.refresh(batch.delivered.flatMap((bell) => bell.tokens)));
      for (const { claim } of batch.delivered) {
        attempt(() => bells.openRateWindow(claim.recipient, video.owner, batch.rateLimitSecs));
        attempt(() => claims.writeVideoRecords({ owner: video.owner, dTag: video.dTag, recipient: claim.recipient }, BELL_RECORD_TYPES, batch.videoRecordTtlSecs));
        attempt(() => bells.extendClaim(claim, batch.claimTtlSecs));
      }
      for (const claim of batch.failed) attempt(() => bells.extendClaim(claim, batch.claimTtlSecs));
      for (const claim of batch.released) attempt(() => claims.release(claim));
      for (const recipient of batch.rateLimited) {
        attempt(() => claims.writeVideoRecords({ owner: video.owner, dTag: video.dTag, recipient }, BELL_RECORD_TYPES, batch.videoRecordTtlSecs));
      }
      return firstError;
    });
    this.recordInTransaction = (batch) => record.immediate(batch);
  }

  /** Throws the first part that failed, after the rest was committed. */
  recordBatch(batch: BellBatch): void {
    const firstError = this.recordInTransaction(batch);
    if (firstError !== null) throw firstError;
  }

  private preferenceKinds(watcher: string): number[] | null {
    try {
      return this.tables.records.getPreferences(watcher)?.kinds ?? null;
    } catch (err) {
      this.logger.warn({ pubkey: watcher, err: (err as Error).message }, 'unreadable preferences; using defaults');
      return null;
    }
  }
}
