/**
 * The apps one deployment serves: the top-level configuration is the app `default`, and the
 * `apps:` list adds more (`src/config/apps.ts`, docs/platform.md "Tenancy"). The API's app rule
 * (`src/api/auth.ts`) is written against {@link configuredApps}; what runs per app at start (its
 * store view, service key, transports) is in `src/platform/tenants.ts`.
 */
import type { Config } from '../config/defaults.ts';
import { SEND_TYPE_ENTRY } from '../config/validate.ts';
import { DEFAULT_APP_ID } from '../config/apps.ts';

export { APP_ID_PATTERN, DEFAULT_APP_ID } from '../config/apps.ts';

/** The ids of the configured apps, the default first. */
export function configuredApps(config: Config): readonly string[] {
  return [DEFAULT_APP_ID, ...config.apps.map((app) => app.id)];
}

/** Every configured app with its whole configuration, the default (the top level) first. */
export function appConfigs(config: Config): ReadonlyArray<{ id: string; config: Config }> {
  return [{ id: DEFAULT_APP_ID, config }, ...config.apps];
}

/** `send_api.types` as a map: type → the preference category that enables it (validated at load). */
export function sendTypeCategories(types: readonly string[]): ReadonlyMap<string, number> {
  const categories = new Map<string, number>();
  for (const entry of types) {
    const match = SEND_TYPE_ENTRY.exec(entry);
    if (match?.[1] && match[2]) categories.set(match[1], Number(match[2]));
  }
  return categories;
}
