/**
 * The messages of notification copy (issue 15): what each template is called, which fields it
 * has and which named placeholders each may use. A template set (the shipped locales, an
 * operator's overrides) is checked against this list at start-up (`compile.ts`), so a template
 * that names a placeholder its message never fills, or leaves out one the reader needs, stops the
 * service before any push is rendered with it.
 */

/** Every message a template set may define. */
export const MESSAGE_IDS = [
  'like',
  'comment',
  'mention',
  'repost',
  'newPost',
  'directMessage',
  'keyword',
  'relayEvent',
  'relayEventWithoutRelay',
  'likeSummary',
  'repostSummary',
  'reply',
  'replyWithoutText',
  'noteMention',
  'noteMentionWithoutText',
  'zap',
  'zapWithoutAmount',
  'zapSummary',
  'someone',
] as const;

export type MessageId = (typeof MESSAGE_IDS)[number];

/** Every placeholder a template may name. `count` is a number and selects plural forms. */
export const PLACEHOLDERS = ['sender', 'content', 'word', 'relay', 'count', 'sats'] as const;

export type Placeholder = (typeof PLACEHOLDERS)[number];

/** The placeholder that chooses among the plural forms of a field (`Intl.PluralRules`). */
export const PLURAL_PLACEHOLDER: Placeholder = 'count';

/**
 * The values a message is rendered with. `sender` may be empty: it then reads as the locale's
 * `someone` (a summary whose first actor has no name). `count` is written in ASCII digits, as the
 * English copy always was.
 */
export interface CopyParams {
  sender?: string;
  content?: string;
  word?: string;
  relay?: string;
  count?: number;
  /** A zap's amount in sats, as digits (issue 21). */
  sats?: string;
}

/**
 * A message and its values: what a push's title and body are rendered from. It travels with the
 * push (`PushMessage.copy`) so the delivery stage renders it again in each device's language.
 */
export interface CopyRef {
  message: MessageId;
  params: CopyParams;
}

/** The fields of a notification message. `someone` is not a notification: it has a `name` only. */
export type MessageField = 'title' | 'body' | 'name';

export interface MessageSpec {
  fields: readonly MessageField[];
  /** Placeholders any field of the message may use. */
  allowed: readonly Placeholder[];
  /**
   * Placeholders a field must use: without them the push would lose what it is about. In a plural
   * field `count` is required in the `other` form only (a language may spell "one other" out).
   */
  required: Partial<Record<MessageField, readonly Placeholder[]>>;
}

const TITLE_BODY: readonly MessageField[] = ['title', 'body'];

function spec(allowed: readonly Placeholder[], requiredInBody: readonly Placeholder[] = allowed): MessageSpec {
  return { fields: TITLE_BODY, allowed, required: { body: requiredInBody } };
}

/** What each message may and must say. */
export const MESSAGE_SPECS: Readonly<Record<MessageId, MessageSpec>> = {
  like: spec(['sender']),
  comment: spec(['sender', 'content']),
  mention: spec(['sender', 'content']),
  repost: spec(['sender']),
  newPost: spec(['sender']),
  directMessage: spec([]),
  keyword: spec(['sender', 'word']),
  relayEvent: spec(['relay']),
  relayEventWithoutRelay: spec([]),
  // `count` is the number of other people (distinct actors minus the named one), always 1 or more.
  likeSummary: spec(['sender', 'count']),
  repostSummary: spec(['sender', 'count']),
  // Kind-1 notes and zaps (issue 21): the sender is in the title of a reply or note mention.
  reply: spec(['sender', 'content'], ['content']),
  replyWithoutText: spec(['sender'], []),
  noteMention: spec(['sender', 'content'], ['content']),
  noteMentionWithoutText: spec(['sender'], []),
  zap: spec(['sender', 'sats']),
  zapWithoutAmount: spec(['sender']),
  zapSummary: spec(['sender', 'count']),
  someone: { fields: ['name'], allowed: [], required: {} },
};

export function isMessageId(value: string): value is MessageId {
  return (MESSAGE_IDS as readonly string[]).includes(value);
}

/**
 * A field's text: one string, or one string per plural category of the locale (CLDR's `zero`,
 * `one`, `two`, `few`, `many`, `other`, as `Intl.PluralRules` names them), chosen by `{count}`.
 */
export type TemplateText = string | Partial<Record<Intl.LDMLPluralRule, string>>;

/** One locale's messages, each with some or all of its fields (the rest fall back). */
export type LocaleTemplates = Partial<Record<MessageId, Partial<Record<MessageField, TemplateText>>>>;
