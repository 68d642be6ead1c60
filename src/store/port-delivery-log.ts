/**
 * Storage operations of the delivery log: every attempt and outcome of a push (and of the send
 * API's expansion: queued, suppressed), kept for `delivery_log.retention_days` and swept by the
 * janitor, with per-type open rates. Part of {@link StorePort}; implemented by both adapters;
 * tested in `test/store/contract/delivery-log.ts`.
 *
 * Entries are appended with the store clock's time and read back by app, optionally by recipient
 * or by notification, oldest first. Open rates count, per UTC day and notification type, the
 * (notification, recipient) pairs that were sent (counted once per append call, however many
 * devices took the push) and the `opened` entries (callers append one per pair: the route dedupes).
 * A sweep removes the entries older than its cutoff and the day counters of days that ended
 * before it.
 */

/**
 * - `queued`: expanded and on the outbound queue; `suppressed`: a gate stopped it (`error` says which);
 * - `sent`: a device took it (`providerMessageId` when the provider gave one); `failed`: a device
 *   refused it for good (`error`); `retrying`: every device failed retryably, it will be tried again;
 * - `opened`: the recipient opened it.
 */
export type DeliveryStatus = 'queued' | 'suppressed' | 'sent' | 'failed' | 'retrying' | 'opened';

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['queued', 'suppressed', 'sent', 'failed', 'retrying', 'opened'];

/** An entry handed to {@link DeliveryLogStore.appendDeliveryLog}. Optional fields never given are absent when read. */
export interface NewDeliveryLogEntry {
  appId: string;
  /** The send API's notification id, or the triggering event id of a relay notification. */
  notificationId: string;
  recipient: string;
  /** The notification type (the app's type for the send API). */
  type: string;
  status: DeliveryStatus;
  transport?: string;
  /** A short prefix of the device token, never the whole token. */
  tokenPrefix?: string;
  providerMessageId?: string;
  /** Why it failed or was suppressed. */
  error?: string;
  /** Time the attempt took, ms. */
  latencyMs?: number;
}

export interface DeliveryLogEntry extends NewDeliveryLogEntry {
  /** When it was appended (store clock, ms). */
  atMs: number;
}

export interface DeliveryLogQuery {
  recipient?: string;
  notificationId?: string;
  /** Only entries appended at or after this time (ms). */
  sinceMs?: number;
  /** Most entries returned (the oldest ones matching). */
  limit: number;
}

/** Open rate of one notification type. */
export interface TypeOpenRate {
  type: string;
  sent: number;
  opened: number;
}

export interface DeliveryLogStore {
  /** Append entries, all at the store's now. [] does nothing. */
  appendDeliveryLog(entries: readonly NewDeliveryLogEntry[]): Promise<void>;

  /** Entries of `appId` matching `query`, oldest first (entries of one append keep their order). */
  readDeliveryLog(appId: string, query: DeliveryLogQuery): Promise<DeliveryLogEntry[]>;

  /**
   * Remove up to `limit` entries of `appId` older than `cutoffMs`, oldest first, and the day
   * counters of days that ended at or before the cutoff. Returns the entries removed.
   */
  sweepDeliveryLog(appId: string, cutoffMs: number, limit: number): Promise<number>;

  /** Sent and opened counts per type over the UTC days from the one holding `sinceMs`, types in name order. */
  deliveryOpenRates(appId: string, sinceMs: number): Promise<TypeOpenRate[]>;
}

/** Length of a UTC day, the granularity of open-rate counters. */
export const DELIVERY_STATS_DAY_MS = 86_400_000;

/** The UTC day number of `ms`. */
export function deliveryStatsDay(ms: number): number {
  return Math.floor(ms / DELIVERY_STATS_DAY_MS);
}

/**
 * The stats increments of one append: `sent` once per distinct (notification, recipient) with a
 * `sent` entry, `opened` once per `opened` entry; keyed by app and type. Shared by both adapters
 * so they count alike.
 */
export function deliveryStatsIncrements(
  entries: readonly NewDeliveryLogEntry[],
): Array<{ appId: string; type: string; sent: number; opened: number }> {
  const sentPairs = new Set<string>();
  const byKey = new Map<string, { appId: string; type: string; sent: number; opened: number }>();
  const bucket = (entry: NewDeliveryLogEntry) => {
    const key = `${entry.appId}\n${entry.type}`;
    let counts = byKey.get(key);
    if (!counts) {
      counts = { appId: entry.appId, type: entry.type, sent: 0, opened: 0 };
      byKey.set(key, counts);
    }
    return counts;
  };
  for (const entry of entries) {
    if (entry.status === 'sent') {
      const pair = `${entry.appId}\n${entry.notificationId}\n${entry.recipient}`;
      if (sentPairs.has(pair)) continue;
      sentPairs.add(pair);
      bucket(entry).sent += 1;
    } else if (entry.status === 'opened') bucket(entry).opened += 1;
  }
  return [...byKey.values()];
}
