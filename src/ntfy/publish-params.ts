/**
 * Reading a publish request the way ntfy does (`parsePublishParams`, `readParam`): each option
 * from its headers first, then from its lower-case query parameters, with RFC 2047 encoded
 * header values decoded; and turning the body into message content (`handlePublishBody`).
 */
import { isUtf8 } from 'node:buffer';
import type { NtfyMessageContent } from '../store/port-ntfy.ts';
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
}

/** The publish options of a request, as ntfy reads them. */
export function readPublishOptions(source: ParamSource): PublishOptions {
  const options: PublishOptions = {
    markdown:
      readBoolParam(source, 'x-markdown', 'markdown', 'md') ||
      (source.header('content-type') ?? '').toLowerCase().startsWith('text/markdown'),
    unifiedPush:
      readBoolParam(source, 'x-unifiedpush', 'unifiedpush', 'up') ||
      (source.header('content-encoding') ?? '').trim().toLowerCase() === 'aes128gcm',
  };
  const title = readParam(source, 'x-title', 'title', 't');
  if (title !== undefined) options.title = title;
  const message = readParam(source, 'x-message', 'message', 'm');
  if (message !== undefined) options.message = message.replace(/\\n/g, '\n');
  const priority = parsePriority(readParam(source, 'x-priority', 'priority', 'prio', 'p'));
  if (priority !== undefined) options.priority = priority;
  const tags = parseTags(readParam(source, 'x-tags', 'tags', 'tag', 'ta'));
  if (tags !== undefined) options.tags = tags;
  const click = readParam(source, 'x-click', 'click');
  if (click !== undefined) options.click = click;
  const icon = readParam(source, 'x-icon', 'icon');
  if (icon !== undefined) options.icon = icon;
  return options;
}

/**
 * The content of a publish from its body and options (ntfy's `handlePublishBody`):
 * - UnifiedPush mode: a UTF-8 body is the message untrimmed; any other body becomes padded
 *   standard base64 with `encoding: base64` (the Android app decodes it back to the bytes);
 * - otherwise a UTF-8 body is the message, trimmed; a body that is not UTF-8 would be an ntfy
 *   attachment, which this server does not keep (400 40014);
 * - nothing left: `triggered`.
 * Size limits are checked by the caller before.
 */
export function contentFromBody(body: Buffer, options: PublishOptions): NtfyMessageContent {
  let message = options.message ?? '';
  let encoding: 'base64' | undefined;
  if (options.unifiedPush) {
    if (isUtf8(body)) message = body.toString('utf8');
    else {
      message = body.toString('base64');
      encoding = 'base64';
    }
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
  return content;
}
