// A worker thread's entry. Compiled (dist/), the worker body is plain JavaScript next to this file.
// From the source (src/), it is TypeScript, and worker threads do not inherit the loader the main
// thread registered, so this registers tsx in the worker first.
import { existsSync } from 'node:fs';

const compiled = new URL('./crypto-worker.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./crypto-worker.ts');
}
