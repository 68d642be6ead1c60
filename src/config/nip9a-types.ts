/** The shape of the `nip9a:` section of the configuration (`types.ts` has the rest; defaults in `defaults.ts`). */

/**
 * The NIP-9a gateway. Defaults are bind.ws's bounds and policy (seed 003, "Bounds and retries"),
 * which the issue makes normative.
 */
export interface Nip9aConfig {
  /** The NIP-9a callback receiver (relays that push to our users' callback URLs). */
  receiver: Nip9aReceiverConfig;
  /**
   * Exact `https://` origins (public DNS names, port 443, no path) callbacks may be POSTed to. The
   * SSRF boundary: empty by default, so nothing is called until the operator opts in.
   */
  callback_origins: string[];
  /**
   * `false`, `true` or `I_UNDERSTAND`: admit loopback callbacks and relays, bypassing the
   * allowlist, for test suites. `true` is refused at start unless `NODE_ENV=test`.
   */
  allow_loopback_callbacks: string;
  /** Registrations one author may hold. */
  max_registrations_per_author: number;
  /** Registrations of one author that may name one relay (there is no total per relay: docs/security.md). */
  max_registrations_per_author_per_relay: number;
  /** Distinct relays the gateway watches; a registration that would add one more is refused. */
  max_watched_relays: number;
  /** Largest registration event, UTF-8 JSON bytes. */
  max_registration_bytes: number;
  /** `filter` tags per registration. */
  max_filters: number;
  /** `ignore` tags per registration. */
  max_ignore_filters: number;
  /** Deliveries waiting per relay; new work beyond it is dropped and counted, never waited for. */
  max_pending_deliveries_per_relay: number;
  /** A delivery not finished this long after its event arrived is dropped. */
  pending_expiry_secs: number;
  /** One callback request, connect to response headers. */
  request_timeout_secs: number;
  /** Attempts per delivery, the first included. */
  max_attempts: number;
  /** Delay after the n-th failed attempt (the last entry repeats). */
  retry_delays_secs: number[];
  /** Terminal outcomes remembered for deduplication. */
  outcome_dedup_entries: number;
  /** Longest a terminal outcome is remembered. */
  outcome_dedup_max_age_secs: number;
  /** Callback requests in flight at once per gateway process. */
  delivery_concurrency: number;
  /**
   * Worker threads making the callback POSTs, each with its own connections; 0 makes them on the
   * gateway's main thread.
   */
  post_threads: number;
  /** How often the gateway checks the store for registrations changed by another process. */
  reload_poll_millis: number;
}

/** The NIP-9a callback receiver: what one callback URL may receive. */
export interface Nip9aReceiverConfig {
  /** Relay POSTs one callback URL may make per second, sustained; more get 429 (a NIP-9a relay retries those). */
  rate_per_sec: number;
  /** Relay POSTs one callback URL may make in a burst above the sustained rate. */
  rate_burst: number;
  /**
   * Relay POSTs all of one user's callback URLs together may receive per second, sustained (URLs
   * are free to mint, so a per-URL limit alone does not bound a user); shared by every replica.
   */
  owner_rate_per_sec: number;
  /** Relay POSTs all of one user's callback URLs may receive at once above the sustained rate. */
  owner_rate_burst: number;
  /** How long a (relay, callback, event id) receipt is remembered, so a repeated POST pushes once. */
  receipt_ttl_secs: number;
  /** Callback URLs one user may hold at once. */
  max_callbacks_per_owner: number;
  /** Callback URLs one client address may create per UTC day, whichever keys sign (shared by replicas through the store). */
  max_callbacks_per_address_per_day: number;
  /** A callback URL that received nothing for this many days is deleted (janitor). */
  idle_callback_ttl_days: number;
}
