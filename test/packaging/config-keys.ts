/**
 * The environment names the service reads, derived from the defaults (src/config/defaults.ts) and
 * the loader's naming rule (src/config/load.ts), so the packaging tests never keep their own list.
 */
import { defaultConfig } from '../../src/config/defaults.ts';
import { ENV_PREFIX } from '../../src/config/load.ts';

/** Dotted paths of every configuration leaf (`service.coalesce_window_secs`; lists are leaves). */
export function configLeafPaths(): string[] {
  const paths: string[] = [];
  const walk = (node: Record<string, unknown>, prefix: string): void => {
    for (const [key, value] of Object.entries(node)) {
      const path = prefix === '' ? key : `${prefix}.${key}`;
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) walk(value as Record<string, unknown>, path);
      else paths.push(path);
    }
  };
  walk(defaultConfig() as unknown as Record<string, unknown>, '');
  return paths;
}

/** `service.coalesce_window_secs` → `NOSTR_PUSH__SERVICE__COALESCE_WINDOW_SECS`. */
export function envNameOf(path: string): string {
  return `${ENV_PREFIX}${path.split('.').join('__').toUpperCase()}`;
}

/** Every `NOSTR_PUSH__…` name the loader maps onto a configuration key. */
export function configEnvNames(): Set<string> {
  return new Set(configLeafPaths().map(envNameOf));
}

/** The names among `names` that look like configuration (`NOSTR_PUSH__` prefix) but name no key. */
export function unknownConfigEnvNames(names: Iterable<string>): string[] {
  const known = configEnvNames();
  return [...names].filter((name) => name.startsWith(ENV_PREFIX) && !known.has(name));
}
