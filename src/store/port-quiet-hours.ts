/**
 * Storage operations of quiet hours (issue 15 item 2): a user's daily quiet window from kind
 * 3083 (`quietHours`, device-local), the social pushes held during it as per-type counts, and
 * the schedule of the digests that replace them when the window ends. Part of {@link StorePort};
 * implemented by both adapters; tested in `test/store/contract/quiet-hours.ts`.
 *
 * Holding is one atomic step: the type's count goes up and the user's digest is due at
 * `releaseAtMs` unless it is due already (the earliest end wins). A digest is handed out under a
 * lease ({@link QuietHoursStore.claimDueDigest}); once its push is queued the caller completes it
 * with the counts it took ({@link QuietHoursStore.completeDigest}), which subtracts them, so
 * pushes held meanwhile are kept for a digest of their own. A worker killed between the two
 * leaves the digest to be handed out again after its lease (at least once).
 */

/** A user's quiet window, as minutes of the local day ([start, end), wrapping midnight when start > end). */
export interface QuietHours {
  startMinute: number;
  endMinute: number;
  /** Notification types (seed `type` names) that are pushed during the window anyway. */
  urgentTypes: string[];
}

export interface DueDigest {
  pubkey: string;
  /** Held pushes per notification type. */
  counts: Record<string, number>;
  leaseExpiresAtMs: number;
}

export interface QuietHoursStore {
  /** Replace a user's quiet hours; null removes them. */
  setQuietHours(pubkey: string, quietHours: QuietHours | null): Promise<void>;

  /** The quiet hours of many users in one step, in the order asked (null: none). */
  readQuietHours(pubkeys: readonly string[]): Promise<Array<QuietHours | null>>;

  /** Hold one push of `type` for `pubkey`'s digest, due at `releaseAtMs` (or earlier, if due earlier already). */
  holdForDigest(pubkey: string, type: string, releaseAtMs: number): Promise<void>;

  /** Hand out one due digest (due again `leaseMs` from now); null when none is due. */
  claimDueDigest(leaseMs: number): Promise<DueDigest | null>;

  /**
   * Subtract the counts a digest carried. When nothing is left the digest leaves the schedule;
   * when pushes were held meanwhile it is due at once.
   */
  completeDigest(pubkey: string, counts: Readonly<Record<string, number>>): Promise<void>;
}
