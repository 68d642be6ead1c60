/**
 * The engine's entry for an app's optional kinds (issue 21, docs/events.md): kind-1 notes, zap
 * receipts and gift wraps, each only when the app's `events:` settings turn it on. Anything else,
 * and these kinds while off, is not handled here and takes divine's path unchanged.
 */
import type { EventsConfig } from '../../config/defaults.ts';
import type { EventVerifier, NostrEvent } from '../../nostr/event.ts';
import { pTagPubkeys } from '../../nostr/tags.ts';
import { GIFT_WRAP, TEXT_NOTE, ZAP_RECEIPT } from '../../nostr/kinds.ts';
import { handleContentEvent, type ContentDeps } from '../content.ts';
import type { InboundEnvelope } from '../router.ts';
import { envelopeWorkOwner } from '../work-owner.ts';
import { handleGiftWrap, type GiftWrapDeps } from './gift-wraps.ts';
import { NoteCopy, noteRecipients, type NoteAuthorLookup } from './notes.ts';
import { checkZapReceipt, type ZapProviderLookup } from './zap-receipt.ts';
import { zapPlan } from './zaps.ts';

/** The kinds an app's `events:` settings add to the live subscription, sorted. */
export function optionalEventKinds(events: EventsConfig): number[] {
  const kinds: number[] = [];
  if (events.text_notes) kinds.push(TEXT_NOTE);
  if (events.gift_wraps) kinds.push(GIFT_WRAP);
  if (events.zaps) kinds.push(ZAP_RECEIPT);
  return kinds;
}

export interface OptionalEventDeps {
  events: EventsConfig;
  content: ContentDeps;
  giftWraps: GiftWrapDeps;
  /** Checks the signature of a zap's embedded request. */
  verifier: EventVerifier;
  noteAuthor: NoteAuthorLookup;
  zapProvider: ZapProviderLookup;
}

/** What became of an inbound event here: `not_optional` means it goes on along divine's path. */
export type OptionalEventRoute = 'not_optional' | 'note' | 'zap' | 'gift_wrap';

/**
 * The note-author lookup, asked only when its answer can reach someone: NIP-10 replies `p`-tag the
 * parent's author, so when no `p`-tagged user has a device, finding out which of them wrote the
 * parent changes no push (kind 1 is a firehose; most replies concern nobody here). A parent author
 * a client forgot to `p`-tag is missed then. A `p`-tagged parent author the lookup does not find
 * still hears of the reply, as a mention.
 */
function lookupWhenUseful(deps: OptionalEventDeps, event: NostrEvent): NoteAuthorLookup {
  let useful: Promise<boolean> | null = null;
  return async (eventId) => {
    useful ??= deps.content.store
      .readRecipients(pTagPubkeys(event).filter((pubkey) => pubkey !== event.pubkey))
      .then((states) => states.some((state) => state.devices.length > 0));
    return (await useful) ? deps.noteAuthor(eventId) : null;
  };
}

/**
 * The zap provider lookup (a kind-0 query and an HTTPS request), made only for a recipient with a
 * device: zaps to people who get no push here are many, and their verification would buy nothing.
 */
function providerWhenUseful(deps: OptionalEventDeps): ZapProviderLookup {
  return async (recipient) => {
    const [state] = await deps.content.store.readRecipients([recipient]);
    return state !== undefined && state.devices.length > 0 ? deps.zapProvider(recipient) : null;
  };
}

export async function handleOptionalEvent(deps: OptionalEventDeps, envelope: InboundEnvelope): Promise<OptionalEventRoute> {
  const { event } = envelope;
  const { content, events } = deps;
  if (event.kind === TEXT_NOTE && events.text_notes) {
    const recipients = await noteRecipients(event, lookupWhenUseful(deps, event));
    await handleContentEvent(content, envelope, { recipients, copy: new NoteCopy(event, content.profiles, content.logger) });
    return 'note';
  }
  if (event.kind === ZAP_RECEIPT && events.zaps) {
    const checked = await checkZapReceipt(event, deps.verifier, providerWhenUseful(deps));
    if (!checked.ok || (!checked.verified && !events.zaps_allow_unverified)) {
      const outcome = checked.ok ? 'unverified' : checked.reason;
      content.metrics.contentRecipients.inc({ type: 'zap', outcome });
      content.logger.debug({ eventId: event.id, outcome }, 'zap receipt not pushed');
      return 'zap';
    }
    await handleContentEvent(content, envelope, zapPlan(checked, content.profiles));
    return 'zap';
  }
  if (event.kind === GIFT_WRAP && events.gift_wraps) {
    await handleGiftWrap(deps.giftWraps, event, envelopeWorkOwner(envelope), envelope.onlyRecipient);
    return 'gift_wrap';
  }
  return 'not_optional';
}
