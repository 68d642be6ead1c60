/**
 * The batched steps of routing one content event on SQLite: one read of every recipient's gate
 * state, one transaction that claims and queues every delivery that passed. They run over the
 * same tables the single-recipient operations use, so both paths see the same records.
 */
import type { Database } from 'better-sqlite3';
import type { Logger } from '../../observability/logger.ts';
import type { ClaimedDelivery, QueueName, RecipientGateState } from '../port.ts';
import type { ClaimTable } from './claims.ts';
import type { QueueTable } from './queues.ts';
import type { RecordTables } from './records.ts';
import type { TokenTable } from './tokens.ts';

export interface DeliveryTables {
  tokens: TokenTable;
  records: RecordTables;
  claims: ClaimTable;
  queues: QueueTable;
}

export class DeliveryOps {
  readonly readRecipients: (pubkeys: readonly string[]) => RecipientGateState[];
  readonly claimAndEnqueue: (queue: QueueName, ttlSecs: number, entries: ReadonlyArray<ClaimedDelivery>) => boolean[];

  constructor(
    db: Database,
    private readonly logger: Logger,
    tables: DeliveryTables,
  ) {
    const { tokens, claims, queues } = tables;
    // One read transaction of two statements: every recipient read from the same snapshot.
    this.readRecipients = db.transaction((pubkeys: readonly string[]): RecipientGateState[] => {
      const devices = tokens.listDevicesOfMany(pubkeys);
      const kinds = tables.records.preferenceKindsOfMany(pubkeys, (pubkey, err) =>
        this.logger.warn({ pubkey, err: err.message }, 'unreadable preferences; using defaults'),
      );
      return pubkeys.map((pubkey) => ({ devices: devices.get(pubkey) ?? [], preferenceKinds: kinds.get(pubkey) ?? null }));
    });
    // One savepoint for the whole batch, none per entry: an entry whose insert throws fails the
    // batch, which rolls back every claim and item of it (a savepoint per entry rolled back the
    // one entry and then rethrew all the same, at two statements an entry; issue 39).
    const claimAndEnqueueOne = (queue: QueueName, ttlSecs: number, entry: ClaimedDelivery): boolean => {
      if (!claims.insertClaim(entry.claim, ttlSecs)) return false;
      queues.insert(queue, entry.item);
      return true;
    };
    this.claimAndEnqueue = db.transaction((queue: QueueName, ttlSecs: number, entries: ReadonlyArray<ClaimedDelivery>): boolean[] =>
      entries.map((entry) => claimAndEnqueueOne(queue, ttlSecs, entry)),
    );
  }
}
