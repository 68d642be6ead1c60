/**
 * Zap receipts (issue 21, `events.zaps`): a checked receipt ({@link checkZapReceipt}) notifies
 * the zapped user as `zap` (preference category 9735), from the payer, with the amount; zaps
 * coalesce like likes (per zapped note, or per profile for a profile zap).
 */
import { ANONYMOUS_ACTOR_NAME, notificationCopy, type NotificationCopy } from '../copy.ts';
import type { ContentPlan, CopySource } from '../content.ts';
import { senderNameOrFallback, type ProfileResolver } from '../profiles.ts';
import type { CheckedZap } from './zap-receipt.ts';
import type { NotificationType } from '../../notification/types.ts';

/** The copy of a zap: "{payer} zapped you ⚡{sats} sats", the payer "Someone" when anonymous. */
class ZapCopy implements CopySource {
  private name: Promise<string> | null = null;

  constructor(
    private readonly zap: CheckedZap,
    private readonly profiles: ProfileResolver,
  ) {}

  async copyFor(type: NotificationType): Promise<NotificationCopy & { senderName: string; senderPubkey: string }> {
    this.name ??= this.zap.anonymous ? Promise.resolve(ANONYMOUS_ACTOR_NAME) : senderNameOrFallback(this.profiles, this.zap.sender);
    const senderName = await this.name;
    return { ...notificationCopy(type, senderName, this.zap.sats.toString()), senderName, senderPubkey: this.zap.sender };
  }
}

/** How a checked zap goes through the content path: one `zap` recipient, from the payer. */
export function zapPlan(zap: CheckedZap, profiles: ProfileResolver): ContentPlan {
  return {
    recipients: [{ pubkey: zap.recipient, type: 'zap' }],
    copy: new ZapCopy(zap, profiles),
    senderPubkey: zap.sender,
    // The payer's comment: what a muted word is looked for in (the receipt's own content is empty).
    senderText: zap.request.content,
  };
}
