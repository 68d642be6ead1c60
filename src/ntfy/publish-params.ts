/**
 * Reading a publish request's parameters the way ntfy does (`readParam`): each option from its
 * headers first, then from its lower-case query parameters, with RFC 2047 encoded header values
 * decoded; and turning the body into message content (`handlePublishBody`). Which options there
 * are, in which order they are checked, is `publish-options.ts`.
 */
import { isUtf8 } from 'node:buffer';
import type { NtfyAction, NtfyAttachment, NtfyMessageContent } from '../store/port-ntfy.ts';
import { NtfyError } from './errors.ts';

/** What a publish handler can read of its request. */
export interface ParamSource {
  /** A header value (name in any case), or undefined. */
  header(name: string): string | undefined;
  /** A query parameter (exact name), or undefined. */
  query(name: string): string | undefined;
}

/** The message text of an empty publish, as ntfy sends it. */
export const EMPTY_MESSAGE_TEXT = 'triggered';

/** Priority values ntfy accepts besides 1–5. */
const PRIORITY_NAMES: Readonly<Record<string, number>> = { min: 1, low: 2, default: 3, high: 4, max: 5, urgent: 5 };

/** RFC 9218 `Priority` header values (e.g. added by Cloudflare), which are not ntfy priorities and are ignored. */
const HTTP_PRIORITY_PATTERN = /^u=\d,\s*(i|\d)$|^u=\d$/;

const ENCODED_WORD = /=\?([^?]+)\?([bBqQ])\?([^?]*)\?=/g;
const BETWEEN_ENCODED_WORDS = /(\?=)\s+(=\?)/g;

function decodeEncodedWord(charset: string, encoding: string, text: string): string {
  const bytes =
    encoding.toLowerCase() === 'b'
      ? Buffer.from(text, 'base64')
      : Buffer.from(
          text.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
          'latin1',
        );
  const name = charset.toLowerCase();
  if (name === 'utf-8' || name === 'utf8') return bytes.toString('utf8');
  if (name === 'iso-8859-1' || name === 'latin1' || name === 'us-ascii') return bytes.toString('latin1');
  // An unknown charset is left as it was sent rather than guessed at.
  return `=?${charset}?${encoding}?${text}?=`;
}

/**
 * A header value as the publisher meant it: RFC 2047 words (`=?UTF-8?B?…?=`) decoded, and raw
 * UTF-8 bytes (which Node hands over as latin1 characters) read as UTF-8, as ntfy (Go) does.
 */
export function decodeHeaderValue(value: string): string {
  let text = value;
  if (/[\x80-\xff]/.test(text)) {
    const bytes = Buffer.from(text, 'latin1');
    if (isUtf8(bytes)) text = bytes.toString('utf8');
  }
  if (!text.includes('=?')) return text;
  return text
    .replace(BETWEEN_ENCODED_WORDS, '$1$2')
    .replace(ENCODED_WORD, (_m, charset: string, encoding: string, word: string) => decodeEncodedWord(charset, encoding, word));
}

/** ntfy's `readParam`: the first header among `names`, else the first query parameter among them (lower-cased). */
export function readParam(source: ParamSource, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = source.header(name);
    if (value !== undefined && value.trim() !== '') return decodeHeaderValue(value).trim();
  }
  for (const name of names) {
    const value = source.query(name.toLowerCase());
    if (value !== undefined && value.trim() !== '') return value.trim();
  }
  return undefined;
}

/** ntfy's `readBoolParam`: `1`, `yes` and `true` (any case) are true. */
export function readBoolParam(source: ParamSource, ...names: string[]): boolean {
  const value = readParam(source, ...names)?.toLowerCase();
  return value === '1' || value === 'yes' || value === 'true';
}

/** ntfy's `readBoolParam` with a default: unset is `fallback`; set, only `1`, `yes` and `true` are true. */
export function readBoolParamOr(source: ParamSource, fallback: boolean, ...names: string[]): boolean {
  const value = readParam(source, ...names);
  return value === undefined ? fallback : readBoolParam(source, ...names);
}

/** 1–5 or a name; undefined when unset or an RFC 9218 value; throws 400 40007 otherwise. */
export function parsePriority(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = raw.trim().toLowerCase();
  if (value === '' || HTTP_PRIORITY_PATTERN.test(value)) return undefined;
  if (/^[1-5]$/.test(value)) return Number(value);
  const named = PRIORITY_NAMES[value];
  if (named === undefined) throw new NtfyError('PRIORITY_INVALID');
  return named;
}

export function parseTags(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const tags = raw
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  return tags.length > 0 ? tags : undefined;
}

/** Everything of a publish except its body. */
export interface PublishOptions {
  title?: string;
  /** From `X-Message`/`m`; the body overrides it unless the body is empty. */
  message?: string;
  priority?: number;
  tags?: string[];
  click?: string;
  icon?: string;
  markdown: boolean;
  /** UnifiedPush mode: the body is kept byte for byte (text as is, anything else as base64). */
  unifiedPush: boolean;
  /** `Cache: no` makes this false: the message reaches live subscribers only and is never stored. */
  cache?: boolean;
  actions?: NtfyAction[];
  /** An attachment by URL (`Attach`), its name from `Filename` or the URL. */
  attachment?: NtfyAttachment;
  /** `Filename` without `Attach`: the body would be an uploaded file, which this server does not keep. */
  filename?: string;
  /** Scheduled delivery (`Delay`, `At`, `In`): when, in store-clock ms. */
  deliverAtMs?: number;
  /** `Poll-ID`: the publish becomes a `poll_request` event. */
  pollId?: string;
}

/** ntfy's text of a `poll_request` event. */
export const POLL_REQUEST_TEXT = 'New message';
/** ntfy's message for an attachment sent without text (`defaultAttachmentMessage`). */
export const attachmentMessage = (name: string): string => `You received a file: ${name}`;

/**
 * The content of a publish from its body and options (ntfy's `handlePublishBody`), in its order:
 * - a poll request (`Poll-ID`): the body is dropped, the text is ntfy's `New message`;
 * - UnifiedPush mode: a UTF-8 body is the message untrimmed; any other body becomes padded
 *   standard base64 with `encoding: base64` (the Android app decodes it back to the bytes);
 * - an attachment by URL: the body is the text, which must be UTF-8 (400 40011), trimmed;
 *   no text says the attachment's name;
 * - a `Filename` without a URL: the body is an upload, which this server does not keep (40014);
 * - otherwise a UTF-8 body is the message, trimmed; a body that is not UTF-8 would be an ntfy
 *   attachment (400 40014);
 * - nothing left: `triggered`.
 * Size limits are checked by the caller before.
 */
export function contentFromBody(body: Buffer, options: PublishOptions): NtfyMessageContent {
  if (options.pollId !== undefined) return { message: POLL_REQUEST_TEXT, pollId: options.pollId };
  let message = options.message ?? '';
  let encoding: 'base64' | undefined;
  if (options.unifiedPush) {
    if (isUtf8(body)) message = body.toString('utf8');
    else {
      message = body.toString('base64');
      encoding = 'base64';
    }
  } else if (options.attachment !== undefined) {
    if (!isUtf8(body)) throw new NtfyError('MESSAGE_NOT_UTF8');
    if (body.length > 0) message = body.toString('utf8').trim();
    if (message === '') message = attachmentMessage(options.attachment.name);
  } else if (options.filename !== undefined) {
    throw new NtfyError('ATTACHMENTS_NOT_ALLOWED');
  } else if (body.length > 0) {
    if (!isUtf8(body)) throw new NtfyError('ATTACHMENTS_NOT_ALLOWED');
    message = body.toString('utf8').trim();
  }
  if (message === '') message = EMPTY_MESSAGE_TEXT;
  const content: NtfyMessageContent = { message };
  if (encoding) content.encoding = encoding;
  if (options.title !== undefined) content.title = options.title;
  if (options.priority !== undefined) content.priority = options.priority;
  if (options.tags !== undefined) content.tags = options.tags;
  if (options.click !== undefined) content.click = options.click;
  if (options.icon !== undefined) content.icon = options.icon;
  if (options.markdown) content.contentType = 'text/markdown';
  if (options.actions !== undefined && options.actions.length > 0) content.actions = options.actions;
  if (options.attachment !== undefined) content.attachment = options.attachment;
  return content;
}
