/**
 * The `ntfy` configuration section checked (at load, one line per wrong key) and turned into the
 * runtime settings the server uses.
 */
import { NTFY_MESSAGE_SIZE_LIMIT_BYTES, NTFY_WEBSOCKET_KINDS, type NtfyConfig, type NtfyWebSocketKind } from '../config/defaults.ts';
import { DEFAULT_ACCESS_VALUES, parseTokenEntry, TopicAuthorizer, type TokenEntry } from './auth.ts';
import { parseConfigDuration } from './duration.ts';
import { exemptHostProblem } from './visitor.ts';

const SECOND_MS = 1000;

/** The settings of a running ntfy server, in milliseconds. */
export interface NtfySettings {
  baseUrl: string;
  cacheDurationMs: number;
  messageSizeLimitBytes: number;
  /** Bounds of a scheduled message's delay. */
  minDelayMs: number;
  maxDelayMs: number;
  keepaliveIntervalMs: number;
  websocketTimeoutMs: number;
  /** Which WebSocket server serves `/…/ws` (`ntfy.websocket`). */
  websocket: NtfyWebSocketKind;
  safetyRedrainMs: number;
  expiryIntervalMs: number;
  visitorRequestBurst: number;
  visitorRequestReplenishMs: number;
  visitorSubscriptionLimit: number;
  visitorExemptHosts: string[];
  behindProxy: boolean;
  authorizer: TopicAuthorizer;
}

/** Every problem with the `ntfy` section, one line each (the numeric fields are checked in validate.ts). */
export function ntfyConfigProblems(config: NtfyConfig): string[] {
  const problems: string[] = [];
  const cache = parseConfigDuration(config.cache_duration);
  if (cache === null || !(cache > 0))
    problems.push(`ntfy.cache_duration: "${config.cache_duration}" must be a positive duration like 12h, 30m or 3600`);
  const minDelay = parseConfigDuration(config.min_delay);
  const maxDelay = parseConfigDuration(config.max_delay);
  if (minDelay === null || !(minDelay >= SECOND_MS))
    problems.push(`ntfy.min_delay: "${config.min_delay}" must be a duration of at least 1s, like 10s or 1m`);
  if (maxDelay === null || !(maxDelay > 0))
    problems.push(`ntfy.max_delay: "${config.max_delay}" must be a positive duration like 3d, 12h or 86400`);
  else if (minDelay !== null && maxDelay < minDelay) problems.push('ntfy.max_delay must not be shorter than ntfy.min_delay');
  if (config.message_size_limit_bytes < NTFY_MESSAGE_SIZE_LIMIT_BYTES) {
    problems.push(
      `ntfy.message_size_limit_bytes must be at least ${NTFY_MESSAGE_SIZE_LIMIT_BYTES}: UnifiedPush and RFC 8030 need ${NTFY_MESSAGE_SIZE_LIMIT_BYTES}-byte messages`,
    );
  }
  if (config.websocket_timeout_secs <= config.keepalive_interval_secs) {
    problems.push('ntfy.websocket_timeout_secs must be greater than ntfy.keepalive_interval_secs (a pong answers each ping)');
  }
  if (!(NTFY_WEBSOCKET_KINDS as readonly string[]).includes(config.websocket))
    problems.push(`ntfy.websocket: "${config.websocket}" must be one of ${NTFY_WEBSOCKET_KINDS.join(', ')}`);
  if (config.base_url !== '' && !/^https?:\/\/[^\s/]+/.test(config.base_url))
    problems.push(`ntfy.base_url: "${config.base_url}" must be an http:// or https:// URL`);
  if (!(config.auth_default_access in DEFAULT_ACCESS_VALUES)) {
    problems.push(
      `ntfy.auth_default_access: "${config.auth_default_access}" must be one of ${Object.keys(DEFAULT_ACCESS_VALUES).join(', ')}`,
    );
  }
  for (const entry of config.auth_tokens) {
    const parsed = parseTokenEntry(entry);
    if (typeof parsed === 'string') problems.push(`ntfy.auth_tokens: ${parsed}`);
  }
  for (const host of config.visitor_exempt_hosts) {
    const problem = exemptHostProblem(host);
    if (problem) problems.push(`ntfy.visitor_exempt_hosts: ${problem}`);
  }
  for (const field of ['visitor_request_burst', 'visitor_subscription_limit'] as const) {
    if (!Number.isInteger(config[field]) || config[field] < 0)
      problems.push(`ntfy.${field} must be a whole number, 0 or more (0 switches the limit off)`);
  }
  return problems;
}

/** Settings from a validated section. */
export function ntfySettings(config: NtfyConfig): NtfySettings {
  const entries = config.auth_tokens.map(parseTokenEntry).filter((e): e is TokenEntry => typeof e !== 'string');
  const defaultAccess = DEFAULT_ACCESS_VALUES[config.auth_default_access] ?? { read: true, write: true };
  return {
    baseUrl: config.base_url,
    cacheDurationMs: parseConfigDuration(config.cache_duration) ?? 12 * 3600 * SECOND_MS,
    messageSizeLimitBytes: config.message_size_limit_bytes,
    minDelayMs: parseConfigDuration(config.min_delay) ?? 10 * SECOND_MS,
    maxDelayMs: parseConfigDuration(config.max_delay) ?? 3 * 86_400 * SECOND_MS,
    keepaliveIntervalMs: config.keepalive_interval_secs * SECOND_MS,
    websocketTimeoutMs: config.websocket_timeout_secs * SECOND_MS,
    websocket: config.websocket,
    safetyRedrainMs: config.safety_redrain_secs * SECOND_MS,
    expiryIntervalMs: config.expiry_interval_secs * SECOND_MS,
    visitorRequestBurst: config.visitor_request_burst,
    visitorRequestReplenishMs: config.visitor_request_replenish_secs * SECOND_MS,
    visitorSubscriptionLimit: config.visitor_subscription_limit,
    visitorExemptHosts: [...config.visitor_exempt_hosts],
    behindProxy: config.behind_proxy,
    authorizer: new TopicAuthorizer(defaultAccess, entries),
  };
}
