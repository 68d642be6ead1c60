/**
 * Per-client quotas on SQLite (port-client-quotas.ts): one row per (scope, client, window, member),
 * expiring with its window. A row is absent once the store clock passes its `expires_at_ms`
 * (windows are found by their start, so an old window is never read again); the rows themselves go
 * in bounded batches, piggybacked on the quota writes.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { Clock } from '../port.ts';
import { clientQuotaWindowStartMs, type ClientQuotaRequest, type ClientQuotaResult } from '../port-client-quotas.ts';
import { ExpiredRowSweeper } from './expiry.ts';

/** Schema of the quota table (one migration). */
export const CREATE_CLIENT_QUOTA_TABLE = `
  -- Issue 35: members (new callback URLs, keys setting alert words) one client address added per window.
  CREATE TABLE client_quota_members (
    scope           TEXT NOT NULL,
    client          TEXT NOT NULL,
    window_start_ms INTEGER NOT NULL,
    member          TEXT NOT NULL,
    expires_at_ms   INTEGER NOT NULL,
    PRIMARY KEY (scope, client, window_start_ms, member)
  );
  CREATE INDEX client_quota_members_by_expiry ON client_quota_members (expires_at_ms);
`;

interface WindowKey {
  scope: string;
  client: string;
  windowStartMs: number;
}

const HAS_MEMBER = `
  SELECT EXISTS (SELECT 1 FROM client_quota_members
    WHERE scope = @scope AND client = @client AND window_start_ms = @windowStartMs AND member = @member) AS has`;
const COUNT_MEMBERS = `
  SELECT COUNT(*) AS n FROM client_quota_members WHERE scope = @scope AND client = @client AND window_start_ms = @windowStartMs`;
const INSERT_MEMBER = `
  INSERT INTO client_quota_members (scope, client, window_start_ms, member, expires_at_ms)
  VALUES (@scope, @client, @windowStartMs, @member, @expiresAtMs)`;
const DELETE_EXPIRED = `
  DELETE FROM client_quota_members WHERE rowid IN (SELECT rowid FROM client_quota_members WHERE expires_at_ms <= ? LIMIT ?)`;

export class ClientQuotaTable {
  private readonly hasMember: Statement<[WindowKey & { member: string }], { has: number }>;
  private readonly countMembers: Statement<[WindowKey], { n: number }>;
  private readonly insertMember: Statement<[WindowKey & { member: string; expiresAtMs: number }]>;
  private readonly sweeper: ExpiredRowSweeper;
  /** A savepoint, so a failed write in the group's commit undoes only itself. */
  readonly take: (request: ClientQuotaRequest) => ClientQuotaResult;

  constructor(
    db: Database,
    private readonly clock: Clock,
  ) {
    this.hasMember = db.prepare(HAS_MEMBER);
    this.countMembers = db.prepare(COUNT_MEMBERS);
    this.insertMember = db.prepare(INSERT_MEMBER);
    this.sweeper = new ExpiredRowSweeper(db, [DELETE_EXPIRED]);
    this.take = db.transaction((request: ClientQuotaRequest) => this.takeNow(request));
  }

  private takeNow(request: ClientQuotaRequest): ClientQuotaResult {
    const nowMs = this.clock.nowMs();
    this.sweeper.maybeSweep(nowMs);
    const windowStartMs = clientQuotaWindowStartMs(nowMs, request.windowMs);
    const expiresAtMs = windowStartMs + request.windowMs;
    const key: WindowKey = { scope: request.scope, client: request.client, windowStartMs };
    const retryAfterMs = Math.max(1, expiresAtMs - nowMs);
    const used = this.countMembers.get(key)?.n ?? 0;
    if ((this.hasMember.get({ ...key, member: request.member })?.has ?? 0) === 1) return { allowed: true, used, retryAfterMs };
    if (used >= request.limit) return { allowed: false, used, retryAfterMs };
    this.insertMember.run({ ...key, member: request.member, expiresAtMs });
    return { allowed: true, used: used + 1, retryAfterMs };
  }
}
