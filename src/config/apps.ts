/**
 * Tenancy in the configuration: the top level is the `default` app, and `apps:` adds more, each
 * a mapping with an `id` and any of {@link APP_SECTIONS}, merged over the top level key by key
 * (`load.ts`). What an app may not set is the process's: roles, the store, the HTTP server, the
 * ntfy server, NIP-9a, the crypto workers, the HTTP/2 client and the log.
 *
 * The one exception to inheritance is the service key: two apps with one key could not tell their
 * control events apart, so an app without `service.private_key_hex` gets a key of its own,
 * generated on first start and kept in `data_dir` as {@link appServiceKeyFile}.
 */
import type { AppEntry, Config } from './defaults.ts';

/** The app the top-level configuration describes. */
export const DEFAULT_APP_ID = 'default';

/** What an app id may look like (it is part of store keys and file names, where `:` and `.` separate fields). */
export const APP_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** The sections an app may set: its identity, providers, relays, notification rules and tunables. */
export const APP_SECTIONS = [
  'service',
  'nostr',
  'notification',
  'cleanup',
  'firebase',
  'apns',
  'webpush',
  'queue',
  'send_api',
  'delivery_log',
  'inbox',
  'events',
] as const satisfies ReadonlyArray<keyof Config>;

/** The file in `data_dir` that keeps the generated service key of app `id` (the default's is `service-key.hex`). */
export function appServiceKeyFile(id: string): string {
  return `service-key.${id}.hex`;
}

/** Problems of the app list as a whole: ids (pattern, `default` reserved, duplicates) and duplicate configured service keys. */
export function appListProblems(top: Config, apps: readonly AppEntry[]): string[] {
  const problems: string[] = [];
  const seenIds = new Set<string>();
  const keyOwners = new Map<string, string>();
  if (top.service.private_key_hex !== '') keyOwners.set(top.service.private_key_hex.toLowerCase(), DEFAULT_APP_ID);
  for (const app of apps) {
    if (!APP_ID_PATTERN.test(app.id)) problems.push(`apps: id "${app.id}" must match ${String(APP_ID_PATTERN)}`);
    else if (app.id === DEFAULT_APP_ID)
      problems.push(`apps: id "${DEFAULT_APP_ID}" is the top-level configuration; give the app another id`);
    else if (seenIds.has(app.id)) problems.push(`apps: id "${app.id}" is used twice`);
    seenIds.add(app.id);
    const key = app.config.service.private_key_hex.toLowerCase();
    if (key === '') continue;
    const owner = keyOwners.get(key);
    if (owner !== undefined) problems.push(`apps.${app.id}.service.private_key_hex: the same service key as app "${owner}"`);
    else keyOwners.set(key, app.id);
  }
  return problems;
}
