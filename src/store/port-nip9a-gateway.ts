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
  /** Normalised relay URLs it watches (distinct, as `parseNip9aRegistration` gives them). */
  relays: string[];
  /** The signed kind 30390 as JSON, kept exactly. */
  eventJson: string;
}

/**
 * Bounds checked atomically with the write, the version being replaced never counted. Every bound
 * is per author or on what an author adds, never a total shared by every author on one relay
 * (any stranger with fresh keys could fill such a total and lock everyone else out of that relay).
 */
export interface Nip9aRegistrationLimits {
  /** Registrations one author may hold. */
  perAuthor: number;
  /** Registrations of one author that may name one relay. */
  perAuthorPerRelay: number;
  /**
   * Distinct relays with at least one registration. Only a write that would add a relay to them
   * meets it; registrations on relays already watched are never refused by it.
   */
  maxWatchedRelays: number;
}

/**
 * Outcome of {@link Nip9aGatewayStore.putNip9aRegistration}:
 * - `stored`: new address; `replaced`: an older version was replaced;
 * - `stale`: the stored version is newer, or as new with an id not greater (NIP-01: lowest id
 *   wins a tie); the same event again is `stale` too;
 * - `author_limit`: the author holds `perAuthor` other registrations;
 * - `author_relay_limit`: `relay` is named by `perAuthorPerRelay` other registrations of the author;
 * - `watched_relays_limit`: `relay` is not watched yet and adding it (with the others this write
 *   adds) would make more than `maxWatchedRelays` relays;
 * nothing changed on any limit. Checked in that order.
 */
export type PutNip9aRegistrationResult =
  | { outcome: 'stored' }
  | { outcome: 'replaced'; previousEventId: string }
  | { outcome: 'stale'; currentEventId: string }
  | { outcome: 'author_limit' }
  | { outcome: 'author_relay_limit'; relay: string }
  | { outcome: 'watched_relays_limit'; relay: string };

/** A queued delivery as the store knows it: its outcome key and its registration's address. */
export interface Nip9aDeliveryRef {
  key: string;
  pubkey: string;
  d: string;
}

/** See {@link Nip9aGatewayStore.readNip9aDeliveryStates}. */
export interface Nip9aDeliveryState {
  outcomeRecorded: boolean;
  /** The id of the registration version now stored at the address; null when none is. */
  registrationEventId: string | null;
}

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
   * Record terminal outcomes of deliveries (`keys`: the registration address and event id of
   * each), in order. Keeps at most `maxEntries` (oldest dropped first), each at most `maxAgeMs`.
   * One answer per key, in order: true when recorded by this call, false when it was already
   * there (a key listed twice is recorded by its first place). The gateway records the outcomes
   * settled in one turn with one call.
   */
  recordNip9aOutcomes(keys: readonly string[], maxEntries: number, maxAgeMs: number): Promise<boolean[]>;

  /**
   * What a delivery attempt must know before its request, for many deliveries at once: whether a
   * terminal outcome of its key is recorded and not older than `maxAgeMs`, and which registration
   * version is now stored at its address (the caller usually holds that version parsed already,
   * and reads the whole registration only when it does not). One answer per entry, in order.
   */
  readNip9aDeliveryStates(entries: readonly Nip9aDeliveryRef[], maxAgeMs: number): Promise<Nip9aDeliveryState[]>;
}
