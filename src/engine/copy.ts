/**
 * Notification copy: the exact title/body strings of reference §7.2, now the `en` templates
 * (`templates/builtin.ts`). The mobile app displays these as they are, so every English string is
 * part of the wire contract; the engine builds every push in English, and the delivery stage
 * renders the same template again for devices registered in another language (issue 15).
 */
import { BASE_LOCALE } from '../notification/templates/builtin.ts';
import { SHIPPED_COPYWRITER } from '../notification/templates/compile.ts';
import type { CopyRef } from '../notification/templates/messages.ts';
import type { NotificationType } from '../notification/types.ts';

/** Longest comment/mention excerpt in a body, in Unicode code points, before "..." is appended. */
export const BODY_EXCERPT_MAX_CHARS = 150;

/** What a summary calls its first actor when there is no name at all. */
export const ANONYMOUS_ACTOR_NAME = 'Someone';

export interface NotificationCopy {
  title: string;
  body: string;
  /** The template the title and body were rendered from; absent for copy that is not templated (the send API's). */
  template?: CopyRef;
}

/**
 * The first `maxChars` code points of `text` followed by "...", or `text` unchanged when it is
 * not longer than that. Code points, not UTF-16 units, so an emoji is never cut in half.
 *
 * @example truncateChars('hello world!', 5) // 'hello...'
 */
export function truncateChars(text: string, maxChars: number): string {
  // A string has at least as many UTF-16 units as code points: a short one cannot be too long.
  if (text.length <= maxChars) return text;
  const chars = Array.from(text);
  return chars.length <= maxChars ? text : `${chars.slice(0, maxChars).join('')}...`;
}

/** True for the types whose body quotes the event content (and so needs it mention-formatted). */
export function rendersContent(type: NotificationType): boolean {
  return type === 'comment' || type === 'mention' || type === 'reply';
}

/**
 * The template of one notification: its message and values. `content` is used by comment and
 * mention (mention-formatted, see `formatContentForPush`, and cut to {@link BODY_EXCERPT_MAX_CHARS}),
 * by keyword (the alert word) and by relayEvent (the relay's host).
 */
export function notificationTemplate(type: NotificationType, senderName: string, content = ''): CopyRef {
  switch (type) {
    case 'comment':
    case 'mention':
      return { message: type, params: { sender: senderName, content: truncateChars(content, BODY_EXCERPT_MAX_CHARS) } };
    case 'keyword':
      // `content` is the alert word (issue 13's copy).
      return { message: 'keyword', params: { sender: senderName, word: content } };
    case 'relayEvent':
      // `content` is the relay's host; nothing of the event is known to quote.
      return content === '' ? { message: 'relayEventWithoutRelay', params: {} } : { message: 'relayEvent', params: { relay: content } };
    case 'directMessage':
      return { message: 'directMessage', params: {} };
    case 'like':
    case 'repost':
    case 'newPost':
      return { message: type, params: { sender: senderName } };
    case 'reply':
      return textNoteTemplate('reply', senderName, content);
    case 'zap':
      // `content` is the amount in sats (issue 21's copy); the sender is the zap request's author.
      return { message: 'zap', params: { sender: senderName, sats: content } };
  }
}

/**
/**
 * The copy of one notification in English (the `en` templates, the wire contract), with the
 * template it came from so the delivery stage can render it in each device's language.
 * `content` as for {@link notificationTemplate}.
 */
export function notificationCopy(type: NotificationType, senderName: string, content = ''): NotificationCopy {
  return renderedCopy(notificationTemplate(type, senderName, content));
}

/**
 * The template of a kind-1 note's reply or mention (issue 21): the sender in the title, the note's
 * mention-formatted text as the body. A kind-1 mention has its own wording; divine's 30023/34236
 * mention copy stays as it is. Never an empty body: the app drops foreground pushes without one.
 */
function textNoteTemplate(type: 'reply' | 'mention', senderName: string, content: string): CopyRef {
  if (content === '') return { message: type === 'reply' ? 'replyWithoutText' : 'noteMentionWithoutText', params: { sender: senderName } };
  return {
    message: type === 'reply' ? 'reply' : 'noteMention',
    params: { sender: senderName, content: truncateChars(content, BODY_EXCERPT_MAX_CHARS) },
  };
}

/** The copy of a kind-1 note's reply or mention (issue 21), see {@link textNoteTemplate}. */
export function textNoteCopy(type: 'reply' | 'mention', senderName: string, content: string): NotificationCopy {
  return renderedCopy(textNoteTemplate(type, senderName, content));
}

/**
 * The copy of a coalesced like/repost summary. `distinctActors` is the number of different
 * people in the group, including the named first actor; an empty name reads "Someone" (each
 * locale's `someone`). Any type other than repost reads as likes, as divine does.
 *
 * @example summaryCopy('like', 'alice', 13) // { title: 'New likes', body: 'alice and 12 others liked your post', … }
 */
export function summaryCopy(type: NotificationType, firstActorName: string, distinctActors: number): NotificationCopy {
  const several = distinctActors > 1;
  const template: CopyRef =
    type === 'zap'
      ? // A summary counts people, not sats: groups keep no amounts.
        several
        ? { message: 'zapSummary', params: { sender: firstActorName, count: distinctActors - 1 } }
        : { message: 'zapWithoutAmount', params: { sender: firstActorName } }
      : several
        ? { message: type === 'repost' ? 'repostSummary' : 'likeSummary', params: { sender: firstActorName, count: distinctActors - 1 } }
        : { message: type === 'repost' ? 'repost' : 'like', params: { sender: firstActorName } };
  return renderedCopy(template);
}

function renderedCopy(template: CopyRef): NotificationCopy {
  return { ...SHIPPED_COPYWRITER.render(template, BASE_LOCALE), template };
}
