// The entry of every worker thread: `workerData.body` names the worker's module by URL, without
// its extension. Compiled (dist/), the body is plain JavaScript (`.js`); from the source (src/),
// it is TypeScript, and worker threads do not inherit the loader the main thread registered, so
// tsx is registered here first.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { workerData } from 'node:worker_threads';

const body = workerData?.body;
if (typeof body !== 'string') throw new Error('worker-entry.mjs: workerData.body must name the worker module');
const compiled = `${body}.js`;
if (existsSync(fileURLToPath(compiled))) {
  await import(compiled);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(`${body}.ts`);
}
