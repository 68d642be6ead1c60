/**
 * `nostr-push dlq list|replay|delete`: the dead-letter operations of the admin API, straight on
 * the store the configuration names (for an operator on the host, or when the HTTP role is not
 * running). Output is the admin API's JSON.
 *
 *   nostr-push dlq list --queue inbound|outbound [--limit N] [--cursor C]
 *   nostr-push dlq replay ID [--queue Q]        one dead letter, back to its queue and lane
 *   nostr-push dlq replay --all --queue Q       every dead letter of one queue
 *   nostr-push dlq delete ID [--queue Q]
 *
 * `--app APP` names the app whose dead letters these are (default `default`); `--config FILE` as
 * for `serve`. Exit 0 done, 1 nothing found, 2 usage error (an unknown app too).
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, resolveStoreLocation } from './config/load.ts';
import { createLogger } from './observability/logger.ts';
import { openStore } from './store/open.ts';
import { InvalidCursorError } from './store/port-dlq.ts';
import type { QueueName, StorePort } from './store/port.ts';
import { deadLetterView, isQueueName, locateDeadLetter } from './api/admin/dead-letters.ts';
import { DLQ_DEFAULT_LIMIT, DLQ_MAX_LIMIT } from './api/admin/dlq.ts';
import { configuredApps, DEFAULT_APP_ID } from './platform/apps.ts';

export const DLQ_USAGE = `usage:
  nostr-push dlq list --queue inbound|outbound [--limit N] [--cursor C] [--app APP] [--config FILE]
  nostr-push dlq replay ID [--queue Q] [--app APP] [--config FILE]
  nostr-push dlq replay --all --queue Q [--app APP] [--config FILE]
  nostr-push dlq delete ID [--queue Q] [--app APP] [--config FILE]
(--app: the app whose dead letters these are; default: default)
`;

class UsageError extends Error {}

interface Output {
  out: (line: string) => void;
  err: (line: string) => void;
}

function queueOption(value: string | undefined, required: boolean): QueueName | undefined {
  if (value === undefined && !required) return undefined;
  if (!isQueueName(value)) throw new UsageError(`--queue must be inbound or outbound${value === undefined ? '' : `, got "${value}"`}`);
  return value;
}

/** Runs one `dlq` subcommand; returns the exit code. */
export async function dlqCommand(
  args: string[],
  output: Output = { out: (l) => console.log(l), err: (l) => console.error(l) },
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        queue: { type: 'string' },
        limit: { type: 'string' },
        cursor: { type: 'string' },
        all: { type: 'boolean', default: false },
        config: { type: 'string' },
        app: { type: 'string', default: DEFAULT_APP_ID },
      },
    });
  } catch (err) {
    output.err(`${(err as Error).message}\n\n${DLQ_USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [action, id, ...extra] = positionals;
  let store: StorePort | undefined;
  try {
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    if (action !== 'list' && action !== 'replay' && action !== 'delete') throw new UsageError(`unknown dlq action "${action ?? ''}"`);
    // Validate everything before opening the store.
    const needsId = action === 'delete' || (action === 'replay' && !values.all);
    if (needsId && id === undefined) throw new UsageError(`dlq ${action} needs an id`);
    if (!needsId && id !== undefined) throw new UsageError(`dlq ${action}${values.all ? ' --all' : ''} takes no id`);
    const queue = queueOption(values.queue, action === 'list' || values.all);
    const limit = values.limit === undefined ? DLQ_DEFAULT_LIMIT : Number(values.limit);
    if (!/^\d+$/.test(values.limit ?? '1') || limit < 1 || limit > DLQ_MAX_LIMIT)
      throw new UsageError(`--limit must be an integer from 1 to ${DLQ_MAX_LIMIT}`);

    const { config } = loadConfig({ configPath: values.config });
    const app = values.app;
    if (!configuredApps(config).includes(app)) throw new UsageError(`--app: no app "${app}" in the configuration`);
    store = await openStore(resolveStoreLocation(config), { logger: createLogger({ level: 'warn' }), app });

    if (action === 'list') {
      const listed = queue as QueueName;
      const page = await store.listDeadPage(listed, { limit, ...(values.cursor === undefined ? {} : { cursor: values.cursor }) });
      output.out(JSON.stringify({ items: page.items.map((dead) => deadLetterView(listed, dead)), nextCursor: page.nextCursor }, null, 2));
      return 0;
    }
    if (action === 'replay' && values.all) {
      const replayed = await store.replayAllDead(queue as QueueName);
      output.out(JSON.stringify({ queue, replayed }));
      return 0;
    }
    const target = id as string;
    const where = await locateDeadLetter(store, target, queue);
    if (where.kind === 'ambiguous') throw new UsageError(`dead letters ${target} exist in both queues; name one with --queue`);
    const act = (queueName: QueueName): Promise<boolean> =>
      action === 'replay' ? (store as StorePort).replayDead(queueName, target) : (store as StorePort).deleteDead(queueName, target);
    if (where.kind !== 'found' || !(await act(where.queue))) {
      output.err(`no dead letter ${target}`);
      return 1;
    }
    output.out(
      JSON.stringify(
        action === 'replay' ? { id: target, queue: where.queue, replayed: true } : { id: target, queue: where.queue, deleted: true },
      ),
    );
    return 0;
  } catch (err) {
    if (err instanceof UsageError || err instanceof InvalidCursorError) {
      output.err(`${err.message}\n\n${DLQ_USAGE}`);
      return 2;
    }
    if (err instanceof ConfigError) {
      output.err(err.message);
      return 2;
    }
    throw err;
  } finally {
    await store?.close();
  }
}
