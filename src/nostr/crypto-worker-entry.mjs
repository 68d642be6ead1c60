// Worker threads do not inherit the TypeScript loader the main thread registered, so this plain
// module registers tsx in the worker and then loads the worker body.
import { register } from 'tsx/esm/api';

register();
await import('./crypto-worker.ts');
