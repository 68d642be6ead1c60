/**
 * Campaigns, campaign delivery claims and suppressions on SQLite (port-campaigns.ts,
 * port-suppressions.ts). A campaign is due while `due_at_ms` is set; each operation is one
 * statement or one transaction. A claim row whose `expires_at_ms` the clock has reached is
 * treated as absent (and swept now and then), as the other claims are.
 */
import { randomUUID } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';
import { StoreError, StoreStatus } from '../errors.ts';
import type { Clock } from '../port.ts';
import type {
  CampaignCounter,
  CampaignCounts,
  CampaignRecord,
  CampaignRequest,
  CampaignState,
  ClaimedCampaign,
  CreateCampaignResult,
  DeviceOwnerPage,
  NewCampaign,
} from '../port-campaigns.ts';
import { suppressionId, type Suppression, type SuppressionKind, type SuppressionTarget } from '../port-suppressions.ts';
import { ExpiredRowSweeper, expiresAtMs } from './expiry.ts';

export const CREATE_CAMPAIGN_TABLES = `
  -- One campaign; due_at_ms is set while it is running (now, or a lease deadline).
  CREATE TABLE campaigns (
    app_id          TEXT NOT NULL,
    id              TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    request_json    TEXT NOT NULL,
    request_hash    TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('running', 'done')),
    created_at_ms   INTEGER NOT NULL,
    cursor          TEXT NOT NULL DEFAULT '',
    due_at_ms       INTEGER,
    consenting      INTEGER NOT NULL DEFAULT 0,
    deferred        INTEGER NOT NULL DEFAULT 0,
    sent            INTEGER NOT NULL DEFAULT 0,
    failed          INTEGER NOT NULL DEFAULT 0,
    opened          INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (app_id, id),
    UNIQUE (app_id, idempotency_key)
  );
  CREATE INDEX campaigns_due ON campaigns (due_at_ms) WHERE due_at_ms IS NOT NULL;

  -- Seed 000's campaign_delivery:{idempotencyKey} claims: absent once the clock reaches expires_at_ms.
  CREATE TABLE campaign_claims (
    key           TEXT PRIMARY KEY,
    owner         TEXT NOT NULL,
    expires_at_ms INTEGER NOT NULL
  );
  CREATE INDEX campaign_claims_by_expiry ON campaign_claims (expires_at_ms);

  -- App-level suppressions: the id is derived from (kind, value), see port-suppressions.ts.
  CREATE TABLE suppressions (
    app_id        TEXT NOT NULL,
    id            TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('pubkey', 'token')),
    value         TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    PRIMARY KEY (app_id, id)
  );
`;

interface CampaignRow {
  app_id: string;
  id: string;
  request_json: string;
  request_hash: string;
  state: CampaignState;
  created_at_ms: number;
  cursor: string;
  consenting: number;
  deferred: number;
  sent: number;
  failed: number;
  opened: number;
}

const COLUMNS = 'app_id, id, request_json, request_hash, state, created_at_ms, cursor, consenting, deferred, sent, failed, opened';
const SELECT_BY_KEY = `SELECT id, request_hash FROM campaigns WHERE app_id = ? AND idempotency_key = ?`;
const INSERT_CAMPAIGN = `
  INSERT INTO campaigns (app_id, id, idempotency_key, request_json, request_hash, state, created_at_ms, due_at_ms)
  VALUES (?, ?, ?, ?, ?, 'running', ?, ?)`;
const SELECT_CAMPAIGN = `SELECT ${COLUMNS} FROM campaigns WHERE app_id = ? AND id = ?`;
const SELECT_DUE = `SELECT ${COLUMNS} FROM campaigns WHERE due_at_ms IS NOT NULL AND due_at_ms <= ? ORDER BY due_at_ms, app_id, id LIMIT 1`;
const LEASE = `UPDATE campaigns SET due_at_ms = ? WHERE app_id = ? AND id = ?`;
const ADVANCE = `
  UPDATE campaigns SET cursor = @cursor, consenting = consenting + @consenting, deferred = deferred + @deferred,
    state = CASE WHEN @done THEN 'done' ELSE state END, due_at_ms = CASE WHEN @done THEN NULL ELSE @nowMs END
  WHERE app_id = @appId AND id = @id AND state = 'running'`;
/** One statement per counter: a column name cannot be a parameter. */
const COUNTERS: readonly CampaignCounter[] = ['consenting', 'deferred', 'sent', 'failed', 'opened'];
const SCAN_DEVICES = `SELECT token, pubkey FROM devices WHERE token > ? ORDER BY token LIMIT ?`;
const SELECT_CONSENT = `SELECT pubkey, campaigns_enabled FROM preferences WHERE pubkey IN (SELECT value FROM json_each(?))`;

const TAKE_CLAIM = `
  INSERT INTO campaign_claims (key, owner, expires_at_ms) VALUES (@key, @owner, @expiresAtMs)
  ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, expires_at_ms = excluded.expires_at_ms
  WHERE campaign_claims.expires_at_ms <= @nowMs`;
const EXTEND_CLAIM = `UPDATE campaign_claims SET expires_at_ms = @expiresAtMs WHERE key = @key AND owner = @owner AND expires_at_ms > @nowMs`;
const RELEASE_CLAIM = `DELETE FROM campaign_claims WHERE key = @key AND owner = @owner AND expires_at_ms > @nowMs`;
const CLAIM_EXPIRY = `SELECT expires_at_ms FROM campaign_claims WHERE key = ? AND expires_at_ms > ?`;
const DELETE_EXPIRED_CLAIMS = `
  DELETE FROM campaign_claims WHERE rowid IN (
    SELECT rowid FROM campaign_claims WHERE expires_at_ms <= ? LIMIT ?)`;

const INSERT_SUPPRESSION = `INSERT INTO suppressions (app_id, id, kind, value, created_at_ms) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`;
const SELECT_SUPPRESSION = `SELECT id, kind, value, created_at_ms FROM suppressions WHERE app_id = ? AND id = ?`;
const DELETE_SUPPRESSION = `DELETE FROM suppressions WHERE app_id = ? AND id = ?`;
const LIST_SUPPRESSIONS = `SELECT id, kind, value, created_at_ms FROM suppressions WHERE app_id = ? ORDER BY created_at_ms, id LIMIT ?`;
const SUPPRESSED_AMONG = `SELECT id FROM suppressions WHERE app_id = ? AND id IN (SELECT value FROM json_each(?))`;

interface SuppressionRow {
  id: string;
  kind: SuppressionKind;
  value: string;
  created_at_ms: number;
}

function toRecord(row: CampaignRow): CampaignRecord {
  let request: CampaignRequest;
  try {
    request = JSON.parse(row.request_json) as CampaignRequest;
  } catch {
    throw new StoreError(StoreStatus.Corrupt, 'getCampaign', `request of campaign ${row.app_id}/${row.id} is not JSON`);
  }
  return {
    appId: row.app_id,
    id: row.id,
    request,
    requestHash: row.request_hash,
    state: row.state,
    createdAtMs: row.created_at_ms,
    cursor: row.cursor,
    counts: { consenting: row.consenting, deferred: row.deferred, sent: row.sent, failed: row.failed, opened: row.opened },
  };
}

export class CampaignTables {
  private readonly selectByKey: Statement<[string, string], { id: string; request_hash: string }>;
  private readonly insertCampaign: Statement<[string, string, string, string, string, number, number]>;
  private readonly selectCampaign: Statement<[string, string], CampaignRow>;
  private readonly selectDue: Statement<[number], CampaignRow>;
  private readonly lease: Statement<[number, string, string]>;
  private readonly advance: Statement<
    [{ cursor: string; consenting: number; deferred: number; done: number; nowMs: number; appId: string; id: string }]
  >;
  private readonly counters: Map<CampaignCounter, Statement<[number, string, string]>>;
  private readonly scan: Statement<[string, number], { token: string; pubkey: string }>;
  private readonly selectConsent: Statement<[string], { pubkey: string; campaigns_enabled: number }>;
  private readonly takeClaim: Statement<[{ key: string; owner: string; expiresAtMs: number; nowMs: number }]>;
  private readonly extendClaim: Statement<[{ key: string; owner: string; expiresAtMs: number; nowMs: number }]>;
  private readonly releaseClaim: Statement<[{ key: string; owner: string; nowMs: number }]>;
  private readonly claimExpiry: Statement<[string, number], { expires_at_ms: number }>;
  private readonly insertSuppression: Statement<[string, string, string, string, number]>;
  private readonly selectSuppression: Statement<[string, string], SuppressionRow>;
  private readonly deleteSuppression: Statement<[string, string]>;
  private readonly listSuppressionRows: Statement<[string, number], SuppressionRow>;
  private readonly suppressedIds: Statement<[string, string], { id: string }>;
  private readonly sweeper: ExpiredRowSweeper;

  readonly create: (campaign: NewCampaign) => CreateCampaignResult;
  readonly claimDue: (leaseMs: number) => ClaimedCampaign | null;
  readonly addSuppression: (appId: string, target: SuppressionTarget) => { suppression: Suppression; created: boolean };

  constructor(
    db: Database,
    private readonly clock: Clock,
  ) {
    this.selectByKey = db.prepare(SELECT_BY_KEY);
    this.insertCampaign = db.prepare(INSERT_CAMPAIGN);
    this.selectCampaign = db.prepare(SELECT_CAMPAIGN);
    this.selectDue = db.prepare(SELECT_DUE);
    this.lease = db.prepare(LEASE);
    this.advance = db.prepare(ADVANCE);
    this.counters = new Map(
      COUNTERS.map((name) => [name, db.prepare(`UPDATE campaigns SET ${name} = ${name} + ? WHERE app_id = ? AND id = ?`)]),
    );
    this.scan = db.prepare(SCAN_DEVICES);
    this.selectConsent = db.prepare(SELECT_CONSENT);
    this.takeClaim = db.prepare(TAKE_CLAIM);
    this.extendClaim = db.prepare(EXTEND_CLAIM);
    this.releaseClaim = db.prepare(RELEASE_CLAIM);
    this.claimExpiry = db.prepare(CLAIM_EXPIRY);
    this.insertSuppression = db.prepare(INSERT_SUPPRESSION);
    this.selectSuppression = db.prepare(SELECT_SUPPRESSION);
    this.deleteSuppression = db.prepare(DELETE_SUPPRESSION);
    this.listSuppressionRows = db.prepare(LIST_SUPPRESSIONS);
    this.suppressedIds = db.prepare(SUPPRESSED_AMONG);
    this.sweeper = new ExpiredRowSweeper(db, [DELETE_EXPIRED_CLAIMS]);

    this.create = db.transaction((campaign: NewCampaign): CreateCampaignResult => {
      const held = this.selectByKey.get(campaign.appId, campaign.request.idempotencyKey);
      if (held) return { created: false, existingId: held.id, sameRequest: held.request_hash === campaign.requestHash };
      const nowMs = this.clock.nowMs();
      const { appId, id, request, requestHash } = campaign;
      this.insertCampaign.run(appId, id, request.idempotencyKey, JSON.stringify(request), requestHash, nowMs, nowMs);
      return { created: true };
    });
    this.claimDue = db.transaction((leaseMs: number): ClaimedCampaign | null => {
      const nowMs = this.clock.nowMs();
      const row = this.selectDue.get(nowMs);
      if (!row) return null;
      const leaseExpiresAtMs = nowMs + leaseMs;
      this.lease.run(leaseExpiresAtMs, row.app_id, row.id);
      return { campaign: toRecord(row), leaseExpiresAtMs };
    });
    this.addSuppression = db.transaction((appId: string, target: SuppressionTarget) => {
      const id = suppressionId(target);
      const created = this.insertSuppression.run(appId, id, target.kind, target.value, this.clock.nowMs()).changes > 0;
      const row = this.selectSuppression.get(appId, id) as SuppressionRow;
      return { suppression: toSuppression(appId, row), created };
    });
  }

  get(appId: string, id: string): CampaignRecord | null {
    const row = this.selectCampaign.get(appId, id);
    return row ? toRecord(row) : null;
  }

  advanceTo(appId: string, id: string, nextCursor: string | null, add: Partial<CampaignCounts>): boolean {
    return (
      this.advance.run({
        cursor: nextCursor ?? '',
        consenting: add.consenting ?? 0,
        deferred: add.deferred ?? 0,
        done: nextCursor === null ? 1 : 0,
        nowMs: this.clock.nowMs(),
        appId,
        id,
      }).changes > 0
    );
  }

  count(appId: string, id: string, counter: CampaignCounter, n: number): void {
    this.counters.get(counter)?.run(n, appId, id);
  }

  scanOwners(cursor: string, count: number): DeviceOwnerPage {
    const entries = this.scan.all(cursor, count);
    const last = entries[entries.length - 1];
    return { entries, next: entries.length < count || !last ? null : last.token };
  }

  consent(pubkeys: readonly string[]): boolean[] {
    const given = new Set(
      this.selectConsent
        .all(JSON.stringify(pubkeys))
        .filter((row) => row.campaigns_enabled === 1)
        .map((row) => row.pubkey),
    );
    return pubkeys.map((p) => given.has(p));
  }

  claim(key: string, ttlSecs: number): string | null {
    const nowMs = this.clock.nowMs();
    this.sweeper.maybeSweep(nowMs);
    const owner = randomUUID();
    return this.takeClaim.run({ key, owner, expiresAtMs: expiresAtMs(nowMs, ttlSecs), nowMs }).changes > 0 ? owner : null;
  }

  extend(key: string, owner: string, ttlSecs: number): boolean {
    const nowMs = this.clock.nowMs();
    return this.extendClaim.run({ key, owner, expiresAtMs: expiresAtMs(nowMs, ttlSecs), nowMs }).changes > 0;
  }

  release(key: string, owner: string): boolean {
    return this.releaseClaim.run({ key, owner, nowMs: this.clock.nowMs() }).changes > 0;
  }

  claimTtlSecs(key: string): number | null {
    const nowMs = this.clock.nowMs();
    const row = this.claimExpiry.get(key, nowMs);
    return row ? Math.ceil((row.expires_at_ms - nowMs) / 1000) : null;
  }

  removeSuppression(appId: string, id: string): boolean {
    return this.deleteSuppression.run(appId, id).changes > 0;
  }

  listSuppressions(appId: string, limit: number): Suppression[] {
    return this.listSuppressionRows.all(appId, limit).map((row) => toSuppression(appId, row));
  }

  suppressedAmong(appId: string, targets: readonly SuppressionTarget[]): boolean[] {
    const ids = targets.map(suppressionId);
    const found = new Set(this.suppressedIds.all(appId, JSON.stringify(ids)).map((row) => row.id));
    return ids.map((id) => found.has(id));
  }
}

function toSuppression(appId: string, row: SuppressionRow): Suppression {
  return { appId, id: row.id, kind: row.kind, value: row.value, createdAtMs: row.created_at_ms };
}
