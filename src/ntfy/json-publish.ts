/**
 * Publishing as JSON (`PUT`/`POST /` with `{"topic": …, "message": …}`), as Apprise, PowerShell
 * and ntfy's own web app send it. ntfy turns the body's fields into the headers of an ordinary
 * publish (`transformBodyJSON`); so does this: a field set in the body is read as its header would
 * be, ahead of the request's own headers, so every option has one set of rules and errors.
 *
 * Keys are matched in any case, as Go's JSON decoder matches them (`Topic`, `Message` and
 * `Actions` from PowerShell's `ConvertTo-Json`); unknown keys are ignored; a field of the wrong
 * type is ntfy's 40024.
 */
import { NtfyError } from './errors.ts';
import { EMPTY_MESSAGE_TEXT, type ParamSource } from './publish-params.ts';

/** Body fields read as the header of the same option (header names as `publish-options.ts` reads them first). */
const STRING_FIELDS: Readonly<Record<string, string>> = {
  title: 'x-title',
  click: 'x-click',
  icon: 'x-icon',
  attach: 'x-attach',
  filename: 'x-filename',
  email: 'x-email',
  call: 'x-call',
  delay: 'x-delay',
  timezone: 'x-timezone',
  sequence_id: 'x-sequence-id',
  template: 'x-template',
};
/** Switches that may come as a boolean or as ntfy's string form (`"no"`). */
const SWITCH_FIELDS: Readonly<Record<string, string>> = { markdown: 'x-markdown', cache: 'x-cache', firebase: 'x-firebase' };

export interface JsonPublishRequest {
  topic: string;
  /** The message text (ntfy's `triggered` when empty), published as the body. */
  message: string;
  /** The request's parameters with the body's fields in front. */
  params: ParamSource;
  /** The `actions` array as given (checked by `actionsFromJson`), or undefined. */
  actions: unknown;
}

function wrongType(field: string, type: string): NtfyError {
  return new NtfyError('JSON_INVALID', `${field} must be ${type}`);
}

/** The fields of a JSON publish body over the request's own parameters. Throws 40024 or 40009. */
export function jsonPublishRequest(body: Buffer, request: ParamSource): JsonPublishRequest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new NtfyError('JSON_INVALID');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new NtfyError('JSON_INVALID');
  const headers = new Map<string, string>();
  let topic: string | undefined;
  let message = '';
  let actions: unknown;
  for (const [rawKey, value] of Object.entries(parsed)) {
    if (value === null || value === undefined) continue;
    const key = rawKey.toLowerCase();
    const header = STRING_FIELDS[key];
    if (key === 'topic' || key === 'message' || header !== undefined) {
      if (typeof value !== 'string') throw wrongType(key, 'a string');
      if (key === 'topic') topic = value;
      else if (key === 'message') message = value;
      else if (value !== '' && header !== undefined) headers.set(header, value);
    } else if (key === 'priority') {
      if (typeof value !== 'number' && typeof value !== 'string') throw wrongType('priority', 'a number');
      if (value !== 0 && value !== '') headers.set('x-priority', String(value));
    } else if (key === 'tags') {
      if (!Array.isArray(value) || !value.every((t): t is string => typeof t === 'string')) throw wrongType('tags', 'a list of strings');
      if (value.length > 0) headers.set('x-tags', value.join(','));
    } else if (key === 'actions') {
      actions = value;
    } else if (SWITCH_FIELDS[key] !== undefined) {
      if (typeof value !== 'boolean' && typeof value !== 'string') throw wrongType(key, 'a boolean');
      const text = typeof value === 'boolean' ? (value ? 'yes' : 'no') : value;
      // ntfy sets Markdown only when true; Cache and Firebase only matter when turned off.
      if (text !== '' && !(key === 'markdown' && text === 'no')) headers.set(SWITCH_FIELDS[key], text);
    }
  }
  if (topic === undefined) throw new NtfyError('TOPIC_INVALID');
  return {
    topic,
    message: message === '' ? EMPTY_MESSAGE_TEXT : message,
    actions,
    params: {
      header: (name) => headers.get(name.toLowerCase()) ?? request.header(name),
      query: (name) => request.query(name),
    },
  };
}
