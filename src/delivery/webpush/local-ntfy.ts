/**
 * The local shortcut: a UnifiedPush endpoint on this same server's ntfy topics
 * (`<ntfy.base_url>/<topic>`, usually with `?up=1`) needs no HTTP hop to ourselves. The encrypted
 * body is appended to the topic in the store, exactly as a publish to that URL would store it, and
 * the pusher role delivers it to the distributor like any other message.
 */
import { localNtfyTopicOf } from '../../ntfy/topics.ts';
import type { WebPushHeaders } from './message.ts';

/**
 * Append one encrypted body to a local ntfy topic. `headers` are the Web Push request headers the
 * message would have carried over HTTP (TTL, Urgency, Topic, Content-Encoding); `endpoint` is the
 * whole endpoint URL (its `?auth=` grants topic access as it would over HTTP). Resolves once the
 * message is durable. Rejects with {@link LocalTopicRefusedError} when the topic's access rules
 * refuse the publish (not retried), with anything else on a store failure (retried).
 */
export type AppendToLocalTopic = (topic: string, body: Buffer, headers: WebPushHeaders, endpoint: URL) => Promise<void>;

/** The ntfy server's access rules refuse an anonymous publish to the topic (what HTTP would answer 401/403). */
export class LocalTopicRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LocalTopicRefusedError';
  }
}

/** Recognises endpoints on our ntfy server (the rule itself is the ntfy layer's `localNtfyTopicOf`). Never throws. */
export class LocalNtfyMatcher {
  constructor(readonly baseUrl: string) {}

  /** The local topic an endpoint names, or null when it is not one of ours. */
  topicOf(endpoint: URL): string | null {
    return localNtfyTopicOf(endpoint.href, this.baseUrl);
  }
}

/** A matcher for `baseUrl` (`ntfy.base_url`), or null when none (usable) is configured. */
export function localNtfyMatcher(baseUrl: string): LocalNtfyMatcher | null {
  if (baseUrl.trim() === '') return null;
  try {
    const url = new URL(baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  } catch {
    return null;
  }
  return new LocalNtfyMatcher(baseUrl.trim());
}
