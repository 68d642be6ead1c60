/**
 * `nostr-push apps keys create APP --role send|admin` (prints the key once), `apps keys list
 * [APP]`, `apps keys revoke ID`: API keys, written straight to the configured store (so a
 * revocation is seen by every replica on its next request).
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError, resolveStoreLocation, type LoadedConfig } from '../config/load.ts';
import { createLogger } from '../observability/logger.ts';
import { API_KEY_ROLES, type ApiKeyRole } from '../store/port-apikeys.ts';
import { openStore } from '../store/open.ts';
import type { StorePort } from '../store/port.ts';
import { createApiKey } from './api-keys.ts';
import { configuredApps } from './apps.ts';

export const APPS_USAGE = `usage:
  nostr-push apps keys create APP --role send|admin [--config FILE]   create a key (printed once)
  nostr-push apps keys list [APP] [--config FILE]                     list keys (id, app, role, prefix, created, last used, revoked)
  nostr-push apps keys revoke ID [--config FILE]                      revoke a key
`;

/** Positional arguments: everything but `--config FILE` and `--role ROLE`. */
function positionals(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--config' || arg === '--role') i++;
    else out.push(arg);
  }
  return out;
}

function optionValue(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
}

async function withStore<T>(loaded: LoadedConfig, work: (store: StorePort) => Promise<T>): Promise<T> {
  const location = resolveStoreLocation(loaded.config);
  if (location.kind === 'sqlite' && location.path !== ':memory:') mkdirSync(dirname(location.path), { recursive: true });
  const store = await openStore(location, { logger: createLogger({ level: 'warn' }) });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** Run `apps …`; returns the exit code. `print` receives stdout lines. */
export async function appsCommand(args: readonly string[], loadConfig: () => LoadedConfig, print: (line: string) => void): Promise<number> {
  const [group, action, ...rest] = positionals(args);
  if (group !== 'keys' || action === undefined) {
    process.stderr.write(APPS_USAGE);
    return 2;
  }
  const loaded = loadConfig();
  const apps = configuredApps(loaded.config);
  switch (action) {
    case 'create': {
      const [appId] = rest;
      const role = optionValue(args, '--role');
      if (appId === undefined || !API_KEY_ROLES.includes(role as ApiKeyRole)) {
        throw new ConfigError([`apps keys create needs an app and --role send|admin\n${APPS_USAGE}`]);
      }
      if (!apps.includes(appId)) throw new ConfigError([`unknown app "${appId}" (configured: ${apps.join(', ')})`]);
      const issued = await withStore(loaded, (store) => createApiKey(store, appId, role as ApiKeyRole));
      print(`id:   ${issued.record.id}`);
      print(`app:  ${appId}`);
      print(`role: ${role as string}`);
      print(`key:  ${issued.key}`);
      print('');
      print('The key is shown this once; only its SHA-256 is stored. Send it as "Authorization: Bearer <key>".');
      return 0;
    }
    case 'list': {
      const [appId] = rest;
      const keys = await withStore(loaded, (store) => store.listApiKeys(appId ?? null));
      for (const key of keys) {
        const revoked = key.revokedAtMs === null ? '' : `revoked ${new Date(key.revokedAtMs).toISOString()}`;
        const used = key.lastUsedAtMs === null ? 'never used' : `last used ${new Date(key.lastUsedAtMs).toISOString()}`;
        print(
          `${key.id}  ${key.appId}  ${key.role.padEnd(5)}  ${key.prefix}…  created ${new Date(key.createdAtMs).toISOString()}  ${used}  ${revoked}`.trimEnd(),
        );
      }
      if (keys.length === 0) print('no keys');
      return 0;
    }
    case 'revoke': {
      const [id] = rest;
      if (id === undefined) throw new ConfigError([`apps keys revoke needs a key id\n${APPS_USAGE}`]);
      const revoked = await withStore(loaded, (store) => store.revokeApiKey(id));
      if (!revoked) {
        process.stderr.write(`no live key with id ${id}\n`);
        return 1;
      }
      print(`revoked ${id}`);
      return 0;
    }
    default:
      process.stderr.write(APPS_USAGE);
      return 2;
  }
}
