/**
 * Template sets: checked and compiled once at start-up, rendered per device.
 *
 * Syntax (docs/copy.md): a field is a string in which `{name}` is a placeholder of the message
 * (`messages.ts`); `{` and `}` are reserved, so a stray brace is an error rather than text. A
 * field of a message with `{count}` may instead be one string per plural category of its locale
 * (`{"one": "…", "other": "…"}`), chosen with `Intl.PluralRules`; it must name every category the
 * locale has, and no other. Every problem is found before the service starts (config
 * validation), each with where it is, so a broken template never reaches a push.
 */
import { BASE_LOCALE, BUILTIN_TEMPLATES } from './builtin.ts';
import {
  isMessageId,
  MESSAGE_SPECS,
  PLACEHOLDERS,
  PLURAL_PLACEHOLDER,
  type CopyParams,
  type CopyRef,
  type MessageField,
  type MessageId,
  type Placeholder,
} from './messages.ts';

/** A template part: literal text, or the placeholder it names. */
type Part = string | { placeholder: Placeholder };

/** A compiled field: one text, or one per plural category. */
type CompiledText = { kind: 'plain'; parts: Part[] } | { kind: 'plural'; forms: Map<string, Part[]> };

type CompiledLocale = Map<MessageId, Map<MessageField, CompiledText>>;

/** Templates of one locale from one origin, as read (unchecked). Later sources override earlier ones field by field. */
export interface TemplateSource {
  /** Where they came from, for messages: `shipped`, `config templates.locales`, a file of `templates.dir`. */
  origin: string;
  /** The locale as written (a BCP 47 tag; canonicalised here). */
  locale: string;
  templates: unknown;
}

/** The rendered copy of one message. */
export interface RenderedCopy {
  title: string;
  body: string;
}

/** A template set with problems: each one a line saying where and what. */
export class TemplateError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid templates:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'TemplateError';
  }
}

/** The canonical form of a BCP 47 tag (`pt-br` → `pt-BR`; `pt_BR` as Java writes it is accepted), or null. */
export function canonicalLocale(tag: string): string | null {
  const trimmed = tag.trim().replaceAll('_', '-');
  if (trimmed === '' || trimmed.length > MAX_LOCALE_CHARS) return null;
  try {
    return Intl.getCanonicalLocales(trimmed)[0] ?? null;
  } catch {
    return null;
  }
}

/** Longest locale tag accepted (real ones are a dozen characters; extensions can be longer). */
export const MAX_LOCALE_CHARS = 64;

/** Split `text` into literal text and placeholders; a reason string when it does not parse. */
export function parseTemplate(text: string): Part[] | string {
  const parts: Part[] = [];
  let at = 0;
  while (at < text.length) {
    const open = text.indexOf('{', at);
    const strayClose = text.indexOf('}', at);
    if (strayClose !== -1 && (open === -1 || strayClose < open)) return `a "}" without its "{" at character ${strayClose + 1}`;
    if (open === -1) {
      parts.push(text.slice(at));
      break;
    }
    if (open > at) parts.push(text.slice(at, open));
    const close = text.indexOf('}', open);
    if (close === -1) return `a "{" without its "}" at character ${open + 1}`;
    const name = text.slice(open + 1, close);
    if (!(PLACEHOLDERS as readonly string[]).includes(name))
      return `unknown placeholder {${name}} (placeholders: ${PLACEHOLDERS.map((p) => `{${p}}`).join(', ')})`;
    parts.push({ placeholder: name as Placeholder });
    at = close + 1;
  }
  return parts;
}

function placeholdersOf(parts: readonly Part[]): Set<Placeholder> {
  return new Set(parts.flatMap((part) => (typeof part === 'string' ? [] : [part.placeholder])));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Check one template string of `message`; the placeholders it must use are `required`. */
function compileString(
  text: unknown,
  message: MessageId,
  required: readonly Placeholder[],
  where: string,
  problems: string[],
): Part[] | null {
  if (typeof text !== 'string') {
    problems.push(`${where}: must be a string`);
    return null;
  }
  const parts = parseTemplate(text);
  if (typeof parts === 'string') {
    problems.push(`${where}: ${parts}`);
    return null;
  }
  const used = placeholdersOf(parts);
  const allowed = MESSAGE_SPECS[message].allowed;
  const unknown = [...used].filter((p) => !allowed.includes(p));
  const missing = required.filter((p) => !used.has(p));
  if (unknown.length > 0)
    problems.push(
      `${where}: unknown placeholder ${unknown.map((p) => `{${p}}`).join(', ')} (${message} has ${allowed.length === 0 ? 'none' : allowed.map((p) => `{${p}}`).join(', ')})`,
    );
  if (missing.length > 0) problems.push(`${where}: missing placeholder ${missing.map((p) => `{${p}}`).join(', ')}`);
  return unknown.length > 0 || missing.length > 0 ? null : parts;
}

const pluralRulesByLocale = new Map<string, Intl.PluralRules>();
function pluralRules(locale: string): Intl.PluralRules {
  let rules = pluralRulesByLocale.get(locale);
  if (!rules) {
    rules = new Intl.PluralRules(locale);
    pluralRulesByLocale.set(locale, rules);
  }
  return rules;
}

/** The plural categories `locale` distinguishes (`Intl.PluralRules`), e.g. `one`, `other` for English. */
export function pluralCategories(locale: string): string[] {
  return pluralRules(locale).resolvedOptions().pluralCategories;
}

function compileField(
  value: unknown,
  locale: string,
  message: MessageId,
  field: MessageField,
  where: string,
  problems: string[],
): CompiledText | null {
  const required = MESSAGE_SPECS[message].required[field] ?? [];
  if (!isPlainObject(value)) {
    const parts = compileString(value, message, required, where, problems);
    return parts ? { kind: 'plain', parts } : null;
  }
  if (!MESSAGE_SPECS[message].allowed.includes(PLURAL_PLACEHOLDER)) {
    problems.push(`${where}: plural forms need {${PLURAL_PLACEHOLDER}}, which ${message} does not have`);
    return null;
  }
  const categories = pluralCategories(locale);
  const unknown = Object.keys(value).filter((c) => !categories.includes(c));
  const missing = categories.filter((c) => !(c in value));
  if (unknown.length > 0)
    problems.push(`${where}: ${locale} has no plural category ${unknown.join(', ')} (it has ${categories.join(', ')})`);
  if (missing.length > 0)
    problems.push(`${where}: missing plural category ${missing.join(', ')} (${locale} needs ${categories.join(', ')})`);
  const forms = new Map<string, Part[]>();
  for (const category of categories) {
    if (!(category in value)) continue;
    // A language may spell the number out in its singular ("one other"): {count} is required in `other` only.
    const formRequired = category === 'other' ? required : required.filter((p) => p !== PLURAL_PLACEHOLDER);
    const parts = compileString(value[category], message, formRequired, `${where}.${category}`, problems);
    if (parts) forms.set(category, parts);
  }
  return unknown.length > 0 || missing.length > 0 || forms.size !== categories.length ? null : { kind: 'plural', forms };
}

function compileLocale(source: TemplateSource, locale: string, into: CompiledLocale, problems: string[]): void {
  const at = `templates (${source.origin}) ${locale}`;
  if (!isPlainObject(source.templates)) {
    problems.push(`${at}: must be a mapping of message names to their fields`);
    return;
  }
  for (const [message, fields] of Object.entries(source.templates)) {
    if (!isMessageId(message)) {
      problems.push(`${at}: unknown message "${message}" (messages: ${Object.keys(MESSAGE_SPECS).join(', ')})`);
      continue;
    }
    if (!isPlainObject(fields)) {
      problems.push(`${at}.${message}: must be a mapping of ${MESSAGE_SPECS[message].fields.join(', ')}`);
      continue;
    }
    let compiled = into.get(message);
    if (!compiled) into.set(message, (compiled = new Map<MessageField, CompiledText>()));
    for (const [field, value] of Object.entries(fields)) {
      if (!(MESSAGE_SPECS[message].fields as readonly string[]).includes(field)) {
        problems.push(`${at}.${message}: unknown field "${field}" (fields: ${MESSAGE_SPECS[message].fields.join(', ')})`);
        continue;
      }
      const text = compileField(value, locale, message, field as MessageField, `${at}.${message}.${field}`, problems);
      if (text) compiled.set(field as MessageField, text);
    }
  }
}

/** Most device locales whose fallback chains are kept (a chain is a handful of strings). */
const CHAIN_CACHE_ENTRIES = 1000;

/**
 * A compiled template set. {@link Copywriter.render} never throws: every template was checked
 * when the set was compiled, and `en` (complete) ends every fallback chain.
 */
export class Copywriter {
  private readonly chains = new Map<string, string[]>();

  constructor(
    private readonly locales: ReadonlyMap<string, CompiledLocale>,
    /** The locale of devices that registered none (canonical). */
    readonly defaultLocale: string,
  ) {}

  /** The locales with templates, canonical tags. */
  get localeNames(): string[] {
    return [...this.locales.keys()];
  }

  /**
   * The locales tried for `locale`, most specific first, ending in the default locale's chain and
   * `en`: `pt-BR` → `pt-BR`, `pt`, `en` (those that have templates). Absent: the default locale's.
   */
  chain(locale: string | undefined): string[] {
    const key = locale ?? '';
    let chain = this.chains.get(key);
    if (chain) return chain;
    const candidates = [...(locale === undefined ? [] : subtagChain(locale)), ...subtagChain(this.defaultLocale), BASE_LOCALE];
    chain = [...new Set(candidates)].filter((l) => this.locales.has(l));
    if (this.chains.size >= CHAIN_CACHE_ENTRIES) this.chains.clear();
    this.chains.set(key, chain);
    return chain;
  }

  /** Title and body of `ref` in `locale` (a canonical tag; absent: the default locale). */
  render(ref: CopyRef, locale?: string): RenderedCopy {
    const chain = this.chain(locale);
    return { title: this.field(ref, 'title', chain), body: this.field(ref, 'body', chain) };
  }

  private field(ref: CopyRef, field: MessageField, chain: readonly string[]): string {
    for (const locale of chain) {
      const text = this.locales.get(locale)?.get(ref.message)?.get(field);
      if (text) return this.fill(text, locale, ref.params, chain);
    }
    // Unreachable with a compiled set: `en` has every field of every message.
    return '';
  }

  private fill(text: CompiledText, locale: string, params: CopyParams, chain: readonly string[]): string {
    const parts = text.kind === 'plain' ? text.parts : (text.forms.get(pluralRules(locale).select(params.count ?? 0)) ?? []);
    let out = '';
    for (const part of parts) {
      if (typeof part === 'string') out += part;
      else if (part.placeholder === 'count') out += String(params.count ?? 0);
      else if (part.placeholder === 'sender' && (params.sender ?? '') === '')
        out += this.field({ message: 'someone', params: {} }, 'name', chain);
      else out += params[part.placeholder] ?? '';
    }
    return out;
  }
}

/** `zh-Hant-TW` → `zh-Hant-TW`, `zh-Hant`, `zh-TW`, `zh`; extensions dropped after the full tag. */
function subtagChain(tag: string): string[] {
  let parsed: Intl.Locale;
  try {
    parsed = new Intl.Locale(tag);
  } catch {
    return [];
  }
  const { language, script, region } = parsed;
  const chain = [tag, parsed.baseName];
  if (script !== undefined) chain.push(`${language}-${script}`);
  if (region !== undefined) chain.push(`${language}-${region}`);
  chain.push(language);
  return chain;
}

/**
 * Check and compile the shipped templates overlaid with `sources` (in order: later fields win),
 * for devices without a locale reading `defaultLocale`.
 *
 * @throws TemplateError listing every problem.
 */
export function compileTemplates(sources: readonly TemplateSource[] = [], defaultLocale: string = BASE_LOCALE): Copywriter {
  const problems: string[] = [];
  const locales = new Map<string, CompiledLocale>();
  const shipped = Object.entries(BUILTIN_TEMPLATES).map(([locale, templates]) => ({ origin: 'shipped', locale, templates }));
  for (const source of [...shipped, ...sources]) {
    const locale = canonicalLocale(source.locale);
    if (locale === null) {
      problems.push(`templates (${source.origin}): "${source.locale}" is not a BCP 47 language tag (e.g. pt-BR)`);
      continue;
    }
    let compiled = locales.get(locale);
    if (!compiled) locales.set(locale, (compiled = new Map<MessageId, Map<MessageField, CompiledText>>()));
    compileLocale(source, locale, compiled, problems);
  }
  const canonicalDefault = canonicalLocale(defaultLocale);
  if (canonicalDefault === null) problems.push(`templates.default_locale: "${defaultLocale}" is not a BCP 47 language tag`);
  if (problems.length > 0) throw new TemplateError(problems);
  return new Copywriter(locales, canonicalDefault ?? BASE_LOCALE);
}

/** The shipped templates alone, English for devices without a locale. */
export const SHIPPED_COPYWRITER: Copywriter = compileTemplates();
