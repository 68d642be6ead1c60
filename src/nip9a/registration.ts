/**
 * Kind 30390 (NIP-9a registration, draft 5a908b8) parsed and checked against the gateway's
 * bounds (seed 003, "Bounds and retries"). A registration that passes is what the store keeps
 * and the gateway serves; one that fails gets a reason for `["OK", id, false, reason]` or the
 * HTTP error body.
 *
 * Tags: exactly one `d` (at most 256 characters), 1–4 `relay` (ws URLs the gateway watches),
 * 1–8 `filter` and 0–8 `ignore` (JSON NIP-01 filters: `ids`, `authors`, `kinds`, `since`,
 * `until`, `#x`; `search`, `limit` and unknown fields are refused rather than silently
 * broadened), exactly one `callback`, optional `include_event`. The whole event is at most
 * 8 KiB of UTF-8 JSON.
 */
import type { NostrEvent } from '../nostr/event.ts';
import { RELAY_PUSH } from '../nostr/kinds.ts';
import { checkCallbackUrl, checkRelayUrl, normalizeRelayUrl, type CallbackPolicy } from './ssrf.ts';

/** A NIP-01 filter as the gateway accepts it. */
export interface Nip9aFilter {
  ids?: string[];
  authors?: string[];
  kinds?: number[];
  since?: number;
  until?: number;
  /** `#x` tag filters, by the single letter. */
  tags?: Record<string, string[]>;
}

export interface Nip9aLimits {
  maxBytes: number;
  maxFilters: number;
  maxIgnores: number;
  maxRelays: number;
}

/** bind.ws's bounds (seed 003). */
export const DEFAULT_NIP9A_LIMITS: Readonly<Nip9aLimits> = Object.freeze({
  maxBytes: 8 * 1024,
  maxFilters: 8,
  maxIgnores: 8,
  maxRelays: 4,
});

/** Longest `d` accepted (bind.ws's bound). */
export const MAX_D_TAG_CHARS = 256;

export interface Nip9aRegistration {
  /** The signed kind 30390, as received. */
  event: NostrEvent;
  pubkey: string;
  d: string;
  /** Normalised relay URLs (see `normalizeRelayUrl`), deduplicated. */
  relays: string[];
  filters: Nip9aFilter[];
  ignores: Nip9aFilter[];
  callback: string;
  includeEvent: boolean;
}

export type RegistrationCheck = { ok: true; registration: Nip9aRegistration } | { ok: false; reason: string };

const HEX64 = /^[0-9a-f]{64}$/;
const TAG_KEY = /^#[A-Za-z]$/;

function stringArray(value: unknown, field: string, hex: boolean): string[] | string {
  if (!Array.isArray(value) || value.length === 0) return `${field} must be a non-empty array`;
  for (const item of value) {
    if (typeof item !== 'string') return `${field} must hold strings`;
    if (hex && !HEX64.test(item)) return `${field} must hold 64-character lower-case hex`;
  }
  return value as string[];
}

/** One filter tag's JSON, checked; a string is the reason it is refused. */
export function parseNip9aFilter(json: string): Nip9aFilter | string {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return 'filter is not JSON';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'filter is not a JSON object';
  const filter: Nip9aFilter = {};
  for (const [key, raw] of Object.entries(value as Record<string, unknown>)) {
    if (key === 'search' || key === 'limit') return `filter field "${key}" is not supported`;
    if (key === 'ids' || key === 'authors') {
      const list = stringArray(raw, key, true);
      if (typeof list === 'string') return list;
      filter[key] = list;
    } else if (key === 'kinds') {
      if (!Array.isArray(raw) || raw.length === 0) return 'kinds must be a non-empty array';
      if (!raw.every((k) => Number.isInteger(k) && (k as number) >= 0 && (k as number) <= 65535)) return 'kinds must hold kind numbers';
      filter.kinds = raw as number[];
    } else if (key === 'since' || key === 'until') {
      if (!Number.isInteger(raw) || (raw as number) < 0) return `${key} must be a unix time in seconds`;
      filter[key] = raw as number;
    } else if (TAG_KEY.test(key)) {
      const list = stringArray(raw, key, false);
      if (typeof list === 'string') return list;
      (filter.tags ??= {})[key.slice(1)] = list;
    } else {
      return `unknown filter field "${key}"`;
    }
  }
  return filter;
}

/** Whether `event` matches `filter` (NIP-01: every field present must match). */
export function matchesFilter(filter: Nip9aFilter, event: NostrEvent): boolean {
  if (filter.ids && !filter.ids.includes(event.id)) return false;
  if (filter.kinds && !filter.kinds.includes(event.kind)) return false;
  if (filter.authors && !filter.authors.includes(event.pubkey)) return false;
  if (filter.since !== undefined && event.created_at < filter.since) return false;
  if (filter.until !== undefined && event.created_at > filter.until) return false;
  if (filter.tags) {
    for (const [letter, values] of Object.entries(filter.tags)) {
      if (!event.tags.some((tag) => tag[0] === letter && tag[1] !== undefined && values.includes(tag[1]))) return false;
    }
  }
  return true;
}

/** The filter back in NIP-01 wire form (for a REQ). */
export function filterToWire(filter: Nip9aFilter): Record<string, unknown> {
  const wire: Record<string, unknown> = {};
  if (filter.ids) wire.ids = filter.ids;
  if (filter.authors) wire.authors = filter.authors;
  if (filter.kinds) wire.kinds = filter.kinds;
  if (filter.since !== undefined) wire.since = filter.since;
  if (filter.until !== undefined) wire.until = filter.until;
  for (const [letter, values] of Object.entries(filter.tags ?? {})) wire[`#${letter}`] = values;
  return wire;
}

/** The address of a registration: `30390:<pubkey>:<d>`. */
export function registrationAddress(pubkey: string, d: string): string {
  return `${RELAY_PUSH}:${pubkey}:${d}`;
}

export interface RegistrationCheckOptions {
  limits?: Readonly<Nip9aLimits>;
  callbackPolicy: CallbackPolicy;
}

/**
 * Check a kind 30390 whose signature was already verified. Every refusal names its reason; the
 * first problem found is reported.
 */
export function parseNip9aRegistration(event: NostrEvent, options: RegistrationCheckOptions): RegistrationCheck {
  const limits = options.limits ?? DEFAULT_NIP9A_LIMITS;
  const fail = (reason: string): RegistrationCheck => ({ ok: false, reason: `invalid: ${reason}` });
  if (event.kind !== RELAY_PUSH) return fail(`kind ${event.kind} is not a NIP-9a registration (30390)`);
  const bytes = Buffer.byteLength(JSON.stringify(event), 'utf8');
  if (bytes > limits.maxBytes) return fail(`registration is ${bytes} bytes, over the ${limits.maxBytes}-byte limit`);
  let d: string | null = null;
  let callback: string | null = null;
  let includeEvent = false;
  const relays: string[] = [];
  const filters: Nip9aFilter[] = [];
  const ignores: Nip9aFilter[] = [];
  for (const tag of event.tags) {
    const [name, value] = tag;
    switch (name) {
      case 'd':
        if (d !== null) return fail('more than one d tag');
        if (typeof value !== 'string' || value.length > MAX_D_TAG_CHARS)
          return fail(`d must be a string of at most ${MAX_D_TAG_CHARS} characters`);
        d = value;
        break;
      case 'relay': {
        if (typeof value !== 'string') return fail('relay tag without a URL');
        const checked = checkRelayUrl(value, options.callbackPolicy.allowLoopback);
        if (!checked.ok) return fail(checked.reason);
        const normalized = normalizeRelayUrl(checked.url);
        if (!relays.includes(normalized)) relays.push(normalized);
        break;
      }
      case 'filter':
      case 'ignore': {
        if (typeof value !== 'string') return fail(`${name} tag without JSON`);
        const parsed = parseNip9aFilter(value);
        if (typeof parsed === 'string') return fail(`${name}: ${parsed}`);
        (name === 'filter' ? filters : ignores).push(parsed);
        break;
      }
      case 'callback':
        if (callback !== null) return fail('more than one callback tag');
        if (typeof value !== 'string') return fail('callback tag without a URL');
        callback = value;
        break;
      case 'include_event':
        includeEvent = true;
        break;
      default:
        break;
    }
  }
  if (d === null) return fail('no d tag');
  if (relays.length === 0) return fail('no relay tag');
  if (relays.length > limits.maxRelays) return fail(`${relays.length} relays, at most ${limits.maxRelays}`);
  if (filters.length === 0) return fail('no filter tag');
  if (filters.length > limits.maxFilters) return fail(`${filters.length} filters, at most ${limits.maxFilters}`);
  if (ignores.length > limits.maxIgnores) return fail(`${ignores.length} ignore filters, at most ${limits.maxIgnores}`);
  if (callback === null) return fail('no callback tag');
  const callbackCheck = checkCallbackUrl(callback, options.callbackPolicy);
  if (!callbackCheck.ok) return { ok: false, reason: `blocked: ${callbackCheck.reason}` };
  return { ok: true, registration: { event, pubkey: event.pubkey, d, relays, filters, ignores, callback, includeEvent } };
}

/**
 * Whether `event` should be delivered for `registration`: it matches a filter, no ignore filter,
 * and it is new (created at or after the registration: no backfill).
 */
export function registrationWants(registration: Nip9aRegistration, event: NostrEvent): boolean {
  if (event.created_at < registration.event.created_at) return false;
  if (!registration.filters.some((f) => matchesFilter(f, event))) return false;
  return !registration.ignores.some((f) => matchesFilter(f, event));
}
