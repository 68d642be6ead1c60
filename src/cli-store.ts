/**
 * `nostr-push store migrate-layout --from divine --to cluster --source URL [--target URL]`: copy a
 * single Redis in the divine key layout into a store in the cluster layout (a Redis Cluster, or
 * one Redis), every app's view included. The target defaults to the configured store
 * (`store.url`, `redis.cluster_nodes`) and its queue shards to `redis.queue_shards`. Run it with
 * the fleet stopped; it can be run again (it continues, or with `--restart` starts over) and
 * verifies every family it copied. Exit 0 done and verified, 1 something not verified or not
 * copied, 2 usage error.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config/load.ts';
import { parseRedisTarget, type RedisTarget } from './store/redis/target.ts';
import { runLayoutMigration, TargetNotEmptyError } from './store/redis/migrate/run.ts';

export const STORE_USAGE = `usage:
  nostr-push store migrate-layout --from divine --to cluster --source redis://OLD:6379
      [--target redis+cluster://h1:p1,h2:p2] [--restart] [--force] [--config FILE]
  (--target: default the configured store; --restart: ignore an earlier run's progress;
   --force: write into a target that holds keys but no progress of a migration)
`;

class UsageError extends Error {}

interface Output {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** Runs one `store` subcommand; returns the exit code. */
export async function storeCommand(
  args: string[],
  output: Output = { out: (l) => console.log(l), err: (l) => console.error(l) },
): Promise<number> {
  try {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        from: { type: 'string' },
        to: { type: 'string' },
        source: { type: 'string' },
        target: { type: 'string' },
        restart: { type: 'boolean', default: false },
        force: { type: 'boolean', default: false },
        config: { type: 'string' },
      },
    });
    const [action, ...extra] = positionals;
    if (action !== 'migrate-layout') throw new UsageError(`unknown store action "${action ?? ''}"`);
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    if (values.from !== 'divine' || values.to !== 'cluster') throw new UsageError('only --from divine --to cluster is supported');
    if (values.source === undefined) throw new UsageError('--source names the divine Redis (redis://host:port)');
    const source = parseRedisTarget(values.source);
    if (source.kind !== 'single')
      throw new UsageError('--source must be one Redis (redis:// or rediss://): the divine layout never runs on a cluster');
    const { config } = loadConfig({ configPath: values.config });
    let target: RedisTarget;
    if (values.target !== undefined) target = parseRedisTarget(values.target);
    else if (config.store.url.startsWith('sqlite:'))
      throw new UsageError('--target: the configured store is SQLite; name the Redis target');
    else target = parseRedisTarget(config.store.url, config.redis.cluster_nodes);
    const result = await runLayoutMigration({
      source,
      target,
      ...(config.redis.queue_shards > 0 ? { queueShards: config.redis.queue_shards } : {}),
      restart: values.restart,
      force: values.force,
      out: output.out,
    });
    output.out(result.ok ? 'migration done and verified' : 'migration NOT complete: see the lines above');
    return result.ok ? 0 : 1;
  } catch (err) {
    if (err instanceof UsageError || err instanceof RangeError || (err instanceof TypeError && 'code' in err)) {
      output.err(`${err.message}\n\n${STORE_USAGE}`);
      return 2;
    }
    if (err instanceof ConfigError) {
      output.err(err.message);
      return 2;
    }
    if (err instanceof TargetNotEmptyError) {
      output.err(err.message);
      return 1;
    }
    throw err;
  }
}
