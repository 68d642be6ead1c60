#!/usr/bin/env node
// npm run lint:openapi, first step: write the OpenAPI document (/v1/openapi.json) of a service
// with every router mounted (roles api and pusher, the internal hook on, on a throwaway SQLite
// store, listening on a free loopback port) to the file named by the first argument, for
// `redocly lint` (redocly.yaml). Run with tsx loaded (`node --import tsx`): it imports the source.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { loadConfig } from '../src/config/load.ts';
import { generateSecretKey } from '../src/nostr/keys.ts';
import { createLogger } from '../src/observability/logger.ts';
import { startService } from '../src/service.ts';

const out = resolve(process.argv[2] ?? '.tmp/openapi.json');
const dir = mkdtempSync(join(tmpdir(), 'np-openapi-'));
try {
  const { config } = loadConfig({
    env: {
      NOSTR_PUSH__STORE__URL: `sqlite:${join(dir, 'np.sqlite')}`,
      NOSTR_PUSH__DATA_DIR: dir,
      NOSTR_PUSH__ROLES: 'api,pusher',
      NOSTR_PUSH__SERVER__LISTEN_ADDR: '127.0.0.1:0',
      NOSTR_PUSH__SERVER__INTERNAL_API_TOKEN: 'openapi-document',
      NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: generateSecretKey(),
    },
  });
  const service = await startService(config, { logger: createLogger({ level: 'silent' }) });
  try {
    const response = await fetch(`http://127.0.0.1:${service.httpAddress?.port}/v1/openapi.json`);
    if (!response.ok) throw new Error(`/v1/openapi.json answered ${response.status}: ${await response.text()}`);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(await response.json(), null, 2)}\n`);
    console.log(`write-openapi: ${out}`);
  } finally {
    await service.stop();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
