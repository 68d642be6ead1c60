/**
 * Action buttons (`X-Actions`, `Actions`, `Action`, and `actions` in a JSON publish), parsed and
 * checked the way ntfy does (its `parseActions`):
 *
 * - a value starting with `[` is a JSON array of action objects (keys matched in any case, as Go's
 *   JSON decoder does; unknown keys ignored; `clear` a boolean, `headers`/`extras` string maps);
 * - anything else is the simple format: actions separated by `;`, fields by `,`, each field
 *   `key=value` or a bare value that stands for `action`, `label`, then `url` (view, http) or
 *   `value` (copy) by position; `headers.X=…` and `extras.X=…` fill the maps; a value may be
 *   quoted with `"` or `'` (a backslash escapes the quote) to hold commas and semicolons;
 * - then every action gets a random 10-character id, its type lower-cased and its method
 *   upper-cased, and is checked: at most {@link MAX_ACTIONS}; a known type; a label; a URL for
 *   view and http; a value for copy; no body on a GET or HEAD request.
 *
 * Every refusal is ntfy's 400 40018 with the reason.
 */
import { randomInt } from 'node:crypto';
import type { NtfyAction } from '../store/port-ntfy.ts';
import { NtfyError } from './errors.ts';

/** ntfy's limit: a notification shows at most three buttons. */
export const MAX_ACTIONS = 3;
/** ntfy's action id length. */
const ACTION_ID_LENGTH = 10;
const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const ACTION_TYPES = ['view', 'broadcast', 'http', 'copy'] as const;
/** Types whose third bare field is the URL. */
const URL_TYPES: ReadonlySet<string> = new Set(['view', 'http']);
const BOOLEAN_VALUES: Readonly<Record<string, boolean>> = { true: true, yes: true, '1': true, false: false, no: false, '0': false };
/** A `key=` at the start of a field (Go's `\w` is ASCII). */
const KEY_PATTERN = /^([-.\w]+)\s*=\s*/;

/** An action as parsed, before its id and checks. */
interface DraftAction {
  action: string;
  label: string;
  clear: boolean;
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  intent: string;
  extras: Record<string, string>;
  value: string;
}

function draft(): DraftAction {
  return { action: '', label: '', clear: false, url: '', method: '', headers: {}, body: '', intent: '', extras: {}, value: '' };
}

function invalid(reason: string): NtfyError {
  return new NtfyError('ACTIONS_INVALID', reason);
}

function randomActionId(): string {
  let id = '';
  for (let i = 0; i < ACTION_ID_LENGTH; i++) id += ID_ALPHABET.charAt(randomInt(ID_ALPHABET.length));
  return id;
}

// ---- the simple format ---------------------------------------------------------------------

const isSpace = (char: string | undefined): boolean => char === ' ' || char === '\t' || char === '\r' || char === '\n';
const isSectionEnd = (char: string | undefined): boolean => char === undefined || char === ';' || char === ',';
const isLastSection = (char: string | undefined): boolean => char === undefined || char === ';';

/** A cursor over the simple format, as ntfy's `actionParser`. */
class SimpleParser {
  private pos = 0;

  constructor(private readonly input: string) {}

  parse(): DraftAction[] {
    const actions: DraftAction[] = [];
    while (this.pos < this.input.length) actions.push(this.parseAction());
    return actions;
  }

  private peek(): string | undefined {
    return this.pos < this.input.length ? this.input.charAt(this.pos) : undefined;
  }

  private skipSpaces(): void {
    while (isSpace(this.peek())) this.pos += 1;
  }

  /** Fields up to the end of the input or a `;`. */
  private parseAction(): DraftAction {
    const action = draft();
    for (let section = 0; ; section++) {
      const { key, value, last } = this.parseSection();
      populate(action, section, key, value);
      this.skipSpaces();
      if (last) return action;
    }
  }

  /** One `key=value` (or bare value) up to a `,`, a `;` or the end. */
  private parseSection(): { key: string; value: string; last: boolean } {
    this.skipSpaces();
    const match = KEY_PATTERN.exec(this.input.slice(this.pos));
    let key = '';
    if (match?.[1]) {
      key = match[1];
      this.pos += match[0].length;
    }
    const char = this.peek();
    if (isSectionEnd(char)) {
      this.pos += 1;
      return { key, value: '', last: isLastSection(char) };
    }
    if (char === '"' || char === "'") return { key, ...this.parseQuoted(char) };
    return { key, ...this.parseValue() };
  }

  private parseValue(): { value: string; last: boolean } {
    const start = this.pos;
    while (!isSectionEnd(this.peek())) this.pos += 1;
    const end = this.peek();
    const value = this.input.slice(start, this.pos).trim();
    this.pos += 1;
    return { value, last: isLastSection(end) };
  }

  private parseQuoted(quote: string): { value: string; last: boolean } {
    this.pos += 1;
    const start = this.pos;
    let previous = '';
    for (;;) {
      const char = this.peek();
      if (char === undefined) throw invalid(`unexpected end of input, quote started at position ${start}`);
      if (char === quote && previous !== '\\') {
        const value = this.input.slice(start, this.pos).split(`\\${quote}`).join(quote);
        this.pos += 1;
        this.skipSpaces();
        const end = this.peek();
        if (!isSectionEnd(end)) throw invalid(`unexpected character '${end ?? ''}' at position ${this.pos}`);
        this.pos += 1;
        return { value, last: isLastSection(end) };
      }
      previous = char;
      this.pos += 1;
    }
  }
}

/** Apply one field to an action (ntfy's `populateAction`). */
function populate(action: DraftAction, section: number, rawKey: string, value: string): void {
  let key = rawKey;
  if (key === '' && section === 0) key = 'action';
  else if (key === '' && section === 1) key = 'label';
  else if (key === '' && section === 2 && URL_TYPES.has(action.action)) key = 'url';
  else if (key === '' && section === 2 && action.action === 'copy') key = 'value';
  if (key === '') throw invalid(`term '${value}' unknown`);
  if (key.startsWith('headers.')) {
    action.headers[key.slice('headers.'.length)] = value;
    return;
  }
  if (key.startsWith('extras.')) {
    action.extras[key.slice('extras.'.length)] = value;
    return;
  }
  switch (key.toLowerCase()) {
    case 'action':
      action.action = value;
      return;
    case 'label':
      action.label = value;
      return;
    case 'clear': {
      const flag = BOOLEAN_VALUES[value.toLowerCase()];
      if (flag === undefined)
        throw invalid(`parameter 'clear' cannot be '${value}', only boolean values are allowed (true/yes/1/false/no/0)`);
      action.clear = flag;
      return;
    }
    case 'url':
      action.url = value;
      return;
    case 'method':
      action.method = value;
      return;
    case 'body':
      action.body = value;
      return;
    case 'intent':
      action.intent = value;
      return;
    case 'value':
      action.value = value;
      return;
    default:
      throw invalid(`key '${key}' unknown`);
  }
}

// ---- the JSON format -----------------------------------------------------------------------

const STRING_FIELDS = ['action', 'label', 'url', 'method', 'body', 'intent', 'value'] as const;

function stringMapField(value: unknown, field: string): Record<string, string> {
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid(`JSON error: ${field} must be an object of strings`);
  const map: Record<string, string> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry !== 'string') throw invalid(`JSON error: ${field}.${key} must be a string`);
    map[key] = entry;
  }
  return map;
}

/** One element of a JSON array, keys matched in any case (later keys win, as in Go). */
function fromJsonObject(element: unknown): DraftAction {
  if (typeof element !== 'object' || element === null || Array.isArray(element)) throw invalid('JSON error: an action must be an object');
  const action = draft();
  for (const [rawKey, value] of Object.entries(element as Record<string, unknown>)) {
    const key = rawKey.toLowerCase();
    if ((STRING_FIELDS as readonly string[]).includes(key)) {
      if (value !== null && typeof value !== 'string') throw invalid(`JSON error: ${key} must be a string`);
      action[key as (typeof STRING_FIELDS)[number]] = value ?? '';
    } else if (key === 'clear') {
      if (value !== null && typeof value !== 'boolean') throw invalid('JSON error: clear must be a boolean');
      action.clear = value === true;
    } else if (key === 'headers' || key === 'extras') {
      action[key] = stringMapField(value, key);
    }
  }
  return action;
}

/** Actions given as a parsed JSON value (the `actions` field of a JSON publish). */
export function actionsFromJson(value: unknown): NtfyAction[] {
  if (!Array.isArray(value)) throw invalid('JSON error: actions must be an array');
  return finish(value.map(fromJsonObject));
}

// ---- checks ----------------------------------------------------------------------------------

function finish(drafts: DraftAction[]): NtfyAction[] {
  if (drafts.length > MAX_ACTIONS) throw invalid(`only ${MAX_ACTIONS} actions allowed`);
  return drafts.map((d) => {
    const type = d.action.toLowerCase();
    const method = d.method.toUpperCase();
    if (!(ACTION_TYPES as readonly string[]).includes(type))
      throw invalid(`parameter 'action' cannot be '${d.action}', valid values are 'view', 'broadcast', 'http' and 'copy'`);
    if (d.label === '') throw invalid("parameter 'label' is required");
    if (URL_TYPES.has(type) && d.url === '') throw invalid(`parameter 'url' is required for action '${type}'`);
    if (type === 'copy' && d.value === '') throw invalid("parameter 'value' is required for action 'copy'");
    if (type === 'http' && (method === 'GET' || method === 'HEAD') && d.body !== '')
      throw invalid(`parameter 'body' cannot be set if method is ${method}`);
    const action: NtfyAction = { id: randomActionId(), action: type as NtfyAction['action'], label: d.label, clear: d.clear };
    if (d.url !== '') action.url = d.url;
    if (method !== '') action.method = method;
    if (Object.keys(d.headers).length > 0) action.headers = d.headers;
    if (d.body !== '') action.body = d.body;
    if (d.intent !== '') action.intent = d.intent;
    if (Object.keys(d.extras).length > 0) action.extras = d.extras;
    if (d.value !== '') action.value = d.value;
    return action;
  });
}

/** The actions of an `X-Actions` value (JSON array or simple format), checked. Throws 40018. */
export function parseActions(text: string): NtfyAction[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed) as unknown;
    } catch (err) {
      throw invalid(`JSON error: ${(err as Error).message}`);
    }
    return actionsFromJson(parsed);
  }
  return finish(new SimpleParser(trimmed).parse());
}
