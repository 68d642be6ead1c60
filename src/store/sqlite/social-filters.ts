/**
 * Social filters on SQLite (port-social-filters.ts): one row per user with filters, the JSON
 * document the port describes.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { Logger } from '../../observability/logger.ts';
import { decodeSocialFilters, encodeSocialFilters, filtersNothing, type SocialFilters } from '../port-social-filters.ts';

/** Schema of the social filter table (one migration). */
export const CREATE_SOCIAL_FILTERS_TABLE = `
  -- A user's kind 3083 mutedPubkeys and onlyFollowing, as one JSON document.
  CREATE TABLE social_filters (
    pubkey       TEXT PRIMARY KEY,
    filters_json TEXT NOT NULL
  );
`;

const UPSERT = `
  INSERT INTO social_filters (pubkey, filters_json) VALUES (?, ?)
  ON CONFLICT (pubkey) DO UPDATE SET filters_json = excluded.filters_json`;
const DELETE = `DELETE FROM social_filters WHERE pubkey = ?`;
const SELECT_MANY = `SELECT pubkey, filters_json FROM social_filters WHERE pubkey IN (SELECT value FROM json_each(?))`;

export class SocialFilterTable {
  private readonly upsert: Statement<[string, string]>;
  private readonly remove: Statement<[string]>;
  private readonly selectMany: Statement<[string], { pubkey: string; filters_json: string }>;

  constructor(
    db: Database,
    private readonly logger: Logger,
  ) {
    this.upsert = db.prepare(UPSERT);
    this.remove = db.prepare(DELETE);
    this.selectMany = db.prepare(SELECT_MANY);
  }

  set(pubkey: string, filters: SocialFilters | null): void {
    if (filters === null || filtersNothing(filters)) this.remove.run(pubkey);
    else this.upsert.run(pubkey, encodeSocialFilters(filters));
  }

  getMany(pubkeys: readonly string[]): Array<SocialFilters | null> {
    if (pubkeys.length === 0) return [];
    const byPubkey = new Map<string, SocialFilters | null>();
    for (const row of this.selectMany.all(JSON.stringify(pubkeys))) {
      const filters = decodeSocialFilters(row.filters_json);
      if (filters === null) this.logger.warn({ pubkey: row.pubkey }, 'unreadable social filters; ignored');
      byPubkey.set(row.pubkey, filters);
    }
    return pubkeys.map((pubkey) => byPubkey.get(pubkey) ?? null);
  }
}
