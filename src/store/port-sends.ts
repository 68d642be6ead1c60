/**
 * Storage operations of the send API (`POST /v1/notifications`): the notification records, the
 * `Idempotency-Key` records, and the durable schedule their recipient lists are expanded from.
 * Part of {@link StorePort}; implemented by both adapters; tested in `test/store/contract/sends.ts`.
 *
 * Model. A send is one notification an app server asked for, to up to 10,000 recipients, stored
 * with its request as given. Its recipients are expanded in pages by the scheduler
 * (`src/platform/send-worker.ts`), which claims and queues each recipient's delivery on the
 * outbound queue. The store keeps, per send:
 * - `state`: `scheduled` (created, no page taken yet), `started` (a page was claimed; it can no
 *   longer be cancelled), `done` (every page expanded) or `cancelled`;
 * - `offset`: how many recipients are expanded (the next page starts there);
 * - a place in the due schedule while it is `scheduled` or `started`: due at `sendAtMs` first,
 *   then at the lease deadline while a page is held, then at once when a page completes.
 *
 * Races are settled in the store, not by the caller: {@link SendStore.claimDueSend} moves a
 * `scheduled` send to `started` in the same step that hands it out, and
 * {@link SendStore.cancelSend} cancels only a `scheduled` one, so a send is either cancelled or
 * started, never both. A crashed worker's page becomes due again when its lease runs out.
 *
 * Idempotency. A create with an idempotency key records `(app, key) → (send id, request hash)`
 * for `ttlSecs`, in the same atomic step as the send; a later create with the same key (live)
 * writes nothing and reports the first send's id and whether its request hash matches.
 *
 * Tenancy. Every record is keyed by app id; an id of another app is simply not found.
 *
 * Time: from the store clock (`createdAtMs`, due times, idempotency expiry).
 */
import type { Lane } from './port.ts';

/** A send as the API validated it (the JSON body of `POST /v1/notifications`). */
export interface SendRequest {
  /** 64-hex pubkeys, distinct, at most 10,000. */
  recipients: string[];
  /** App-defined type, mapped to a preference category by `send_api.types`. */
  type: string;
  title: string;
  body: string;
  /** Extra data map entries (strings), sent with the push. */
  data?: Record<string, string>;
  priority: Lane;
  /** ISO 8601 time before which nothing is sent; absent means now. */
  sendAt?: string;
  collapseKey?: string;
  /** How long delivery is attempted after `sendAt` (seconds). */
  ttlSecs?: number;
}

export type SendState = 'scheduled' | 'started' | 'done' | 'cancelled';

/** The lanes in the order due sends are claimed: a critical send is never expanded after a low one that is due. */
export const SEND_LANES: readonly Lane[] = ['critical', 'normal', 'low'];

/** A send handed to {@link SendStore.createSend}. */
export interface NewSend {
  appId: string;
  id: string;
  request: SendRequest;
  /** When the first page is due (ms, store clock). */
  sendAtMs: number;
}

/** A stored send. */
export interface SendRecord extends NewSend {
  state: SendState;
  createdAtMs: number;
  /** Recipients expanded so far (the index the next page starts at). */
  offset: number;
}

/** The idempotency record a create takes. */
export interface IdempotencyClaim {
  /** The `Idempotency-Key` header as sent. */
  key: string;
  /** SHA-256 (hex) of the canonical request: a second request with the key must match it. */
  requestHash: string;
  /** How long the record is kept (24 h by default). */
  ttlSecs: number;
}

export type CreateSendResult =
  | { created: true }
  /** The key was used before (and is still kept): nothing was written. */
  | { created: false; existingId: string; sameRequest: boolean };

/** A send handed out by {@link SendStore.claimDueSend}, held until `leaseExpiresAtMs`. */
export interface ClaimedSend {
  send: SendRecord;
  leaseExpiresAtMs: number;
}

export type CancelSendResult = 'cancelled' | 'not_found' | 'not_cancellable';

export interface SendStore {
  /**
   * Store a new send, `scheduled` and due at `sendAtMs`, kept `recordTtlSecs`; with `idempotency`,
   * only when the key is not held for the app (see the module comment), in one atomic step.
   * Throws when the id exists.
   */
  createSend(send: NewSend, recordTtlSecs: number, idempotency: IdempotencyClaim | null): Promise<CreateSendResult>;

  /** The send of `appId` with this id; null when unknown (or another app's). */
  getSend(appId: string, id: string): Promise<SendRecord | null>;

  /**
   * Hand out a due send (due time ≤ now) of the most urgent lane that has one ({@link SEND_LANES},
   * by `request.priority`), the one due the longest in it, moving it to `started`,
   * due again `leaseMs` from now (a crashed worker's page returns then). Null when none is due.
   */
  claimDueSend(leaseMs: number): Promise<ClaimedSend | null>;

  /**
   * Record a page: `nextOffset` recipients are expanded; due again at once. With `done`, the send
   * becomes `done` and leaves the schedule. False (nothing written) when the send is gone or
   * cancelled.
   */
  advanceSend(appId: string, id: string, nextOffset: number, done: boolean): Promise<boolean>;

  /** Cancel a `scheduled` send (removed from the schedule). A cancelled one answers `cancelled` again. */
  cancelSend(appId: string, id: string): Promise<CancelSendResult>;
}
