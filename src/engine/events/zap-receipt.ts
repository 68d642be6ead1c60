/**
 * Checking a NIP-57 zap receipt (kind 9735) before anyone is told about it. A receipt is signed by
 * the payee's lnurl provider, not by the payer, so its only proof of who paid whom is the signed
 * zap request (kind 9734) it carries in `description`:
 *
 * - the receipt names one recipient (`p`), and the request's own `p` must be that same user: a
 *   provider cannot reuse someone's request to claim they zapped another;
 * - the request must be a well-formed kind 9734 with a valid signature;
 * - the amount is the `bolt11` invoice's, decoded by `light-bolt11-decoder` (never by hand); when
 *   the request asked for an `amount` (millisats), the invoice must be for it; when the invoice
 *   commits to a description hash, it must be SHA-256 of the request;
 * - the receipt's signer must be the recipient's lnurl provider (the `nostrPubkey` of their
 *   `lud16` address) when that is known; when it is not, the zap is `verified: false`, and the app
 *   decides (`events.zaps_allow_unverified`) whether such zaps are pushed.
 */
import { createHash } from 'node:crypto';
import { decode as decodeInvoice } from 'light-bolt11-decoder';
import { isEventRejection, parseEvent, type EventVerifier, type NostrEvent } from '../../nostr/event.ts';
import { ZAP_RECEIPT, ZAP_REQUEST } from '../../nostr/kinds.ts';
import { isHexPubkey, pTagPubkeys } from '../../nostr/tags.ts';

/** Millisatoshis per satoshi. */
const MSAT_PER_SAT = 1000n;

/** Why a receipt was refused; also the `outcome` label of the zap metric. */
export type ZapRejection =
  | 'not_a_receipt'
  | 'no_recipient'
  | 'bad_description'
  | 'bad_request_signature'
  | 'wrong_recipient'
  | 'bad_invoice'
  | 'amount_mismatch'
  | 'description_hash_mismatch'
  | 'wrong_provider';

export interface CheckedZap {
  ok: true;
  /** The zapped user (the receipt's and the request's `p`). */
  recipient: string;
  /** The payer: the zap request's author (a throwaway key for an anonymous zap). */
  sender: string;
  /** True for a request with an `anon` tag (NIP-57 anonymous and private zaps): name nobody. */
  anonymous: boolean;
  /** Whole satoshis of the invoice (millisats rounded down). */
  sats: bigint;
  /** True when the receipt's signer is the recipient's known lnurl provider. */
  verified: boolean;
  /** The zap request itself. */
  request: NostrEvent;
}

export type ZapCheck = CheckedZap | { ok: false; reason: ZapRejection };

/**
 * The lnurl provider pubkey of a user (`nostrPubkey` of their `lud16`'s lnurl-pay endpoint), or
 * null when it is not known.
 */
export type ZapProviderLookup = (recipient: string) => Promise<string | null>;

/** The lookup of a service that resolves no lnurl addresses: every provider is unknown. */
export const NO_PROVIDER_LOOKUP: ZapProviderLookup = () => Promise.resolve(null);

function firstTag(event: NostrEvent, name: string): string | undefined {
  return event.tags.find((tag) => tag[0] === name)?.[1];
}

interface InvoiceFacts {
  msat: bigint;
  /** Hex of the `h` field, when the invoice has one. */
  descriptionHash?: string;
}

/** Amount and description hash of a bolt11 invoice, or null when it does not decode or names no amount. */
export function invoiceFacts(bolt11: string): InvoiceFacts | null {
  let sections: ReadonlyArray<{ name: string; value?: unknown }>;
  try {
    sections = decodeInvoice(bolt11).sections;
  } catch {
    return null;
  }
  const amount = sections.find((s) => s.name === 'amount')?.value;
  if (typeof amount !== 'string' || !/^[0-9]+$/.test(amount)) return null;
  const hash = sections.find((s) => s.name === 'description_hash')?.value;
  return typeof hash === 'string' ? { msat: BigInt(amount), descriptionHash: hash.toLowerCase() } : { msat: BigInt(amount) };
}

/** The signed kind-9734 request in a receipt's `description`, or null when there is none that parses. */
function embeddedRequest(description: string | undefined): NostrEvent | null {
  if (description === undefined) return null;
  let value: unknown;
  try {
    value = JSON.parse(description);
  } catch {
    return null;
  }
  const parsed = parseEvent(value);
  return isEventRejection(parsed) || parsed.kind !== ZAP_REQUEST ? null : parsed;
}

/**
 * Check one receipt. `verifier` checks the embedded request's signature (the receipt's own was
 * checked by the listener); `providerOf` says who may sign receipts for the recipient.
 */
export async function checkZapReceipt(receipt: NostrEvent, verifier: EventVerifier, providerOf: ZapProviderLookup): Promise<ZapCheck> {
  if (receipt.kind !== ZAP_RECEIPT) return { ok: false, reason: 'not_a_receipt' };
  const recipient = firstTag(receipt, 'p');
  if (!isHexPubkey(recipient)) return { ok: false, reason: 'no_recipient' };
  const description = firstTag(receipt, 'description');
  const request = embeddedRequest(description);
  if (request === null || description === undefined) return { ok: false, reason: 'bad_description' };
  let signed: boolean;
  try {
    signed = verifier.verify(request);
  } catch {
    signed = false;
  }
  if (!signed) return { ok: false, reason: 'bad_request_signature' };
  // NIP-57: the request MUST have exactly one `p`, the recipient's.
  const requested = pTagPubkeys(request);
  if (requested.length !== 1 || requested[0] !== recipient) return { ok: false, reason: 'wrong_recipient' };

  const invoice = invoiceFacts(firstTag(receipt, 'bolt11') ?? '');
  if (invoice === null) return { ok: false, reason: 'bad_invoice' };
  const askedMsat = firstTag(request, 'amount');
  if (askedMsat !== undefined && /^[0-9]+$/.test(askedMsat) && BigInt(askedMsat) !== invoice.msat)
    return { ok: false, reason: 'amount_mismatch' };
  if (invoice.descriptionHash !== undefined) {
    const digest = createHash('sha256').update(description, 'utf8').digest('hex');
    if (digest !== invoice.descriptionHash) return { ok: false, reason: 'description_hash_mismatch' };
  }

  const provider = await providerOf(recipient);
  if (provider !== null && provider !== receipt.pubkey) return { ok: false, reason: 'wrong_provider' };
  return {
    ok: true,
    recipient,
    sender: request.pubkey,
    anonymous: request.tags.some((tag) => tag[0] === 'anon'),
    sats: invoice.msat / MSAT_PER_SAT,
    verified: provider !== null,
    request,
  };
}
