/**
 * Storage of the NIP-9a gateway (`src/nip9a/gateway/`): kind 30390 registrations under the
 * NIP-01 addressable rules, and the bounded record of terminal delivery outcomes. Part of
 * {@link StorePort}; implemented by both adapters; tested in `test/store/contract/nip9a-gateway.ts`.
 * The delivery queue itself is the durable queue `nip9a` of the core port.
 *
 * A registration is stored as its signed event JSON, already checked by the caller
 * (`src/nip9a/registration.ts`); the store only needs its address, id, `created_at` and relays.
 *
 * @remarks Not part of this contract: parsing or validating events, matching them, SSRF policy.
 */

/** What the store keeps of one registration. */
export interface StoredNip9aRegistration {
  pubkey: string;
  d: string;
  eventId: string;
  /** The event's `created_at`, unix seconds. */
  createdAt: number;
  /** Normalised relay URLs it watches (counted against each relay's total). */
  relays: string[];
  /** The signed kind 30390 as JSON, kept exactly. */
  eventJson: string;
}

/** Bounds checked atomically with the write. */
export interface Nip9aRegistrationLimits {
  /** Registrations one author may hold (the one being replaced not counted). */
  perAuthor: number;
  /** Registrations one relay may be watched for (the one being replaced not counted). */
  perRelay: number;
}

/**
 * Outcome of {@link Nip9aGatewayStore.putNip9aRegistration}:
 * - `stored`: new address; `replaced`: an older version was replaced;
 * - `stale`: the stored version is newer, or as new with an id not greater (NIP-01: lowest id
 *   wins a tie); the same event again is `stale` too;
 * - `author_limit` / `relay_limit`: a bound would be exceeded; nothing changed.
 */
export type PutNip9aRegistrationResult =
  | { outcome: 'stored' }
  | { outcome: 'replaced'; previousEventId: string }
  | { outcome: 'stale'; currentEventId: string }
  | { outcome: 'author_limit' }
  | { outcome: 'relay_limit'; relay: string };

export interface Nip9aGatewayStore {
  /** Insert or replace by address (pubkey, d) under NIP-01 rules and the limits, atomically. */
  putNip9aRegistration(registration: StoredNip9aRegistration, limits: Nip9aRegistrationLimits): Promise<PutNip9aRegistrationResult>;

  /**
   * Delete the registration at (pubkey, d); when `eventId` is given only if it is still that
   * version (compare-and-delete: a 404 for an old version never removes its replacement). True
   * when something was deleted.
   */
  deleteNip9aRegistration(pubkey: string, d: string, eventId?: string): Promise<boolean>;

  getNip9aRegistration(pubkey: string, d: string): Promise<StoredNip9aRegistration | null>;

  /** The author's registrations, in no particular order. */
  listNip9aRegistrations(pubkey: string): Promise<StoredNip9aRegistration[]>;

  /** Every registration (the gateway's load at start and on change). */
  listAllNip9aRegistrations(): Promise<StoredNip9aRegistration[]>;

  /**
   * A counter raised by every put that changed something and every delete that deleted: the
   * gateway reloads when it moved. Starts at 0.
   */
  nip9aRegistrationsVersion(): Promise<number>;

  /**
   * Record a terminal outcome of delivery `key` (the registration address and event id). Keeps
   * at most `maxEntries` (oldest dropped first), each at most `maxAgeMs`. True when recorded
   * now, false when it was already there.
   */
  recordNip9aOutcome(key: string, maxEntries: number, maxAgeMs: number): Promise<boolean>;

  /** Whether a terminal outcome of `key` is recorded and not older than `maxAgeMs`. */
  hasNip9aOutcome(key: string, maxAgeMs: number): Promise<boolean>;
}
