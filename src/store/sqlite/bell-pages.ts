import { randomUUID } from 'node:crypto';
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

const BELL_RECORD_TYPE = 'newPost';

export interface BellPageTables {
  tokens: TokenTable;
  records: RecordTables;
  claims: ClaimTable;
  bells: BellTables;
}

export class BellPageOps {
  readonly readWatchers: (video: VideoCoordinate, watchers: readonly string[]) => BellWatcherState[];
  readonly claimMany: (eventId: string, recipients: readonly string[], ttlSecs: number) => Array<RecipientClaim | null>;
  private readonly recordInTransaction: (batch: BellBatch) => { error: unknown } | null;

  constructor(
    db: Database,
    private readonly logger: Logger,
    private readonly tables: BellPageTables,
  ) {
    const { tokens, claims, bells } = tables;
    // One read transaction of four statements for the whole page (not four per watcher).
    this.readWatchers = db.transaction((video: VideoCoordinate, watchers: readonly string[]): BellWatcherState[] => {
      const devices = tokens.listDevicesOfMany(watchers);
      const kinds = tables.records.preferenceKindsOfMany(watchers, (pubkey, err) => this.unreadablePreferences(pubkey, err));
      const recorded = claims.videoRecordedAmong({ type: 'newPost', owner: video.owner, dTag: video.dTag }, watchers);
      const limited = bells.rateLimitedAmong(watchers, video.owner);
      return watchers.map((watcher) => ({
        watcher,
        devices: devices.get(watcher) ?? [],
        preferenceKinds: kinds.get(watcher) ?? null,
        alreadyNotified: recorded.has(watcher),
        rateLimited: limited.has(watcher),
      }));
    });

    const claimMany = db.transaction((eventId: string, recipients: readonly string[], ttlSecs: number) =>
      recipients.map((recipient) => {
        const claim = { eventId, recipient, owner: randomUUID() };
        return claims.insertClaim(claim, ttlSecs) ? claim : null;
      }),
    );
    // IMMEDIATE: take the write lock up front, so a second process writing the file waits for it
    // (busy_timeout) instead of failing the read-then-write upgrade with SQLITE_BUSY_SNAPSHOT.
    this.claimMany = (eventId, recipients, ttlSecs) => claimMany.immediate(eventId, recipients, ttlSecs);

    // Each part is its own savepoint (the table operations are transactions themselves), so a part
    // that fails rolls back alone and the others still commit.
    // The first failure is boxed, so that whatever was thrown (even a falsy value) is told apart from none.
    const record = db.transaction((batch: BellBatch): { error: unknown } | null => {
      let firstError: { error: unknown } | null = null;
      const attempt = (work: () => unknown) => {
        try {
          work();
        } catch (err) {
          firstError ??= { error: err };
        }
      };
      const { video } = batch;
      attempt(() => tokens.refresh(batch.delivered.flatMap((bell) => bell.tokens)));
      // Single statements: a failing one is rolled back alone, without a savepoint of its own.
      for (const { claim } of batch.delivered) {
        attempt(() => bells.openRateWindowNow(claim.recipient, video.owner, batch.rateLimitSecs));
        attempt(() =>
          claims.writeVideoRecordNow(
            { owner: video.owner, dTag: video.dTag, recipient: claim.recipient },
            BELL_RECORD_TYPE,
            batch.videoRecordTtlSecs,
          ),
        );
      }
      for (const claim of batch.failed) attempt(() => bells.extendClaim(claim, batch.claimTtlSecs));
      for (const claim of batch.released) attempt(() => claims.release(claim));
      for (const recipient of batch.rateLimited) {
        attempt(() =>
          claims.writeVideoRecordNow({ owner: video.owner, dTag: video.dTag, recipient }, BELL_RECORD_TYPE, batch.videoRecordTtlSecs),
        );
      }
      return firstError;
    });
    this.recordInTransaction = (batch) => record.immediate(batch);
  }

  /** Throws the first part that failed, after the rest was committed. */
  recordBatch(batch: BellBatch): void {
    const firstError = this.recordInTransaction(batch);
    if (firstError !== null) throw firstError.error;
  }

  private unreadablePreferences(pubkey: string, err: Error): void {
    this.logger.warn({ pubkey, err: err.message }, 'unreadable preferences; using defaults');
  }
}
