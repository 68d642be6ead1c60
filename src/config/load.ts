import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { defaultConfig, ROLE_NAMES, type AppEntry, type Config, type RoleName } from './defaults.ts';
import { validateConfig } from './validate.ts';
import { APP_SECTIONS, appListProblems } from './apps.ts';
import type { KeyLayout } from '../store/redis/keys.ts';
import { isClusterUrl } from '../store/redis/target.ts';
import { DEFAULT_WAIT_TIMEOUT_MS, WAIT_REPLICAS_AUTO } from '../store/redis/replication.ts';

/** Prefix of every environment key; `__` separates levels (`NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX`). */
export const ENV_PREFIX = 'NOSTR_PUSH__';
const ENV_SEPARATOR = '__';

/** One wrong key: the field and what is wrong with it. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export interface LoadConfigOptions {
  env?: NodeJS.ProcessEnv;
  /** `--config FILE`; falls back to `NOSTR_PUSH_CONFIG`. */
  configPath?: string;
}

export interface LoadedConfig {
  config: Config;
  /** Where settings came from, for `doctor` and the start banner (never values). */
  sources: string[];
  /** Keys given explicitly (file or environment), as dotted paths. */
  explicitKeys: Set<string>;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** A raw value as text for a list item or a problem message: scalars as themselves, sections and lists as JSON. */
function asText(value: Json): string {
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Coerce a raw value (YAML scalar or environment string) to the type of the default it replaces;
 * lists from the environment are comma-separated, and an empty string is an empty list.
 */
function coerce(path: string, raw: Json, template: Json, problems: string[]): Json | undefined {
  if (Array.isArray(template)) {
    const items: Json[] =
      typeof raw === 'string'
        ? raw
            .split(',')
            .map((s) => s.trim())
            .filter((s) => s !== '')
        : Array.isArray(raw)
          ? raw
          : [raw];
    const numeric = template.length > 0 ? typeof template[0] === 'number' : path.endsWith('kinds');
    if (!numeric) return items.map(asText);
    const out: number[] = [];
    for (const item of items) {
      const n = typeof item === 'number' ? item : Number(item);
      if (!Number.isInteger(n)) {
        problems.push(`${path}: "${asText(item)}" is not an integer`);
        return undefined;
      }
      out.push(n);
    }
    return out;
  }
  if (typeof template === 'number') {
    const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : Number.NaN;
    if (!Number.isFinite(n)) {
      problems.push(`${path}: "${asText(raw)}" is not a number`);
      return undefined;
    }
    return n;
  }
  if (typeof template === 'boolean') {
    if (typeof raw === 'boolean') return raw;
    const s = asText(raw).trim().toLowerCase();
    if (['true', '1', 'yes', 'on'].includes(s)) return true;
    if (['false', '0', 'no', 'off'].includes(s)) return false;
    problems.push(`${path}: "${asText(raw)}" is not a boolean`);
    return undefined;
  }
  if (typeof raw === 'object' && raw !== null) {
    problems.push(`${path}: expected a single value`);
    return undefined;
  }
  return raw === null ? '' : asText(raw);
}

function parseRoles(raw: Json, problems: string[]): RoleName[] | undefined {
  const items = (Array.isArray(raw) ? raw.map(asText) : asText(raw).split(',')).map((s) => s.trim()).filter(Boolean);
  if (items.length === 0) {
    problems.push('roles: must name at least one role, or "all"');
    return undefined;
  }
  if (items.includes('all')) return [...ROLE_NAMES];
  const unknown = items.filter((r) => !(ROLE_NAMES as readonly string[]).includes(r));
  if (unknown.length > 0) {
    problems.push(`roles: unknown role ${unknown.join(', ')} (known: all, ${ROLE_NAMES.join(', ')})`);
    return undefined;
  }
  return [...new Set(items)] as RoleName[];
}

/** The one section whose keys are the operator's own (locales, then message names): taken as it is, checked by validation. */
const TEMPLATE_LOCALES_PATH = 'templates.locales';

/**
 * `templates.locales` from the config file. Not from the environment: its names are lower-cased
 * there, and message names are camelCase (`newPost`); `templates.dir` is the way around a file.
 */
function overlayTemplateLocales(
  target: JsonObject,
  key: string,
  raw: Json,
  origin: string,
  problems: string[],
  explicit: Set<string>,
): void {
  if (raw === null) return;
  if (origin === 'environment')
    problems.push(`${TEMPLATE_LOCALES_PATH}: set templates in the config file or templates.dir, not the environment`);
  else if (!isObject(raw)) problems.push(`${TEMPLATE_LOCALES_PATH}: expected a section of locales, got "${asText(raw)}"`);
  else {
    target[key] = raw;
    explicit.add(TEMPLATE_LOCALES_PATH);
  }
}

/**
 * Keys that existed once, with what to do instead: a configuration that still sets one is refused
 * with this reason rather than a bare "unknown key", so an operator knows what changed.
 */
const REMOVED_KEYS: Readonly<Record<string, string>> = {
  'nip9a.max_registrations_per_relay':
    'removed: a total per relay shared by every author let strangers lock a relay for everyone; use nip9a.max_registrations_per_author_per_relay and nip9a.max_watched_relays (docs/security.md)',
};

/** Overlay `source` onto `target` key by key, rejecting keys the defaults do not have. */
function overlay(target: JsonObject, source: JsonObject, prefix: string, origin: string, problems: string[], explicit: Set<string>): void {
  for (const [key, raw] of Object.entries(source)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (path === 'roles') {
      const roles = parseRoles(raw, problems);
      if (roles) target.roles = roles;
      explicit.add(path);
      continue;
    }
    if (path === TEMPLATE_LOCALES_PATH) {
      overlayTemplateLocales(target, key, raw, origin, problems, explicit);
      continue;
    }
    if (!(key in target)) {
      problems.push(`${path}: ${REMOVED_KEYS[path] ?? 'unknown key'} (from ${origin})`);
      continue;
    }
    // A YAML `key:` with no value (null) leaves the default in place, like an absent key.
    if (raw === null) continue;
    const template = target[key] as Json;
    if (isObject(template)) {
      if (!isObject(raw)) {
        problems.push(`${path}: expected a section, got "${asText(raw)}"`);
        continue;
      }
      overlay(template, raw, path, origin, problems, explicit);
      continue;
    }
    const value = coerce(path, raw, template, problems);
    if (value !== undefined) {
      target[key] = value;
      explicit.add(path);
    }
  }
}

/** `NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX=x` → `{ service: { private_key_hex: 'x' } }`. */
export function envToTree(env: NodeJS.ProcessEnv): JsonObject {
  const tree: JsonObject = {};
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(ENV_PREFIX) || value === undefined) continue;
    const parts = name.slice(ENV_PREFIX.length).toLowerCase().split(ENV_SEPARATOR).filter(Boolean);
    if (parts.length === 0) continue;
    let node = tree;
    for (const part of parts.slice(0, -1)) {
      const next = node[part];
      if (!isObject(next)) node[part] = {};
      node = node[part] as JsonObject;
    }
    node[parts[parts.length - 1] as string] = value;
  }
  return tree;
}

/** Load defaults < YAML file < environment, then validate. Throws {@link ConfigError} listing every problem. */
export function loadConfig(options: LoadConfigOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const config = defaultConfig();
  const root = config as unknown as JsonObject;
  const problems: string[] = [];
  const explicit = new Set<string>();
  const sources = ['defaults'];

  const file = options.configPath ?? env.NOSTR_PUSH_CONFIG;
  let rawApps: Json = null;
  if (file) {
    let parsed: unknown;
    try {
      parsed = parseYaml(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new ConfigError([`config file ${file}: ${(err as Error).message}`]);
    }
    if (parsed !== null && parsed !== undefined && !isObject(parsed))
      throw new ConfigError([`config file ${file}: top level must be a mapping`]);
    if (isObject(parsed)) {
      // `apps:` is merged last, over the finished top level (`mergeApps`).
      const { apps, ...topLevel } = parsed;
      rawApps = apps ?? null;
      overlay(root, topLevel, '', file, problems, explicit);
    }
    sources.push(`file ${file}`);
  }

  const fromEnv = envToTree(env);
  if ('apps' in fromEnv) {
    problems.push('apps: set in the configuration file only (a list of mappings); each app inherits the environment through the top level');
    delete fromEnv.apps;
  }
  if (Object.keys(fromEnv).length > 0) {
    overlay(root, fromEnv, '', 'environment', problems, explicit);
    sources.push('environment');
  }
  if (env.REDIS_URL) {
    // divine lets REDIS_URL override redis.url; only the source is ever logged.
    config.redis.url = env.REDIS_URL;
    explicit.add('redis.url');
    sources.push('REDIS_URL');
  }

  applyRelayAlias(config, explicit.has('nostr.relays'));
  if (config.store.url === '') {
    config.store.url = config.redis.url !== '' ? config.redis.url : `sqlite:${join(config.data_dir, 'nostr-push.sqlite')}`;
  }

  const topProblems = validateConfig(config, explicit);
  problems.push(...topProblems);
  if (rawApps !== null) {
    config.apps = mergeApps(config, rawApps, file ?? 'the configuration', problems, new Set(topProblems));
    problems.push(...appListProblems(config, config.apps));
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { config, sources, explicitKeys: explicit };
}

/** divine's one-relay alias `nostr.relay_url` replaces the default list, or joins an explicit one. */
function applyRelayAlias(config: Config, relaysExplicit: boolean): void {
  const relayAlias = config.nostr.relay_url.trim();
  if (relayAlias === '') return;
  config.nostr.relays = relaysExplicit ? [...new Set([...config.nostr.relays, relayAlias])] : [relayAlias];
}

/**
 * `apps:` (see `apps.ts`): each entry's sections over a copy of the finished top level, then
 * validated as a whole configuration. Problems are prefixed `apps.{id}.`; a problem the app only
 * inherited (already reported for the top level) is not repeated.
 */
function mergeApps(top: Config, raw: Json, origin: string, problems: string[], topProblems: ReadonlySet<string>): AppEntry[] {
  if (!Array.isArray(raw)) {
    problems.push('apps: expected a list of mappings, each with an id');
    return [];
  }
  const apps: AppEntry[] = [];
  raw.forEach((entry, index) => {
    if (!isObject(entry) || typeof entry.id !== 'string') {
      problems.push(`apps[${index}]: expected a mapping with an id`);
      return;
    }
    const id = entry.id;
    const config = structuredClone({ ...top, apps: [] }) as Config;
    // Never inherited: an app without a key of its own gets a generated one (apps.ts).
    config.service.private_key_hex = '';
    const explicit = new Set<string>();
    for (const [section, value] of Object.entries(entry)) {
      if (section === 'id') continue;
      if (!(APP_SECTIONS as readonly string[]).includes(section)) {
        problems.push(
          section in top
            ? `apps.${id}.${section}: not per app (set it at the top level; an app may set ${APP_SECTIONS.join(', ')})`
            : `apps.${id}.${section}: unknown key (from ${origin})`,
        );
        continue;
      }
      overlay(config as unknown as JsonObject, { [section]: value }, `apps.${id}`, origin, problems, explicit);
    }
    if (explicit.has(`apps.${id}.nostr.relay_url`)) applyRelayAlias(config, explicit.has(`apps.${id}.nostr.relays`));
    for (const problem of validateConfig(config)) if (!topProblems.has(problem)) problems.push(`apps.${id}: ${problem}`);
    apps.push({ id, config });
  });
  return apps;
}

export type StoreLocation =
  | { kind: 'sqlite'; path: string }
  | {
      kind: 'redis';
      /** One server (`redis://`) or a cluster's seeds (`redis+cluster://`). */
      url: string;
      /** More cluster seeds (`redis.cluster_nodes`). */
      clusterNodes?: string[];
      /** `redis.key_layout`; absent: by the URL. */
      layout?: KeyLayout;
      /** `redis.queue_shards`; absent: the layout's default. */
      queueShards?: number;
      /** `redis.wait_replicas` (-1: auto) and `redis.wait_timeout_ms`. */
      waitReplicas?: number;
      waitTimeoutMs?: number;
    };

/** Which adapter `store.url` names. Validated at load, so this never throws on a loaded config. */
export function resolveStoreLocation(config: Config): StoreLocation {
  const url = config.store.url;
  if (url.startsWith('redis://') || url.startsWith('rediss://') || isClusterUrl(url)) {
    const {
      key_layout: layout,
      cluster_nodes: clusterNodes,
      queue_shards: queueShards,
      wait_replicas: waitReplicas,
      wait_timeout_ms: waitTimeoutMs,
    } = config.redis;
    return {
      kind: 'redis',
      url,
      ...(clusterNodes.length > 0 ? { clusterNodes: [...clusterNodes] } : {}),
      ...(layout === '' ? {} : { layout }),
      ...(queueShards > 0 ? { queueShards } : {}),
      // The defaults are the store's own: only a value set otherwise is carried.
      ...(waitReplicas === WAIT_REPLICAS_AUTO ? {} : { waitReplicas }),
      ...(waitTimeoutMs === DEFAULT_WAIT_TIMEOUT_MS ? {} : { waitTimeoutMs }),
    };
  }
  if (url.startsWith('sqlite:')) return { kind: 'sqlite', path: url.slice('sqlite:'.length) };
  throw new ConfigError([`store.url: "${url}" must start with sqlite:, redis:// or redis+cluster://`]);
}
