/**
 * What both adapters share for ntfy topics (port-ntfy.ts): the stored form of a message's content
 * and the in-process append listeners.
 */
import type { Logger } from '../observability/logger.ts';
import type { NtfyMessageContent } from './port-ntfy.ts';

/**
 * Content as stored: JSON of exactly the fields that are set, so an absent field reads back
 * absent. Both adapters store this text opaquely.
 */
export function encodeNtfyContent(content: NtfyMessageContent): string {
  const stored: NtfyMessageContent = { message: content.message };
  if (content.encoding !== undefined) stored.encoding = content.encoding;
  if (content.title !== undefined) stored.title = content.title;
  if (content.priority !== undefined) stored.priority = content.priority;
  if (content.tags !== undefined) stored.tags = [...content.tags];
  if (content.click !== undefined) stored.click = content.click;
  if (content.icon !== undefined) stored.icon = content.icon;
  if (content.contentType !== undefined) stored.contentType = content.contentType;
  return JSON.stringify(stored);
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Stored content back, or null when the text is damaged (callers skip such a message and log it). */
export function decodeNtfyContent(json: string): NtfyMessageContent | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const raw = parsed as Record<string, unknown>;
  if (typeof raw.message !== 'string') return null;
  const content: NtfyMessageContent = { message: raw.message };
  if (raw.encoding === 'base64') content.encoding = 'base64';
  const title = optionalString(raw.title);
  if (title !== undefined) content.title = title;
  if (typeof raw.priority === 'number' && Number.isInteger(raw.priority)) content.priority = raw.priority;
  if (Array.isArray(raw.tags)) content.tags = raw.tags.filter((t): t is string => typeof t === 'string');
  const click = optionalString(raw.click);
  if (click !== undefined) content.click = click;
  const icon = optionalString(raw.icon);
  if (icon !== undefined) content.icon = icon;
  const contentType = optionalString(raw.contentType);
  if (contentType !== undefined) content.contentType = contentType;
  return content;
}

export function requirePositiveTtl(ttlMs: number): void {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new RangeError(`appendNtfyMessage: ttlMs must be a positive number, got ${ttlMs}`);
}

export function requireLimit(operation: string, limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`${operation}: limit must be a positive integer, got ${limit}`);
}

/** The listeners of {@link NtfyTopicStore.onNtfyAppend} in one process. */
export class NtfyAppendListeners {
  private readonly listeners = new Set<(topic: string) => void>();

  constructor(private readonly logger: Logger) {}

  get size(): number {
    return this.listeners.size;
  }

  add(listener: (topic: string) => void): () => void {
    // A wrapper, so the same function added twice is two subscriptions with their own unsubscribe.
    const entry = (topic: string) => listener(topic);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  emit(topic: string): void {
    for (const listener of this.listeners) {
      try {
        listener(topic);
      } catch (err) {
        this.logger.warn({ topic, err: (err as Error).message }, 'ntfy append listener threw; ignored');
      }
    }
  }
}
