/**
 * The CPU cost of an ntfy append on SQLite by group size: appends made in one event-loop turn
 * share one transaction (the table's per-turn group commit), so this shows what one commit costs
 * against what one row costs. A file in WAL mode, as the service opens it; the message is the
 * size the ntfy load benchmark publishes.
 *
 *   flock /tmp/nostr-push-bench.lock bench/support/when-quiet.sh node --import tsx bench/ntfy/sqlite-append.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../src/observability/logger.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';

const MESSAGES = 20_000;
const TOPICS = 1_000;
const TTL_MS = 12 * 3600 * 1000;
const GROUP_SIZES = [1, 2, 4, 16];

const dir = mkdtempSync(join(tmpdir(), 'bench-ntfy-append-'));
const store = await openSqliteStore({ path: join(dir, 'nostr-push.sqlite'), logger: createLogger({ level: 'silent' }) });
const body = JSON.stringify({ s: 1, u: Date.now() * 1000, p: 'p'.repeat(100) });
try {
  // A table that is not empty, like the one a running server appends to.
  for (let i = 0; i < MESSAGES; i++) await store.appendNtfyMessage(`topic${i % TOPICS}`, { message: body }, TTL_MS);
  for (const group of GROUP_SIZES) {
    const before = process.cpuUsage();
    for (let i = 0; i < MESSAGES; i += group) {
      const appends: Promise<unknown>[] = [];
      for (let j = 0; j < group; j++) appends.push(store.appendNtfyMessage(`topic${(i + j) % TOPICS}`, { message: body }, TTL_MS));
      await Promise.all(appends);
    }
    const used = process.cpuUsage(before);
    console.log(
      `${String(group).padStart(2)} appends per transaction: ${((used.user + used.system) / MESSAGES).toFixed(1)} µs CPU per message (${(used.system / MESSAGES).toFixed(1)} in the kernel)`,
    );
  }
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
