/**
 * Storage operations of app-level suppressions (issue 15 item 5): support staff stop every push
 * to a user (`pubkey`) or one device (`token`) of an app without touching relays. Part of
 * {@link StorePort}; implemented by both adapters; tested in `test/store/contract/suppressions.ts`.
 *
 * A suppression's id is derived from what it names (see {@link suppressionId}), so adding one
 * twice keeps the first and removing by value or by id are the same operation. Tokens are stored
 * whole (the delivery stage compares them) but never shown: listings carry a short prefix.
 */
import { createHash } from 'node:crypto';

export type SuppressionKind = 'pubkey' | 'token';

export interface SuppressionTarget {
  kind: SuppressionKind;
  value: string;
}

export interface Suppression extends SuppressionTarget {
  appId: string;
  id: string;
  createdAtMs: number;
}

/** The id of the suppression of `target`: `sup_` + 24 hex of SHA-256 over kind and value. */
export function suppressionId(target: SuppressionTarget): string {
  return `sup_${createHash('sha256').update(`${target.kind}\n${target.value}`).digest('hex').slice(0, 24)}`;
}

export interface SuppressionStore {
  /** Suppress `target` for `appId`; returns the suppression (the existing one when it was already there). */
  addSuppression(appId: string, target: SuppressionTarget): Promise<{ suppression: Suppression; created: boolean }>;

  /** Lift a suppression by id; false when unknown. */
  removeSuppression(appId: string, id: string): Promise<boolean>;

  /** Suppressions of `appId`, oldest first, at most `limit`. */
  listSuppressions(appId: string, limit: number): Promise<Suppression[]>;

  /**
   * Which of `targets` are suppressed for `appId`, in the order asked (the delivery stage asks
   * for a recipient and its devices' tokens in one call).
   */
  suppressedAmong(appId: string, targets: readonly SuppressionTarget[]): Promise<boolean[]>;
}
