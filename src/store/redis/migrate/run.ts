/**
 * `nostr-push store migrate-layout --from divine --to cluster`, the run: a source Redis in the
 * divine layout copied into a target (a Redis Cluster, or one Redis) in the cluster layout, view
 * by view (the default app, then every app under its `app:{id}:` prefix), each view's families
 * walked by the engine (`engine.ts`) and verified, then every source key no family placed
 * reported.
 *
 * Safe to run again: a target that holds keys but no progress record of an earlier run is
 * refused (it is someone else's data, or a fleet already writes it) unless `force` is given; a
 * target with progress continues where the earlier run stopped.
 */
import type { Redis } from 'ioredis';
import { createRedisClient, type RedisClientHandle } from '../client.ts';
import { createRedisKeys } from '../keys.ts';
import type { RedisTarget } from '../target.ts';
import {
  migrateLayout,
  MIGRATE_PROGRESS_KEY,
  MIGRATE_SCAN_COUNT,
  unverifiedFamilies,
  type FamilyReport,
  type MigrationIo,
} from './engine.ts';
import { divineToClusterFamilySpecs, familyOf, unclassifiedKeys } from './families.ts';

/** An app view's key prefix as the store builds it (`keys.ts` appKeyPrefix): `app:{id}:`. */
const APP_VIEW = /^app:([a-z0-9_-]+):/;

export interface LayoutMigrationOptions {
  /** The divine store: one Redis. */
  source: RedisTarget & { kind: 'single' };
  /** The cluster-layout store. */
  target: RedisTarget;
  /** `redis.queue_shards` of the fleet that will use the target (default: the layout's). */
  queueShards?: number;
  /** Start over, ignoring the progress of an earlier run. */
  restart?: boolean;
  /** Write into a target that holds keys but no progress record. */
  force?: boolean;
  /** One line per finished family and per view. */
  out: (line: string) => void;
}

export interface ViewReport {
  /** `''` for the default app, `app:{id}:` for the others. */
  prefix: string;
  families: FamilyReport[];
  unverified: FamilyReport[];
  unclassified: { total: number; sample: string[] };
}

export class TargetNotEmptyError extends Error {}

/** Runs the migration; resolves with one report per view. `ok` when every view verified and nothing was left over. */
export async function runLayoutMigration(options: LayoutMigrationOptions): Promise<{ ok: boolean; views: ViewReport[] }> {
  const handles: RedisClientHandle[] = [];
  const open = async (target: RedisTarget, prefix: string): Promise<Redis> => {
    const handle = createRedisClient(target, prefix);
    handles.push(handle);
    await handle.redis.connect();
    return handle.redis;
  };
  try {
    const rawSource = await open(options.source, '');
    const rawTarget = createRedisClient(options.target, '');
    handles.push(rawTarget);
    await rawTarget.redis.connect();
    if (!options.force && !options.restart) await refuseForeignTarget(rawTarget);
    const specs = divineToClusterFamilySpecs(
      createRedisKeys('cluster', options.queueShards === undefined ? {} : { queueShards: options.queueShards }),
    );
    const views: ViewReport[] = [];
    for (const prefix of ['', ...(await appViews(rawSource))]) {
      const io: MigrationIo = {
        source: prefix === '' ? rawSource : await open(options.source, prefix),
        target: prefix === '' ? rawTarget.redis : await open(options.target, prefix),
      };
      const families = await migrateLayout({
        families: specs.map(familyOf),
        io,
        restart: options.restart ?? false,
        onFamily: (report) => {
          if (report.skipped) options.out(`${prefix || 'default'} ${report.name}: done by an earlier run`);
          else if (report.keys > 0)
            options.out(
              `${prefix || 'default'} ${report.name}: ${report.keys} keys, ${report.copied} copied, ${report.inTarget} in the target`,
            );
        },
      });
      const unclassified = await unclassifiedKeys(io, specs, { skipAppViews: prefix === '' });
      const unverified = unverifiedFamilies(families);
      for (const report of unverified)
        options.out(`${prefix || 'default'} ${report.name}: NOT VERIFIED, ${report.copied} copied but ${report.inTarget} in the target`);
      if (unclassified.total > 0)
        options.out(`${prefix || 'default'}: ${unclassified.total} keys no family knows, not copied: ${unclassified.sample.join(', ')}`);
      views.push({ prefix, families, unverified, unclassified });
    }
    return { ok: views.every((view) => view.unverified.length === 0 && view.unclassified.total === 0), views };
  } finally {
    await Promise.all(handles.map((handle) => handle.redis.quit().catch(() => undefined)));
  }
}

/** The `app:{id}:` prefixes the source holds keys under. */
async function appViews(source: Redis): Promise<string[]> {
  const prefixes = new Set<string>();
  let cursor = '0';
  do {
    const [next, keys] = await source.scan(cursor, 'MATCH', 'app:*', 'COUNT', MIGRATE_SCAN_COUNT);
    for (const key of keys) {
      const view = APP_VIEW.exec(key);
      if (view) prefixes.add(view[0]);
    }
    cursor = next;
  } while (cursor !== '0');
  return [...prefixes].sort();
}

/** Throws when the target holds keys and no progress record of a migration. */
async function refuseForeignTarget(target: RedisClientHandle): Promise<void> {
  if ((await target.redis.exists(MIGRATE_PROGRESS_KEY)) === 1) return;
  const nodes = target.cluster ? target.cluster.nodes('master') : [target.redis];
  const sizes = await Promise.all(nodes.map((node) => node.dbsize()));
  const keys = sizes.reduce((sum, n) => sum + n, 0);
  if (keys > 0)
    throw new TargetNotEmptyError(
      `the target holds ${keys} keys and no progress of an earlier migration: refusing to write into it (--force to write anyway)`,
    );
}
