/**
 * Notification copy: the exact title/body strings of reference §7.2. The mobile app displays
 * these as they are, so every string here is part of the wire contract.
 */
import type { NotificationType } from '../delivery/types.ts';

/** Longest comment/mention excerpt in a body, in Unicode code points, before "..." is appended. */
export const BODY_EXCERPT_MAX_CHARS = 150;

/** What a summary calls its first actor when there is no name at all. */
export const ANONYMOUS_ACTOR_NAME = 'Someone';

export interface NotificationCopy {
  title: string;
  body: string;
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
 * The copy of one notification. `content` is used by comment and mention only, and should
 * already be mention-formatted (see `formatContentForPush`).
 */
export function notificationCopy(type: NotificationType, senderName: string, content = ''): NotificationCopy {
  switch (type) {
    case 'like':
      return { title: 'New like', body: `${senderName} liked your post` };
    case 'comment':
      return { title: 'New comment', body: `${senderName}: ${truncateChars(content, BODY_EXCERPT_MAX_CHARS)}` };
    case 'mention':
      return { title: 'You were mentioned', body: `${senderName}: ${truncateChars(content, BODY_EXCERPT_MAX_CHARS)}` };
    case 'repost':
      return { title: 'New repost', body: `${senderName} reposted your post` };
    case 'newPost':
      // Provisional wording; the body must stay non-empty or the app drops foreground pushes.
      return { title: 'New vine', body: `${senderName} posted a new vine` };
    case 'directMessage':
      return { title: 'New message', body: 'You have a new message' };
    case 'keyword':
      // `content` is the alert word (issue 13's copy).
      return { title: 'Alert word', body: `${senderName} mentioned “${content}”` };
    case 'relayEvent':
      // `content` is the relay's host; nothing of the event is known to quote.
      return { title: 'New activity', body: content === '' ? 'New activity' : `New activity on ${content}` };
    case 'reply':
      return textNoteCopy('reply', senderName, content);
    case 'zap':
      // `content` is the amount in sats (issue 21's copy); the sender is the zap request's author.
      return { title: 'New zap', body: `${senderName} zapped you ⚡${content} sats` };
  }
}

/**
 * The copy of a kind-1 note's reply or mention (issue 21): the sender in the title, the note's
 * mention-formatted text as the body. A kind-1 mention has its own wording; divine's 30023/34236
 * mention copy stays as it is.
 */
export function textNoteCopy(type: 'reply' | 'mention', senderName: string, content: string): NotificationCopy {
  const title = type === 'reply' ? `${senderName} replied` : `${senderName} mentioned you`;
  // Never an empty body: the app drops foreground pushes without one (see newPost).
  const body =
    content === ''
      ? type === 'reply'
        ? 'Replied to your note'
        : 'Mentioned you in a note'
      : truncateChars(content, BODY_EXCERPT_MAX_CHARS);
  return { title, body };
}

/**
 * The copy of a coalesced like/repost summary. `distinctActors` is the number of different
 * people in the group, including the named first actor; an empty name reads "Someone".
 * Any type other than repost reads as likes, as divine does.
 *
 * @example summaryCopy('like', 'alice', 13) // { title: 'New likes', body: 'alice and 12 others liked your post' }
 */
export function summaryCopy(type: NotificationType, firstActorName: string, distinctActors: number): NotificationCopy {
  const name = firstActorName === '' ? ANONYMOUS_ACTOR_NAME : firstActorName;
  const several = distinctActors > 1;
  const others = distinctActors === 2 ? '1 other' : `${distinctActors - 1} others`;
  if (type === 'zap') {
    // A summary counts people, not sats: groups keep no amounts.
    return several ? { title: 'New zaps', body: `${name} and ${others} zapped you` } : { title: 'New zap', body: `${name} zapped you` };
  }
  if (type === 'repost') {
    return several
      ? { title: 'New reposts', body: `${name} and ${others} reposted your post` }
      : { title: 'New repost', body: `${name} reposted your post` };
  }
  return several
    ? { title: 'New likes', body: `${name} and ${others} liked your post` }
    : { title: 'New like', body: `${name} liked your post` };
}
