/**
 * Loads the Lua scripts of the Redis adapter and registers them with ioredis.
 *
 * Conventions (checked here at startup, so a broken script fails the boot, not a request):
 * - one script per file in `lua/`, named `<camelCaseName>-<numberOfKeys>.lua`; the key count is
 *   read from the file name so it cannot drift from the call sites, and every call is checked
 *   against it;
 * - each file opens with a `--[[ ]]` header documenting `KEYS[1]`…`KEYS[n]` (exactly n), its
 *   `ARGV[n]` lines (or `ARGV: none`) and an `Output:` section;
 * - shared helpers live in `lua/includes/<name>.lua` and are pulled in with a line
 *   `--- @include "<name>"`, inlined once per script (includes do not nest);
 * - scripts are registered with `defineCommand` as `<name>:<package version>`, so two versions
 *   of nostr-push sharing one Redis never run each other's script bodies.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChainableCommander, Redis } from 'ioredis';

/** Every script the adapter calls; the loader refuses to start when one is missing. */
export const SCRIPT_NAMES = [
  'registerToken',
  'removeToken',
  'sweepStaleToken',
  'listDevices',
  'releaseClaim',
  'advanceRelayCursor',
  'enqueue',
  'lease',
  'ack',
  'retry',
  'deadLetter',
  'replayDead',
  'deleteDead',
  'listDead',
  'appendNtfyMessage',
  'expireNtfyTopic',
  'readNtfyTopic',
  'coalesceIngest',
  'coalesceToken',
  'coalesceRefund',
  'coalesceClaim',
  'coalesceComplete',
  'replaceNotifySubscriptions',
  'enqueueFanoutJob',
  'claimFanoutJob',
  'completeFanoutJob',
  'retryFanoutJob',
  'extendClaim',
  'readBellWatchers',
  'recordBellBatch',
  'claimVapidKeys',
] as const;

export type ScriptName = (typeof SCRIPT_NAMES)[number];

export const LUA_DIR = fileURLToPath(new URL('./lua/', import.meta.url));
const PACKAGE_JSON_PATH = fileURLToPath(new URL('../../../package.json', import.meta.url));

const SCRIPT_FILE_PATTERN = /^([a-z][A-Za-z0-9]*)-(\d+)\.lua$/;
const INCLUDE_PATTERN = /^--- @include "([A-Za-z0-9_-]+)"\s*$/gm;
const ANY_INCLUDE_LINE = /^--- @include /m;

export type ScriptArg = string | number;

export interface ScriptDefinition {
  /** camelCase name from the file name, e.g. `registerToken`. */
  name: string;
  /** Key count from the file name. */
  numberOfKeys: number;
  /** Registered command name, `<name>:<version>`. */
  commandName: string;
  /** Script body with includes inlined. */
  lua: string;
  file: string;
}

export class ScriptLoaderError extends Error {
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`${file}: ${detail}`);
    this.name = 'ScriptLoaderError';
  }
}

/** `registerToken-6.lua` → `{ name: 'registerToken', numberOfKeys: 6 }`; null for other names. */
export function parseScriptFileName(file: string): { name: string; numberOfKeys: number } | null {
  const match = SCRIPT_FILE_PATTERN.exec(file);
  if (!match?.[1] || !match[2]) return null;
  return { name: match[1], numberOfKeys: Number(match[2]) };
}

/**
 * What a script's header fails to document: an empty list when it has a `--[[ ]]` header with
 * exactly `KEYS[1]`…`KEYS[numberOfKeys]`, at least one `ARGV[n]` line or `ARGV: none`, and `Output:`.
 */
export function findHeaderProblems(lua: string, numberOfKeys: number): string[] {
  const header = /^\s*--\[\[([\s\S]*?)\]\]/.exec(lua)?.[1];
  if (header === undefined) return ['no --[[ ]] header at the top of the file'];
  const problems: string[] = [];
  for (let i = 1; i <= numberOfKeys; i++) {
    if (!new RegExp(`^\\s*KEYS\\[${i}\\]\\s`, 'm').test(header)) problems.push(`KEYS[${i}] is not documented`);
  }
  if (new RegExp(`KEYS\\[${numberOfKeys + 1}\\]`).test(header)) {
    problems.push(`KEYS[${numberOfKeys + 1}] is documented but the file name says ${numberOfKeys} keys`);
  }
  if (!/^\s*(ARGV\[\d+\]\s|ARGV: none)/m.test(header)) problems.push('no ARGV[n] line (or "ARGV: none")');
  if (!/^\s*Output:/m.test(header)) problems.push('no Output: section');
  return problems;
}

export function packageVersion(path: string = PACKAGE_JSON_PATH): string {
  const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
  const version = typeof parsed === 'object' && parsed !== null ? (parsed as { version?: unknown }).version : undefined;
  if (typeof version !== 'string' || version === '') throw new Error(`${path} has no version`);
  return version;
}

function inlineIncludes(file: string, lua: string, includesDir: string): string {
  const seen = new Set<string>();
  return lua.replace(INCLUDE_PATTERN, (_line, include: string) => {
    if (seen.has(include)) return '';
    seen.add(include);
    let body: string;
    try {
      body = readFileSync(join(includesDir, `${include}.lua`), 'utf8');
    } catch {
      throw new ScriptLoaderError(file, `include "${include}" not found in ${includesDir}`);
    }
    if (ANY_INCLUDE_LINE.test(body)) throw new ScriptLoaderError(file, `include "${include}" includes another file; includes do not nest`);
    return body;
  });
}

/** Read and check every script in `dir`. Throws {@link ScriptLoaderError} on the first bad file. */
export function loadScriptDefinitions(dir: string = LUA_DIR, version: string = packageVersion()): ScriptDefinition[] {
  const definitions: ScriptDefinition[] = [];
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith('.lua')) continue;
    const parsed = parseScriptFileName(file);
    if (!parsed) throw new ScriptLoaderError(file, 'name must be <camelCaseName>-<numberOfKeys>.lua');
    const source = readFileSync(join(dir, file), 'utf8');
    const problems = findHeaderProblems(source, parsed.numberOfKeys);
    if (problems.length > 0) throw new ScriptLoaderError(file, `header: ${problems.join('; ')}`);
    definitions.push({
      ...parsed,
      commandName: `${parsed.name}:${version}`,
      lua: inlineIncludes(file, source, join(dir, 'includes')),
      file,
    });
  }
  return definitions;
}

type ScriptFunction = (...args: ScriptArg[]) => Promise<unknown>;
type ChainedScriptFunction = (...args: ScriptArg[]) => ChainableCommander;

/** The adapter's typed entry point to its scripts on one ioredis client. */
export class RedisScripts {
  private readonly byName = new Map<string, ScriptDefinition>();

  constructor(
    private readonly redis: Redis,
    definitions: ScriptDefinition[] = loadScriptDefinitions(),
  ) {
    for (const definition of definitions) {
      this.byName.set(definition.name, definition);
      redis.defineCommand(definition.commandName, { numberOfKeys: definition.numberOfKeys, lua: definition.lua });
    }
    const missing = SCRIPT_NAMES.filter((name) => !this.byName.has(name));
    if (missing.length > 0) throw new ScriptLoaderError(LUA_DIR, `missing scripts: ${missing.join(', ')}`);
  }

  /** Registered command name of a script (`name:version`). */
  commandName(name: ScriptName): string {
    return this.lookup(name).commandName;
  }

  run(name: ScriptName, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown> {
    const definition = this.definition(name, keys.length);
    // defineCommand adds the command as a method at runtime; ioredis' types cannot know it.
    const command = (this.redis as unknown as Record<string, ScriptFunction>)[definition.commandName];
    if (!command) throw new ScriptLoaderError(definition.file, 'not registered on this client');
    return command.call(this.redis, ...keys, ...args);
  }

  /** Queue a script call on a MULTI or pipeline of the same client. */
  addTo(chain: ChainableCommander, name: ScriptName, keys: readonly string[], args: readonly ScriptArg[]): ChainableCommander {
    const definition = this.definition(name, keys.length);
    const command = (chain as unknown as Record<string, ChainedScriptFunction>)[definition.commandName];
    if (!command) throw new ScriptLoaderError(definition.file, 'not registered on this pipeline');
    return command.call(chain, ...keys, ...args);
  }

  private lookup(name: ScriptName): ScriptDefinition {
    const definition = this.byName.get(name);
    if (!definition) throw new ScriptLoaderError(name, 'unknown script');
    return definition;
  }

  private definition(name: ScriptName, keyCount: number): ScriptDefinition {
    const definition = this.lookup(name);
    if (keyCount !== definition.numberOfKeys) {
      throw new ScriptLoaderError(definition.file, `called with ${keyCount} keys, declares ${definition.numberOfKeys}`);
    }
    return definition;
  }
}
