/**
 * The apps one deployment serves. Tenancy (several apps, an `apps:` list in the configuration)
 * is not built yet: the top-level configuration is the one app, `default`. Everything of the app
 * platform (API keys, notifications, idempotency records, delivery log entries) already carries
 * an app id, and the API's app rule (`src/api/auth.ts`) is written against this list, so adding
 * apps changes the list, not the rule.
 */
import type { Config } from '../config/defaults.ts';
import { SEND_TYPE_ENTRY } from '../config/validate.ts';

/** The app the top-level configuration describes. */
export const DEFAULT_APP_ID = 'default';

/** What an app id may look like (it is part of store keys, where `:` separates fields). */
export const APP_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** The ids of the configured apps, the default first. */
export function configuredApps(_config: Config): readonly string[] {
  return [DEFAULT_APP_ID];
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
