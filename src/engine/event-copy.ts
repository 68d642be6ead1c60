/**
 * The per-event part of notification copy (divine's `LazyEventCopy`, reference §4.4): the
 * sender's display name and, for bodies that quote the event, its mention-formatted content.
 *
 * Both are worked out at most once per event however many recipients it has, and only when first
 * asked for, which the delivery path does once a recipient has passed every gate. An event that
 * reaches nobody (no tokens, muted, already claimed) therefore costs no profile lookup.
 *
 * Trade-off kept from divine: a lookup that times out fixes the short-npub fallback name for the
 * whole fan-out of that event.
 */
import type { Logger } from '../observability/logger.ts';
import type { NostrEvent } from '../nostr/event.ts';
import { notificationCopy, rendersContent, type NotificationCopy } from './copy.ts';
import { formatContentForPush } from './mentions.ts';
import { senderNameOrFallback, type ProfileResolver } from './profiles.ts';
import type { NotificationType } from '../notification/types.ts';

export interface EventCopyParts {
  /** Display name of the event author, or the short-npub fallback. */
  senderName: string;
  /** The mention-formatted content; only present when some recipient type renders a body. */
  content?: string;
}

export interface LazyEventCopyOptions {
  event: NostrEvent;
  /**
   * The types the event is delivered as. When any renders content (comment, mention), the
   * content is formatted together with the sender name, so both lookups overlap.
   */
  types: Iterable<NotificationType>;
  profiles: ProfileResolver;
  logger?: Logger;
}

/**
 * A promise made on the first call and shared by every later call. The producers used here
 * never reject (name and mention lookups degrade to fallbacks), so a memoised promise is always
 * a usable answer.
 */
function memoise<T>(produce: () => Promise<T>): () => Promise<T> {
  let memo: Promise<T> | null = null;
  return () => (memo ??= produce());
}

export class LazyEventCopy {
  private readonly needsContent: boolean;
  private readonly senderName: () => Promise<string>;
  private readonly formattedContent: () => Promise<string>;

  constructor(options: LazyEventCopyOptions) {
    this.needsContent = [...options.types].some(rendersContent);
    const { event, profiles, logger } = options;
    this.senderName = memoise(() => senderNameOrFallback(profiles, event.pubkey));
    this.formattedContent = memoise(() =>
      formatContentForPush(event.content, (pubkey) => profiles.displayName(pubkey), logger === undefined ? {} : { logger }),
    );
  }

  /** The event-scoped parts, resolved on the first call and shared afterwards. */
  async parts(): Promise<EventCopyParts> {
    if (!this.needsContent) return { senderName: await this.senderName() };
    const [senderName, content] = await Promise.all([this.senderName(), this.formattedContent()]);
    return { senderName, content };
  }

  /**
   * Title and body for one recipient's type. A content type asked for although none was
   * announced still gets its formatted content (resolved then, and once).
   */
  async copyFor(type: NotificationType): Promise<NotificationCopy & { senderName: string }> {
    const parts = await this.parts();
    const content = rendersContent(type) ? (parts.content ?? (await this.formattedContent())) : undefined;
    return { ...notificationCopy(type, parts.senderName, content), senderName: parts.senderName };
  }
}
