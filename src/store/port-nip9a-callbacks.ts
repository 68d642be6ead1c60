/**
 * Storage operations of the NIP-9a callback receiver (issue 12, half 1): the opaque callback URLs
 * users hand to relays that push, and the dedupe of what those relays POST. Part of
 * {@link StorePort}; implemented by both adapters; tested in `test/store/contract/nip9a-callbacks.ts`.
 *
 * A callback URL is `{server.public_url}/nip9a/cb/{secret}`. The store never sees the secret,
 * only its SHA-256 ({@link Nip9aCallback.secretHash}), so a stolen store does not let anyone post
 * as a relay. Revoking deletes the record: a revoked URL then looks exactly like one that never
 * existed (the receiver answers 404, and NIP-9a relays delete their registration on a 404).
 *
 * @remarks Not part of this contract: making the secret, hashing it, validating or normalising
 * the relay URL, rate limits (per process, in the receiver). Ids and hashes are stored as given.
 */
import type { EnqueueItem } from './port.ts';
import type { IdleSweepPage } from './port-inbox.ts';

/**
 * Resolution of a callback URL's "last received" time: one day. It decides only the idle sweep
 * (`nip9a.receiver.idle_callback_ttl_days`, 90 days), so the receiver records it at most once a
 * day per URL (see {@link Nip9aCallbackStore.touchNip9aCallback}), never once per relay POST.
 */
export const NIP9A_CALLBACK_ACTIVITY_RESOLUTION_MS = 86_400_000;

/** One callback URL, as stored. */
export interface Nip9aCallback {
  /** Public id (the `{id}` of `DELETE /v1/nip9a/callbacks/{id}`); unique. */
  id: string;
  /** Lowercase hex SHA-256 of the URL's secret; unique. */
  secretHash: string;
  /** The first characters of the secret, so a user can tell their URLs apart in a listing. */
  secretHint: string;
  /** 64-hex pubkey of the user who created it: the only possible recipient of what arrives on it. */
  owner: string;
  /** The normalised relay URL it was made for; callbacks naming another relay are refused. */
  relay: string;
  createdAtMs: number;
}

/** What identifies one relay POST for deduplication: (relay, callback, event id), as the seed asks. */
export interface Nip9aReceipt {
  callbackId: string;
  relay: string;
  eventId: string;
}

/** One entry of {@link Nip9aCallbackStore.acceptNip9aReceipts}: the receipt and the inbound item it queues. */
export interface Nip9aAcceptance<T = unknown> {
  receipt: Nip9aReceipt;
  item: EnqueueItem<T>;
}

export interface Nip9aCallbackStore {
  /** Store a new callback. Ids and secret hashes are fresh random values of the caller's; a repeat is a programming error and throws. */
  createNip9aCallback(callback: Nip9aCallback): Promise<void>;

  /** The live callback whose secret hashes to `secretHash`, or null (never created, or revoked). */
  findNip9aCallback(secretHash: string): Promise<Nip9aCallback | null>;

  /** Every live callback of `owner`, oldest first. */
  listNip9aCallbacks(owner: string): Promise<Nip9aCallback[]>;

  /**
   * Delete callback `id` if and only if `owner` created it. True when deleted; false when unknown,
   * already revoked or someone else's (a non-owner learns nothing more than "not found").
   */
  revokeNip9aCallback(owner: string, id: string): Promise<boolean>;

  /**
   * Record that callback `id` received a relay POST at `atMs` (the receiver passes the start of
   * the day, once a day per URL). Only raises the recorded time; unknown ids are ignored. A new
   * callback counts as received at its `createdAtMs`.
   */
  touchNip9aCallback(id: string, atMs: number): Promise<void>;

  /**
   * One page of the idle-callback sweep (the janitor's, `nip9a.receiver.idle_callback_ttl_days`):
   * look at up to `max` callbacks whose last received time is before `idleBeforeMs`, oldest first,
   * and delete each as its owner's revoke would (the URL answers 404 from then on, and a NIP-9a
   * relay deletes its registration on a 404). One touched meanwhile is kept.
   */
  forgetIdleNip9aCallbacks(idleBeforeMs: number, max: number): Promise<IdleSweepPage>;

  /**
   * For each entry, atomically: record its receipt for `ttlSecs` and, only when the receipt was
   * new, put its item on the `inbound` queue (as `enqueue` would: an id already queued stays as it
   * is). A receipt is thus never recorded without its work queued, whatever instant the caller
   * dies at. One result per entry, in order: true when the receipt was new (the caller answers
   * "queued"), false when it was already recorded and unexpired (a duplicate POST).
   */
  acceptNip9aReceipts<T>(ttlSecs: number, entries: ReadonlyArray<Nip9aAcceptance<T>>): Promise<boolean[]>;
}
