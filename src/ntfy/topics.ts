/**
 * Topic names (ntfy's rules) and recognising an endpoint of this server.
 */
import { NtfyError } from './errors.ts';

/** ntfy's topic rule (`server.go`): 1 to 64 of `[-_A-Za-z0-9]`. */
export const TOPIC_PATTERN = /^[-_A-Za-z0-9]{1,64}$/;

/**
 * Names that cannot be topics: ntfy's `DefaultDisallowedTopics`, plus the paths nostr-push
 * serves itself on the same origin (`/health`, `/metrics`, `/internal/…`).
 */
export const DISALLOWED_TOPICS: ReadonlySet<string> = new Set([
  'docs',
  'static',
  'file',
  'app',
  'metrics',
  'account',
  'settings',
  'signup',
  'login',
  'v1',
  'health',
  'internal',
]);

/** The topic itself, or throws 400 40009 (invalid) / 40010 (reserved). */
export function checkTopic(topic: string): string {
  if (!TOPIC_PATTERN.test(topic)) throw new NtfyError('TOPIC_INVALID');
  if (DISALLOWED_TOPICS.has(topic)) throw new NtfyError('TOPIC_DISALLOWED');
  return topic;
}

/**
 * The topics of a subscription path segment: comma-separated, as the ntfy Android app sends all
 * of a server's subscriptions on one connection (`/upAAA,upBBB/json`). Duplicates are dropped,
 * order is kept, and the original text is what `open`/`keepalive` events carry as their topic.
 */
export function parseTopicList(segment: string): string[] {
  const topics = segment.split(',').map(checkTopic);
  return [...new Set(topics)];
}

function withoutTrailingSlash(url: string): string {
  return url.endsWith('/') ? url.slice(0, -1) : url;
}

/**
 * The topic of a UnifiedPush endpoint that lives on this server (`{base_url}/{topic}` with any
 * query, e.g. `?up=1`), or null when the endpoint is elsewhere, `baseUrl` is unset, or the path
 * is not one valid topic. Web Push delivery uses this to append to the topic in the store
 * instead of making an HTTP request to itself.
 */
export function localNtfyTopicOf(endpoint: string, baseUrl: string): string | null {
  if (baseUrl === '') return null;
  let endpointUrl: URL;
  let base: URL;
  try {
    endpointUrl = new URL(endpoint);
    base = new URL(baseUrl);
  } catch {
    return null;
  }
  if (endpointUrl.origin !== base.origin) return null;
  const prefix = `${withoutTrailingSlash(base.pathname)}/`;
  if (!endpointUrl.pathname.startsWith(prefix)) return null;
  const topic = endpointUrl.pathname.slice(prefix.length);
  return TOPIC_PATTERN.test(topic) && !DISALLOWED_TOPICS.has(topic) ? topic : null;
}
