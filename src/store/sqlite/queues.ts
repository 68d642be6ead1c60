import { randomUUID } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';
import type { Logger } from '../../observability/logger.ts';
import type { Clock, DeadItem, EnqueueItem, Lane, LeaseOptions, LeasedItem, QueueName, QueueStats, Settlement } from '../port.ts';
import type { DeadLetter, DeadLetterPage, DeadLetterPageOptions } from '../port-dlq.ts';
import { decodeDeadLetterCursor, encodeDeadLetterCursor } from '../dead-letter-cursor.ts';
import { DEFAULT_LANE, isLane, leasePasses, zeroLaneStats } from '../lanes.ts';

/**
 * The durable queues, all in `queue_items`. An item is `ready` (leasable from `due_at_ms`),
 * `leased` (`due_at_ms` is the lease expiry, after which it is leasable again under a new token)
 * or `dead`. An item whose lease expired but that nobody re-leased yet keeps its token, so a slow
 * consumer can still ack it; the next lease replaces the token and the old one stops working.
 *
 * Lanes: `lane` splits each queue into three, each its own range of the `(queue, lane, due_at_ms)`
 * index, so a lease of the critical lane never walks a low backlog. One lease call runs the
 * passes of `lanes.ts` (reserved slots of the lower lanes, then critical, normal, low). Ids stay
 * unique per queue across lanes (the primary key is `(queue, id)`).
 *
 * Failure times (`first_failed_at_ms`, `last_failed_at_ms`, see `port-dlq.ts`): a retry or a
 * dead-letter records now; a lease that expired unsettled records its expiry when the next lease
 * takes the row (or dead-letters it for max attempts).
 */

/** Reason recorded when {@link LeaseOptions.maxAttempts} moves an item to the dead-letter list. */
export const MAX_ATTEMPTS_REASON = 'max attempts exceeded';

const INSERT_ITEM = `
  INSERT INTO queue_items (queue, id, lane, payload_json, state, due_at_ms, attempts)
  VALUES (@queue, @id, @lane, @payloadJson, 'ready', @dueAtMs, 0)
  ON CONFLICT (queue, id) DO NOTHING`;

/** {@link INSERT_ITEM} for an item leased to its enqueuer at once (`enqueueLeased`): attempt 1 reserved. */
const INSERT_LEASED_ITEM = `
  INSERT INTO queue_items (queue, id, lane, payload_json, state, due_at_ms, attempts, lease_token)
  VALUES (@queue, @id, @lane, @payloadJson, 'leased', @leaseExpiresAtMs, 1, @leaseToken)
  ON CONFLICT (queue, id) DO NOTHING`;

/** Ties in availability go to the item inserted first. */
const SELECT_DUE = `
  SELECT rowid, id, payload_json, attempts, last_error, state, due_at_ms FROM queue_items
  WHERE queue = @queue AND lane = @lane AND state <> 'dead' AND due_at_ms <= @nowMs
  ORDER BY due_at_ms, rowid
  LIMIT @limit`;

/**
 * Every row a lease call takes, in one statement (`@rowids` is a JSON array): the k-th row's lease
 * token is `<call token>:<rowid>`, unique and unguessable, as {@link leaseTokenFor} writes it. A
 * row still `leased` here is an expired lease: its expiry (`due_at_ms`, read before the SET
 * applies) is recorded as a failure.
 */
const MARK_LEASED = `
  UPDATE queue_items
  SET state = 'leased', lease_token = @callToken || ':' || rowid, due_at_ms = @leaseExpiresAtMs, attempts = attempts + 1,
      first_failed_at_ms = CASE WHEN state = 'leased' THEN coalesce(first_failed_at_ms, due_at_ms) ELSE first_failed_at_ms END,
      last_failed_at_ms = CASE WHEN state = 'leased' THEN due_at_ms ELSE last_failed_at_ms END
  WHERE rowid IN (SELECT value FROM json_each(@rowids))`;

/** `@failedAtMs`: the expiry of an expired lease being dead-lettered, else null (the last recorded failure stands). */
const MARK_EXHAUSTED = `
  UPDATE queue_items
  SET state = 'dead', lease_token = NULL, dead_reason = @reason, dead_at_ms = @nowMs,
      first_failed_at_ms = coalesce(first_failed_at_ms, @failedAtMs, @nowMs),
      last_failed_at_ms = coalesce(@failedAtMs, last_failed_at_ms, @nowMs)
  WHERE queue = @queue AND id = @id`;

const DELETE_LEASED = `
  DELETE FROM queue_items WHERE queue = @queue AND id = @id AND state = 'leased' AND lease_token = @leaseToken`;

const RETURN_LEASED = `
  UPDATE queue_items
  SET state = 'ready', lease_token = NULL, due_at_ms = @availableAtMs, last_error = @error,
      first_failed_at_ms = coalesce(first_failed_at_ms, @nowMs), last_failed_at_ms = @nowMs
  WHERE queue = @queue AND id = @id AND state = 'leased' AND lease_token = @leaseToken`;

const KILL_LEASED = `
  UPDATE queue_items
  SET state = 'dead', lease_token = NULL, dead_reason = @reason, dead_at_ms = @nowMs,
      first_failed_at_ms = coalesce(first_failed_at_ms, @nowMs), last_failed_at_ms = @nowMs
  WHERE queue = @queue AND id = @id AND state = 'leased' AND lease_token = @leaseToken`;

const SELECT_DEAD = `
  SELECT id, payload_json, attempts, dead_reason, dead_at_ms FROM queue_items
  WHERE queue = ? AND state = 'dead'
  ORDER BY dead_at_ms, rowid
  LIMIT ?`;

const DEAD_LETTER_COLUMNS = 'id, lane, payload_json, attempts, dead_reason, last_error, first_failed_at_ms, last_failed_at_ms, dead_at_ms';

/** `(dead_at_ms, id)` after the cursor's position; the first page starts below every time. */
const SELECT_DEAD_PAGE = `
  SELECT ${DEAD_LETTER_COLUMNS} FROM queue_items
  WHERE queue = @queue AND state = 'dead' AND (dead_at_ms, id) > (@afterMs, @afterId)
  ORDER BY dead_at_ms, id
  LIMIT @limit`;

const SELECT_DEAD_ONE = `SELECT ${DEAD_LETTER_COLUMNS} FROM queue_items WHERE queue = ? AND id = ? AND state = 'dead'`;

/** A replayed item starts over as if just enqueued, in its own lane: no attempts, no error, no failures, available now. */
const REPLAY_SET = `
  SET state = 'ready', due_at_ms = @nowMs, attempts = 0, last_error = NULL, dead_reason = NULL, dead_at_ms = NULL,
      first_failed_at_ms = NULL, last_failed_at_ms = NULL`;

const REPLAY_DEAD = `UPDATE queue_items ${REPLAY_SET} WHERE queue = @queue AND id = @id AND state = 'dead'`;

/** One step of replaying a whole queue's dead letters, oldest first. */
const REPLAY_DEAD_STEP = `
  UPDATE queue_items ${REPLAY_SET}
  WHERE rowid IN (SELECT rowid FROM queue_items WHERE queue = @queue AND state = 'dead' ORDER BY dead_at_ms, id LIMIT @limit)`;

const DELETE_DEAD = `DELETE FROM queue_items WHERE queue = ? AND id = ? AND state = 'dead'`;

/**
 * Queue sizes in three index range reads, never a pass over the rows themselves (a 100,000-item
 * backlog is counted in ~20 ms instead of ~160 ms, and the console samples this every few
 * seconds on the store's one connection). Live items per lane come from the partial due index
 * alone; an unexpired lease is the only live row with `due_at_ms` in the future besides a
 * retry waiting out its backoff, so only that short range is read from the table; an expired
 * lease counts as ready (it is what the next lease call would hand out).
 */
const SELECT_LIVE_BY_LANE = `
  SELECT lane, count(*) AS live FROM queue_items WHERE queue = @queue AND state <> 'dead' GROUP BY lane`;
const SELECT_LEASED_BY_LANE = `
  SELECT lane, coalesce(sum(state = 'leased'), 0) AS leased FROM queue_items
  WHERE queue = @queue AND lane IN ('critical', 'normal', 'low') AND state <> 'dead' AND due_at_ms > @nowMs
  GROUP BY lane`;
/** A leased item's due_at_ms is its lease's expiry: past it, the item waits again. */
const SELECT_OLDEST_DUE = `
  SELECT min(due_at_ms) AS dueAtMs FROM queue_items WHERE queue = @queue AND state <> 'dead' AND due_at_ms <= @nowMs`;
const SELECT_DEAD_COUNT = `SELECT count(*) AS dead FROM queue_items WHERE queue = ? AND state = 'dead'`;

interface DueRow {
  rowid: number;
  id: string;
  payload_json: string;
  attempts: number;
  last_error: string | null;
  state: 'ready' | 'leased';
  due_at_ms: number;
}

interface DeadLetterRow {
  id: string;
  lane: string;
  payload_json: string;
  attempts: number;
  dead_reason: string | null;
  last_error: string | null;
  first_failed_at_ms: number | null;
  last_failed_at_ms: number | null;
  dead_at_ms: number;
}

interface DeadRow {
  id: string;
  payload_json: string;
  attempts: number;
  dead_reason: string;
  dead_at_ms: number;
}

interface ItemKey {
  queue: QueueName;
  id: string;
}

function serialisePayload(id: string, payload: unknown): string {
  // undefined for an undefined, function or symbol payload, whatever the lib type says.
  const json = JSON.stringify(payload) as string | undefined;
  if (json === undefined) throw new TypeError(`enqueue ${id}: payload is not JSON-serialisable`);
  return json;
}

/** Reason recorded when a stored payload no longer parses (a hand-edited or damaged file). */
export const CORRUPT_PAYLOAD_REASON = 'stored payload is not JSON';

const UNPARSEABLE = Symbol('unparseable');

function tryParsePayload(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return UNPARSEABLE;
  }
}

/** The lease token `MARK_LEASED` gives a row: the call's random token and the row's id. */
function leaseTokenFor(callToken: string, rowid: number): string {
  return `${callToken}:${rowid}`;
}

function deadLetterFromRow(row: DeadLetterRow): DeadLetter {
  const payload = tryParsePayload(row.payload_json);
  const lastFailedAtMs = row.last_failed_at_ms ?? row.dead_at_ms;
  return {
    id: row.id,
    lane: isLane(row.lane) ? row.lane : DEFAULT_LANE,
    payload: payload === UNPARSEABLE ? row.payload_json : payload,
    attempts: row.attempts,
    reason: row.dead_reason ?? '',
    lastError: row.last_error,
    firstFailedAtMs: row.first_failed_at_ms ?? lastFailedAtMs,
    lastFailedAtMs,
    deadAtMs: row.dead_at_ms,
  };
}

function checkLeaseOptions(options: LeaseOptions): void {
  checkLeaseMs(options.leaseMs);
  if (!Number.isInteger(options.maxAttempts) || options.maxAttempts < 1) {
    throw new RangeError(`maxAttempts must be a positive integer, got ${options.maxAttempts}`);
  }
}

// A zero-length lease would make a just-leased item due again inside the same lease call.
function checkLeaseMs(leaseMs: number): void {
  if (!Number.isFinite(leaseMs) || leaseMs <= 0) throw new RangeError(`leaseMs must be positive, got ${leaseMs}`);
}

/** What every pass of one lease call shares. */
interface LeaseCall {
  queue: QueueName;
  options: LeaseOptions;
  nowMs: number;
  callToken: string;
}

export class QueueTable {
  private readonly insertItem: Statement<[ItemKey & { lane: Lane; payloadJson: string; dueAtMs: number }]>;
  private readonly insertLeasedItem: Statement<
    [ItemKey & { lane: Lane; payloadJson: string; leaseExpiresAtMs: number; leaseToken: string }]
  >;
  private readonly selectDue: Statement<[{ queue: QueueName; lane: Lane; nowMs: number; limit: number }], DueRow>;
  private readonly markLeased: Statement<[{ callToken: string; leaseExpiresAtMs: number; rowids: string }]>;
  private readonly markExhausted: Statement<[ItemKey & { reason: string; nowMs: number; failedAtMs: number | null }]>;
  private readonly deleteLeased: Statement<[ItemKey & { leaseToken: string }]>;
  private readonly returnLeased: Statement<[ItemKey & { leaseToken: string; availableAtMs: number; error: string; nowMs: number }]>;
  private readonly killLeased: Statement<[ItemKey & { leaseToken: string; reason: string; nowMs: number }]>;
  private readonly selectDead: Statement<[QueueName, number], DeadRow>;
  private readonly replayDeadItem: Statement<[ItemKey & { nowMs: number }]>;
  private readonly deleteDeadItem: Statement<[QueueName, string]>;
  private readonly selectLiveByLane: Statement<[{ queue: QueueName }], { lane: string; live: number }>;
  private readonly selectOldestDue: Statement<[{ queue: QueueName; nowMs: number }], { dueAtMs: number | null }>;
  private readonly selectLeasedByLane: Statement<[{ queue: QueueName; nowMs: number }], { lane: string; leased: number }>;
  private readonly selectDeadCount: Statement<[QueueName], { dead: number }>;
  private readonly selectDeadPage: Statement<[{ queue: QueueName; afterMs: number; afterId: string; limit: number }], DeadLetterRow>;
  private readonly selectDeadOne: Statement<[QueueName, string], DeadLetterRow>;
  private readonly replayDeadStepStatement: Statement<[{ queue: QueueName; nowMs: number; limit: number }]>;

  readonly enqueue: (queue: QueueName, item: EnqueueItem) => boolean;
  readonly enqueueMany: (queue: QueueName, items: ReadonlyArray<EnqueueItem>) => boolean[];
  readonly enqueueLeased: (queue: QueueName, items: ReadonlyArray<EnqueueItem>, leaseMs: number) => Array<LeasedItem | null>;
  readonly lease: (queue: QueueName, options: LeaseOptions) => LeasedItem[];
  readonly ack: (queue: QueueName, id: string, leaseToken: string) => boolean;
  readonly retry: (queue: QueueName, id: string, leaseToken: string, availableAtMs: number, error: string) => boolean;
  readonly deadLetter: (queue: QueueName, id: string, leaseToken: string, reason: string) => boolean;
  readonly settleMany: (queue: QueueName, settlements: readonly Settlement[]) => boolean[];
  readonly replayDead: (queue: QueueName, id: string) => boolean;
  readonly deleteDead: (queue: QueueName, id: string) => boolean;
  readonly replayDeadStep: (queue: QueueName, limit: number) => number;

  constructor(
    db: Database,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    this.insertItem = db.prepare(INSERT_ITEM);
    this.insertLeasedItem = db.prepare(INSERT_LEASED_ITEM);
    this.selectDue = db.prepare(SELECT_DUE);
    this.markLeased = db.prepare(MARK_LEASED);
    this.markExhausted = db.prepare(MARK_EXHAUSTED);
    this.deleteLeased = db.prepare(DELETE_LEASED);
    this.returnLeased = db.prepare(RETURN_LEASED);
    this.killLeased = db.prepare(KILL_LEASED);
    this.selectDead = db.prepare(SELECT_DEAD);
    this.replayDeadItem = db.prepare(REPLAY_DEAD);
    this.deleteDeadItem = db.prepare(DELETE_DEAD);
    this.selectLiveByLane = db.prepare(SELECT_LIVE_BY_LANE);
    this.selectOldestDue = db.prepare(SELECT_OLDEST_DUE);
    this.selectLeasedByLane = db.prepare(SELECT_LEASED_BY_LANE);
    this.selectDeadCount = db.prepare(SELECT_DEAD_COUNT);
    this.selectDeadPage = db.prepare(SELECT_DEAD_PAGE);
    this.selectDeadOne = db.prepare(SELECT_DEAD_ONE);
    this.replayDeadStepStatement = db.prepare(REPLAY_DEAD_STEP);

    this.enqueue = db.transaction((queue: QueueName, item: EnqueueItem): boolean => this.insert(queue, item));

    this.enqueueMany = db.transaction((queue: QueueName, items: ReadonlyArray<EnqueueItem>): boolean[] =>
      items.map((item) => this.insert(queue, item)),
    );

    this.enqueueLeased = db.transaction((queue: QueueName, items: ReadonlyArray<EnqueueItem>, leaseMs: number) => {
      checkLeaseMs(leaseMs);
      const leaseExpiresAtMs = this.clock.nowMs() + leaseMs;
      const callToken = randomUUID();
      return items.map((item, k): LeasedItem | null => {
        const leaseToken = `${callToken}:${k}`;
        const payloadJson = serialisePayload(item.id, item.payload);
        const row = { queue, id: item.id, lane: item.lane ?? DEFAULT_LANE, payloadJson, leaseExpiresAtMs, leaseToken };
        if (this.insertLeasedItem.run(row).changes === 0) return null;
        return { id: item.id, payload: item.payload, attempts: 1, leaseToken, leaseExpiresAtMs, lastError: null };
      });
    });

    this.lease = db.transaction((queue: QueueName, options: LeaseOptions) => this.leaseDue(queue, options));

    this.ack = db.transaction(
      (queue: QueueName, id: string, leaseToken: string): boolean => this.deleteLeased.run({ queue, id, leaseToken }).changes > 0,
    );

    this.retry = db.transaction(
      (queue: QueueName, id: string, leaseToken: string, availableAtMs: number, error: string): boolean =>
        this.returnLeased.run({ queue, id, leaseToken, availableAtMs, error, nowMs: this.clock.nowMs() }).changes > 0,
    );

    this.deadLetter = db.transaction(
      (queue: QueueName, id: string, leaseToken: string, reason: string): boolean =>
        this.killLeased.run({ queue, id, leaseToken, reason, nowMs: this.clock.nowMs() }).changes > 0,
    );

    this.settleMany = db.transaction((queue: QueueName, settlements: readonly Settlement[]): boolean[] =>
      settlements.map((entry) => {
        const { id, leaseToken } = entry;
        if (entry.outcome === 'ack') return this.deleteLeased.run({ queue, id, leaseToken }).changes > 0;
        if (entry.outcome === 'retry')
          return (
            this.returnLeased.run({
              queue,
              id,
              leaseToken,
              availableAtMs: entry.availableAtMs,
              error: entry.error,
              nowMs: this.clock.nowMs(),
            }).changes > 0
          );
        return this.killLeased.run({ queue, id, leaseToken, reason: entry.reason, nowMs: this.clock.nowMs() }).changes > 0;
      }),
    );

    this.replayDead = db.transaction(
      (queue: QueueName, id: string): boolean => this.replayDeadItem.run({ queue, id, nowMs: this.clock.nowMs() }).changes > 0,
    );

    this.deleteDead = db.transaction((queue: QueueName, id: string): boolean => this.deleteDeadItem.run(queue, id).changes > 0);

    this.replayDeadStep = db.transaction(
      (queue: QueueName, limit: number): number => this.replayDeadStepStatement.run({ queue, nowMs: this.clock.nowMs(), limit }).changes,
    );
  }

  /**
   * {@link enqueue} without a transaction of its own (one statement, atomic by itself), for a
   * caller's transaction that does more in the same atomic step.
   */
  insert(queue: QueueName, item: EnqueueItem): boolean {
    const payloadJson = serialisePayload(item.id, item.payload);
    const dueAtMs = item.availableAtMs ?? this.clock.nowMs();
    return this.insertItem.run({ queue, id: item.id, lane: item.lane ?? DEFAULT_LANE, payloadJson, dueAtMs }).changes > 0;
  }

  /** Runs inside the `lease` transaction: the passes of `lanes.ts`, critical items first in the batch. */
  private leaseDue(queue: QueueName, options: LeaseOptions): LeasedItem[] {
    checkLeaseOptions(options);
    const max = Math.floor(options.max);
    if (!(max >= 1)) return [];
    const call: LeaseCall = { queue, options, nowMs: this.clock.nowMs(), callToken: randomUUID() };
    const byLane: Record<Lane, LeasedItem[]> = { critical: [], normal: [], low: [] };
    const drained = new Set<Lane>();
    let total = 0;
    for (const pass of leasePasses(max)) {
      const want = Math.min(pass.limit ?? max, max - total);
      if (want <= 0) break;
      if (drained.has(pass.lane)) continue;
      const got = this.leaseLane(call, pass.lane, want);
      if (got.length < want) drained.add(pass.lane);
      byLane[pass.lane].push(...got);
      total += got.length;
    }
    return [...byLane.critical, ...byLane.normal, ...byLane.low];
  }

  /** Lease up to `want` due items of one lane, oldest first. */
  private leaseLane(call: LeaseCall, lane: Lane, want: number): LeasedItem[] {
    const { queue, options, nowMs, callToken } = call;
    const leaseExpiresAtMs = nowMs + options.leaseMs;
    const leased: LeasedItem[] = [];
    // Exhausted items are moved away instead of leased, so keep selecting until `want` are leased
    // or nothing is due: one poison item must not cost a consumer its whole batch.
    while (leased.length < want) {
      const due = this.selectDue.all({ queue, lane, nowMs, limit: want - leased.length });
      if (due.length === 0) break;
      const rowids: number[] = [];
      for (const row of due) {
        const failedAtMs = row.state === 'leased' ? row.due_at_ms : null;
        if (row.attempts >= options.maxAttempts) {
          this.markExhausted.run({ queue, id: row.id, reason: MAX_ATTEMPTS_REASON, nowMs, failedAtMs });
          this.logger.warn({ queue, lane, id: row.id, attempts: row.attempts }, 'queue item exceeded max attempts; dead-lettered');
          continue;
        }
        const payload = tryParsePayload(row.payload_json);
        if (payload === UNPARSEABLE) {
          // Throwing would roll the lease back and wedge the queue behind this row forever.
          this.markExhausted.run({ queue, id: row.id, reason: CORRUPT_PAYLOAD_REASON, nowMs, failedAtMs });
          this.logger.warn({ queue, lane, id: row.id }, 'queue item payload is not JSON; dead-lettered');
          continue;
        }
        rowids.push(row.rowid);
        leased.push({
          id: row.id,
          payload,
          attempts: row.attempts + 1,
          leaseToken: leaseTokenFor(callToken, row.rowid),
          leaseExpiresAtMs,
          lastError: row.last_error,
        });
      }
      if (rowids.length > 0) this.markLeased.run({ callToken, leaseExpiresAtMs, rowids: JSON.stringify(rowids) });
    }
    return leased;
  }

  /** A payload that no longer parses is listed as its stored text, so one bad row cannot hide the rest. */
  listDead(queue: QueueName, limit: number): DeadItem[] {
    const rows = limit >= 1 ? this.selectDead.all(queue, Math.floor(limit)) : [];
    return rows.map((row) => {
      const payload = tryParsePayload(row.payload_json);
      return {
        id: row.id,
        payload: payload === UNPARSEABLE ? row.payload_json : payload,
        attempts: row.attempts,
        reason: row.dead_reason,
        deadAtMs: row.dead_at_ms,
      };
    });
  }

  deadLetterPage(queue: QueueName, options: DeadLetterPageOptions): DeadLetterPage {
    const limit = Math.floor(options.limit);
    if (!(limit >= 1)) return { items: [], nextCursor: null };
    const after = options.cursor === undefined ? { deadAtMs: Number.MIN_SAFE_INTEGER, id: '' } : decodeDeadLetterCursor(options.cursor);
    // One row more than asked says whether a next page exists without a second query.
    const rows = this.selectDeadPage.all({ queue, afterMs: after.deadAtMs, afterId: after.id, limit: limit + 1 });
    const items = rows.slice(0, limit).map(deadLetterFromRow);
    const last = items.at(-1);
    return { items, nextCursor: rows.length > limit && last ? encodeDeadLetterCursor(last) : null };
  }

  findDead(queue: QueueName, id: string): DeadLetter | null {
    const row = this.selectDeadOne.get(queue, id);
    return row ? deadLetterFromRow(row) : null;
  }

  oldestDueAtMs(queue: QueueName): number | null {
    return this.selectOldestDue.get({ queue, nowMs: this.clock.nowMs() })?.dueAtMs ?? null;
  }

  stats(queue: QueueName): QueueStats {
    const stats: QueueStats = { ready: 0, leased: 0, dead: 0, lanes: zeroLaneStats() };
    const laneOf = (name: string): Lane => (isLane(name) ? name : DEFAULT_LANE);
    for (const row of this.selectLiveByLane.all({ queue })) {
      stats.lanes[laneOf(row.lane)].ready += row.live;
      stats.ready += row.live;
    }
    for (const row of this.selectLeasedByLane.all({ queue, nowMs: this.clock.nowMs() })) {
      stats.lanes[laneOf(row.lane)].ready -= row.leased;
      stats.lanes[laneOf(row.lane)].leased += row.leased;
      stats.ready -= row.leased;
      stats.leased += row.leased;
    }
    stats.dead = this.selectDeadCount.get(queue)?.dead ?? 0;
    return stats;
  }
}
