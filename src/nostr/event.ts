import { createHash } from 'node:crypto';
import { defaultSecp256k1, type Secp256k1Backend } from './secp256k1.ts';

/**
 * A NIP-01 event as nostr-push handles it. Values of this type come from `parseEvent` (untrusted
 * input, shape checked but not yet verified) or from our own signing.
 */
export interface NostrEvent {
  id: string;
  pubkey: string;
  created_at: number;
  kind: number;
  tags: string[][];
  content: string;
  sig: string;
}

/** Most tags an event may carry. Notify lists and control events need a handful. */
export const MAX_EVENT_TAGS = 2_000;
/** Most strings in one tag (`imeta` and similar carry a dozen or so). */
export const MAX_ELEMENTS_PER_TAG = 64;
/** Most UTF-16 code units summed over every string of every tag (256 Ki). */
export const MAX_TAGS_TOTAL_CHARS = 256 * 1024;
/** Most UTF-8 bytes of `content` (256 KiB). */
export const MAX_CONTENT_BYTES = 256 * 1024;
/** Largest kind NIP-01 allows. */
export const MAX_KIND = 65_535;

/**
 * Size bounds applied by `parseEvent`. They exist so that a hostile relay cannot make us hash or
 * verify megabytes per event: everything past them is rejected before any crypto runs.
 */
export interface EventLimits {
  maxTags: number;
  maxElementsPerTag: number;
  maxTagsTotalChars: number;
  maxContentBytes: number;
}

export const DEFAULT_EVENT_LIMITS: Readonly<EventLimits> = Object.freeze({
  maxTags: MAX_EVENT_TAGS,
  maxElementsPerTag: MAX_ELEMENTS_PER_TAG,
  maxTagsTotalChars: MAX_TAGS_TOTAL_CHARS,
  maxContentBytes: MAX_CONTENT_BYTES,
});

/** Why a value is not an event. Low-cardinality, so usable as a metrics label. */
export type EventRejectionCode =
  | 'not-object'
  | 'bad-id'
  | 'bad-pubkey'
  | 'bad-sig'
  | 'bad-kind'
  | 'bad-created-at'
  | 'bad-tags'
  | 'too-many-tags'
  | 'tag-too-large'
  | 'bad-content'
  | 'content-too-large';

/** The result of `parseEvent` for a value that is not a well-formed event. */
export interface EventRejection {
  readonly rejected: true;
  readonly code: EventRejectionCode;
  /** Human-readable detail for a log line; never contains more than a short prefix of input. */
  readonly message: string;
}

export function isEventRejection(result: NostrEvent | EventRejection): result is EventRejection {
  return 'rejected' in result;
}

const HEX_64 = /^[0-9a-f]{64}$/;
const HEX_128 = /^[0-9a-f]{128}$/;

function reject(code: EventRejectionCode, message: string): EventRejection {
  return { rejected: true, code, message };
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `string of length ${value.length}`;
  if (Array.isArray(value)) return 'array';
  return value === null ? 'null' : typeof value;
}

/**
 * Checks the shape of an untrusted value (typically one element of a relay `EVENT` frame after
 * JSON.parse) and returns a fresh event object, or a rejection saying why.
 *
 * Checked: `id` and `pubkey` are 64 lowercase hex, `sig` is 128 lowercase hex, `kind` is an
 * integer in 0..65535, `created_at` is a non-negative safe integer, `tags` is an array of arrays
 * of strings, `content` is a string, all within `limits`. Unknown fields are dropped. Signature
 * and id are NOT checked here: pass the result to an `EventVerifier`.
 *
 * The returned object and its tag arrays are newly built, so nothing the input carried besides
 * the seven NIP-01 fields survives: in particular not nostr-tools' `verifiedSymbol` cache flag,
 * which a caller could otherwise pre-set to make a cache-trusting verifier skip the check.
 */
export function parseEvent(value: unknown, limits: Readonly<EventLimits> = DEFAULT_EVENT_LIMITS): NostrEvent | EventRejection {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return reject('not-object', `expected an object, got ${describe(value)}`);
  }
  const record = value as Record<string, unknown>;
  const { id, pubkey, sig, kind, created_at: createdAt, tags, content } = record;

  if (typeof id !== 'string' || !HEX_64.test(id)) {
    return reject('bad-id', `id must be 64 lowercase hex, got ${describe(id)}`);
  }
  if (typeof pubkey !== 'string' || !HEX_64.test(pubkey)) {
    return reject('bad-pubkey', `pubkey must be 64 lowercase hex, got ${describe(pubkey)}`);
  }
  if (typeof sig !== 'string' || !HEX_128.test(sig)) {
    return reject('bad-sig', `sig must be 128 lowercase hex, got ${describe(sig)}`);
  }
  if (typeof kind !== 'number' || !Number.isInteger(kind) || kind < 0 || kind > MAX_KIND) {
    return reject('bad-kind', `kind must be an integer in 0..${MAX_KIND}`);
  }
  // The id hash interpolates the number as JS prints it; beyond 2^53 that is not what the signer hashed.
  if (typeof createdAt !== 'number' || !Number.isSafeInteger(createdAt) || createdAt < 0) {
    return reject('bad-created-at', 'created_at must be a non-negative integer');
  }
  if (typeof content !== 'string') {
    return reject('bad-content', `content must be a string, got ${describe(content)}`);
  }
  // A UTF-16 code unit encodes to at least one UTF-8 byte, so the cheap length test is exact
  // for rejection and the byte count is only needed near the limit.
  if (
    content.length > limits.maxContentBytes ||
    (content.length * 3 > limits.maxContentBytes && Buffer.byteLength(content, 'utf8') > limits.maxContentBytes)
  ) {
    return reject('content-too-large', `content exceeds ${limits.maxContentBytes} bytes`);
  }

  const parsedTags = parseTags(tags, limits);
  if (!Array.isArray(parsedTags)) return parsedTags;

  return { id, pubkey, created_at: createdAt, kind, tags: parsedTags, content, sig };
}

function parseTags(tags: unknown, limits: Readonly<EventLimits>): string[][] | EventRejection {
  if (!Array.isArray(tags)) return reject('bad-tags', `tags must be an array, got ${describe(tags)}`);
  if (tags.length > limits.maxTags) {
    return reject('too-many-tags', `${tags.length} tags exceed the limit of ${limits.maxTags}`);
  }
  const out: string[][] = new Array<string[]>(tags.length);
  let totalChars = 0;
  for (let i = 0; i < tags.length; i++) {
    const tag: unknown = tags[i];
    if (!Array.isArray(tag)) return reject('bad-tags', `tag ${i} is not an array`);
    if (tag.length > limits.maxElementsPerTag) {
      return reject('tag-too-large', `tag ${i} has ${tag.length} elements, limit ${limits.maxElementsPerTag}`);
    }
    const copy: string[] = new Array<string>(tag.length);
    for (let j = 0; j < tag.length; j++) {
      const element: unknown = tag[j];
      if (typeof element !== 'string') return reject('bad-tags', `tag ${i} element ${j} is not a string`);
      totalChars += element.length;
      copy[j] = element;
    }
    if (totalChars > limits.maxTagsTotalChars) {
      return reject('tag-too-large', `tags exceed ${limits.maxTagsTotalChars} characters in total`);
    }
    out[i] = copy;
  }
  return out;
}

/**
 * Checks that an event is authentic: its `id` is the sha256 of its NIP-01 serialization AND its
 * `sig` is a valid BIP-340 signature of that id by `pubkey`. Both, always: a valid signature over
 * a stale id would otherwise let anyone replay a signature onto new content.
 *
 * Implementations must be synchronous and must not throw; any failure is `false`. They are given
 * events from `parseEvent`, so inputs are already well-formed hex of the right lengths.
 */
export interface EventVerifier {
  verify(event: NostrEvent): boolean;
}

/** A verifier that can also check off the main thread (the crypto pool's `verifyAsync`) when its caller can wait. */
export interface MaybeOffThreadVerifier extends EventVerifier {
  verifyAsync?(event: NostrEvent): Promise<boolean>;
}

/** Whether `event`'s id and signature verify: off the main thread when the verifier can; a check that throws or rejects is `false`. */
export async function isAuthentic(verifier: MaybeOffThreadVerifier, event: NostrEvent): Promise<boolean> {
  try {
    return verifier.verifyAsync ? await verifier.verifyAsync(event) : verifier.verify(event);
  } catch {
    return false;
  }
}

/** The NIP-01 id of an event: hex sha256 of `[0, pubkey, created_at, kind, tags, content]` as JSON. */
export function computeEventId(event: Pick<NostrEvent, 'pubkey' | 'created_at' | 'kind' | 'tags' | 'content'>): string {
  return createHash('sha256')
    .update(JSON.stringify([0, event.pubkey, event.created_at, event.kind, event.tags, event.content]))
    .digest('hex');
}

/**
 * The event verifier: the id recomputed with the platform's sha256 (OpenSSL), then the BIP-340
 * signature checked by libsecp256k1 through `backend` (by default this thread's choice, see
 * secp256k1.ts: the native addon when it loads, about 55 µs a whole check with the id on our
 * benchmark machine, else its WASM build in `tiny-secp256k1`, about 300; docs/benchmarks.md).
 * Verification is the largest cost of every inbound event.
 *
 * Both checks, always, in this order; nothing cached on the event object is ever trusted. A
 * pubkey that is not an x coordinate on the curve verifies as `false`, and so does an event of
 * the wrong field lengths (which `parseEvent` never returns, and the backend would throw for).
 * Async for the callers' sake (a verifier may need loading); this one is ready at once. Rejects
 * when no backend is given and `NOSTR_PUSH_SECP256K1` asks for one that is unavailable.
 */
export async function createEventVerifier(backend: Secp256k1Backend = defaultSecp256k1()): Promise<EventVerifier> {
  return { verify: (event) => verifyEventAuthenticity(event, backend) };
}

function verifyEventAuthenticity(event: NostrEvent, backend: Secp256k1Backend): boolean {
  if (computeEventId(event) !== event.id) return false;
  try {
    return backend.verifySchnorrHex(event.id, event.pubkey, event.sig);
  } catch {
    return false;
  }
}
