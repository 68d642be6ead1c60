/**
 * A benchmark that runs the service's stages in its own process measures them under the service's
 * Node flags (`SERVER_NODE_FLAGS`, src/util/heap-growth.ts), which every launcher of the binary
 * passes and which cannot be set from inside a running process: started without them, it starts
 * itself again with them and exits as that run exits. A benchmark that starts the binary
 * (`startServiceProcess`) gets them there. To measure without: `BENCH_BARE_NODE=1`.
 */
import { spawnSync } from 'node:child_process';
import { semiSpaceMibInForce, SERVER_NODE_FLAGS } from '../../src/util/heap-growth.ts';

export function runUnderServerNodeFlags(): void {
  if (process.env.BENCH_BARE_NODE === '1' || semiSpaceMibInForce() !== null) return;
  const run = spawnSync(process.execPath, [...SERVER_NODE_FLAGS, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(run.status ?? 1);
}
