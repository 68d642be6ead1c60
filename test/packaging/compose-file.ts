/**
 * compose.yaml read as `docker compose` reads it: YAML with merge keys, environment maps or lists,
 * and `${NAME}`, `${NAME:-default}`, `${NAME:?error}` interpolation.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

export const COMPOSE_FILE = new URL('../../compose.yaml', import.meta.url);

export interface ComposeService {
  image?: string;
  build?: unknown;
  environment?: Record<string, string | number | boolean | null> | string[];
  depends_on?: Record<string, { condition?: string }> | string[];
  deploy?: { replicas?: number };
  healthcheck?: { disable?: boolean; test?: unknown };
  ports?: string[];
}

export interface ComposeFile {
  services: Record<string, ComposeService>;
}

/** Compose merges `<<:` keys (YAML 1.1 merge), so the parse must too. */
export function readCompose(): ComposeFile {
  const parsed = parse(readFileSync(COMPOSE_FILE, 'utf8'), { merge: true }) as unknown;
  assert.ok(parsed !== null && typeof parsed === 'object' && 'services' in parsed, 'compose.yaml has a services mapping');
  return parsed as ComposeFile;
}

export function environmentOf(service: ComposeService): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env))
    return Object.fromEntries(env.map((entry) => [entry.split('=')[0] ?? '', entry.split('=').slice(1).join('=')] as const));
  return Object.fromEntries(Object.entries(env).map(([name, value]) => [name, value === null ? '' : String(value)]));
}

/**
 * Compose's variable interpolation (`${NAME}`, `${NAME:-default}`, `${NAME:?error}`) with `vars`:
 * a required variable missing from `vars` is an error, as it is for `docker compose`.
 */
export function interpolate(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_whole, name: string, op: string | undefined, arg: string | undefined) => {
    const given = vars[name];
    if (given !== undefined && given !== '') return given;
    if (op === '?') throw new Error(`compose needs ${name}: ${arg ?? ''}`);
    return op === '-' ? (arg ?? '') : '';
  });
}

/** The services that run nostr-push (they name their roles). */
export function nostrPushServices(compose: ComposeFile): Array<[string, ComposeService, Record<string, string>]> {
  return Object.entries(compose.services)
    .map(([name, service]) => [name, service, environmentOf(service)] as [string, ComposeService, Record<string, string>])
    .filter(([, , env]) => env.NOSTR_PUSH__ROLES !== undefined);
}

export function rolesOf(env: Record<string, string>): string[] {
  return (env.NOSTR_PUSH__ROLES ?? '').split(',').map((role) => role.trim());
}
