/**
 * Storage operation of the Web Push VAPID key shared by a fleet (RFC 8292): when no key is
 * configured, the first process to start stores one and every process signs with it. Part of
 * {@link StorePort}; implemented by both adapters; tested in `test/store/contract/vapid.ts`.
 *
 * Why the store: a push subscription created with an `applicationServerKey` accepts only pushes
 * signed by that key, so a fleet whose processes each generated their own key would have each
 * subscription honoured by one process only. The store is the one thing every process shares.
 *
 * @remarks The SQLite service keeps its generated key in the data directory instead (one process
 * owns the file); the SQLite adapter implements the operation all the same, so the contract holds
 * on both. Not part of this contract: checking that the pair is a valid P-256 key pair (the
 * caller does, `delivery/webpush/vapid-key.ts`) and configured keys, which never reach the store.
 */

/** A VAPID key pair as stored: base64url, the shape `web-push generate-vapid-keys --json` prints. */
export interface StoredVapidKeys {
  /** The uncompressed P-256 public key (65 bytes), base64url. */
  publicKey: string;
  /** The private scalar (32 bytes), base64url. */
  privateKey: string;
}

export interface VapidKeyStore {
  /**
   * The fleet's VAPID key pair: the stored one when there is one; otherwise `candidate`, stored
   * now. Set-if-absent in one atomic step, so processes starting at once all get the same pair,
   * whichever candidate won. The strings are stored and returned as given.
   */
  claimVapidKeys(candidate: StoredVapidKeys): Promise<StoredVapidKeys>;
}
