/**
 * What both adapters share for ntfy topics (port-ntfy.ts): the stored form of a message's content
 * and the in-process append listeners.
 */
import type { Logger } from '../observability/logger.ts';
import type { NtfyAction, NtfyAppendEvent, NtfyAttachment, NtfyMessageContent, NtfyReadRequest } from './port-ntfy.ts';
import { randomInt } from 'node:crypto';
import { isNtfyMessageId, NTFY_ID_ALPHABET, NTFY_ID_LENGTH } from './ntfy-ids.ts';

/**
 * Content as stored: exactly the fields that are set and well-typed, so an absent field reads
 * back absent. Both adapters store its JSON opaquely; {@link decodeNtfyContent} applies the same
 * rules, so decoding the JSON gives back this very object.
 */
function sanitizeNtfyContent(raw: Record<string, unknown>): NtfyMessageContent | null {
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
  if (Array.isArray(raw.actions)) {
    const actions = raw.actions.map(sanitizeAction).filter((a): a is NtfyAction => a !== null);
    if (actions.length > 0) content.actions = actions;
  }
  const attachment = sanitizeAttachment(raw.attachment);
  if (attachment) content.attachment = attachment;
  const sequenceId = optionalString(raw.sequenceId);
  if (sequenceId !== undefined) content.sequenceId = sequenceId;
  const pollId = optionalString(raw.pollId);
  if (pollId !== undefined) content.pollId = pollId;
  return content;
}

const ACTION_TYPES: ReadonlySet<string> = new Set(['view', 'broadcast', 'http', 'copy']);

/** A string map as stored, or undefined when empty or not one. */
function stringMap(value: unknown): Record<string, string> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const map: Record<string, string> = {};
  let size = 0;
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry !== 'string') continue;
    map[key] = entry;
    size += 1;
  }
  return size > 0 ? map : undefined;
}

/** An action with exactly its well-typed fields, in ntfy's field order; null when it is not one. */
function sanitizeAction(value: unknown): NtfyAction | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const raw = value as Record<string, unknown>;
  if (typeof raw.id !== 'string' || typeof raw.action !== 'string' || !ACTION_TYPES.has(raw.action) || typeof raw.label !== 'string')
    return null;
  const action: NtfyAction = { id: raw.id, action: raw.action as NtfyAction['action'], label: raw.label, clear: raw.clear === true };
  const url = optionalString(raw.url);
  if (url !== undefined) action.url = url;
  const method = optionalString(raw.method);
  if (method !== undefined) action.method = method;
  const headers = stringMap(raw.headers);
  if (headers) action.headers = headers;
  const body = optionalString(raw.body);
  if (body !== undefined) action.body = body;
  const intent = optionalString(raw.intent);
  if (intent !== undefined) action.intent = intent;
  const extras = stringMap(raw.extras);
  if (extras) action.extras = extras;
  const actionValue = optionalString(raw.value);
  if (actionValue !== undefined) action.value = actionValue;
  return action;
}

function sanitizeAttachment(value: unknown): NtfyAttachment | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const raw = value as Record<string, unknown>;
  return typeof raw.name === 'string' && typeof raw.url === 'string' ? { name: raw.name, url: raw.url } : null;
}

/** Content in its stored form, and that form's JSON (what the adapters keep). */
export interface StoredNtfyContent {
  content: NtfyMessageContent;
  json: string;
}

/** The stored form of what a publisher supplied; an append answers with exactly this content. */
export function storedNtfyContent(content: NtfyMessageContent): StoredNtfyContent {
  const stored = sanitizeNtfyContent(content as unknown as Record<string, unknown>);
  if (!stored) throw new RangeError('appendNtfyMessage: content.message must be a string');
  return { content: stored, json: JSON.stringify(stored) };
}

/** The JSON an adapter stores for `content`. */
export function encodeNtfyContent(content: NtfyMessageContent): string {
  return storedNtfyContent(content).json;
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
  return sanitizeNtfyContent(parsed as Record<string, unknown>);
}

/**
 * A scheduled message's id: 12 random characters of the id alphabet (ntfy's ids are random too).
 * Never a position in the global order; the message gets one when it is delivered.
 */
export function newScheduledId(): string {
  let id = '';
  for (let i = 0; i < NTFY_ID_LENGTH; i++) id += NTFY_ID_ALPHABET.charAt(randomInt(NTFY_ID_ALPHABET.length));
  return id;
}

export function requirePositiveTtl(ttlMs: number): void {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new RangeError(`appendNtfyMessage: ttlMs must be a positive number, got ${ttlMs}`);
}

export function requireLimit(operation: string, limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`${operation}: limit must be a positive integer, got ${limit}`);
}

/**
 * Throw the RangeError a read of `request` would be refused with (port-ntfy.ts): a limit that is
 * not a positive integer, or an `afterId` that is not a 12-character id.
 */
export function requireNtfyReadRequest(request: NtfyReadRequest): void {
  requireLimit('readNtfyMessages', request.limit);
  if (request.afterId !== null && !isNtfyMessageId(request.afterId))
    throw new RangeError(`readNtfyMessages: not an ntfy message id: ${request.afterId}`);
}

/** The listeners of {@link NtfyTopicStore.onNtfyAppend} in one process. */
export class NtfyAppendListeners {
  private readonly listeners = new Set<(event: NtfyAppendEvent) => void>();

  constructor(private readonly logger: Logger) {}

  get size(): number {
    return this.listeners.size;
  }

  add(listener: (event: NtfyAppendEvent) => void): () => void {
    // A wrapper, so the same function added twice is two subscriptions with their own unsubscribe.
    const entry = (event: NtfyAppendEvent) => listener(event);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  emit(event: NtfyAppendEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.logger.warn({ topic: event.message.topic, err: (err as Error).message }, 'ntfy append listener threw; ignored');
      }
    }
  }
}
