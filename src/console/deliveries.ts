/**
 * The user page's deliveries: one row per push, from the delivery log's entries (which are one per
 * step and device: `queued` by the send scheduler, then `sent` / `failed` / `retrying` per device
 * by the delivery stage, `opened` when the app reports it). A row says what became of the push,
 * and what the provider answered:
 *
 * - `outcome`: `sent` when any device took it; otherwise the latest step's status (`failed`,
 *   `retrying`, `suppressed`), or `queued` while nothing else is logged;
 * - `answer`: the provider's message ids of the devices that took it, or the latest error;
 * - `devices`: each device's latest attempt (transport, token prefix, status, answer);
 * - `opened`: whether an open was reported.
 */
import type { DeliveryLogEntry, DeliveryStatus } from '../store/port-delivery-log.ts';

export interface DeviceAttemptView {
  transport: string | null;
  tokenPrefix: string | null;
  status: DeliveryStatus;
  answer: string | null;
}

export interface PushRow {
  notificationId: string;
  type: string;
  /** When the first entry of the push was logged. */
  firstAt: string;
  /** When its latest entry was logged. */
  lastAt: string;
  outcome: DeliveryStatus;
  answer: string | null;
  transports: string[];
  devices: DeviceAttemptView[];
  opened: boolean;
}

const iso = (ms: number): string => new Date(ms).toISOString();
const answerOf = (entry: DeliveryLogEntry): string | null => entry.providerMessageId ?? entry.error ?? null;

/** The pushes of `entries` (oldest first, as the log reads), newest push first, at most `limit`. */
export function pushRows(entries: readonly DeliveryLogEntry[], limit: number): PushRow[] {
  const byPush = new Map<string, DeliveryLogEntry[]>();
  for (const entry of entries) {
    const list = byPush.get(entry.notificationId);
    if (list) list.push(entry);
    else byPush.set(entry.notificationId, [entry]);
  }
  const rows = [...byPush.values()].map(pushRow);
  // Newest push first: by its latest entry (a retried push moves up when it is retried).
  rows.sort((a, b) => (a.lastAt < b.lastAt ? 1 : a.lastAt > b.lastAt ? -1 : 0));
  return rows.slice(0, limit);
}

function pushRow(entries: readonly DeliveryLogEntry[]): PushRow {
  const first = entries[0] as DeliveryLogEntry;
  const last = entries[entries.length - 1] as DeliveryLogEntry;
  const attempts = entries.filter((e) => e.status !== 'queued' && e.status !== 'opened');
  // Each device's latest attempt, keyed by its token prefix (a device-less step keys as itself).
  const devices = new Map<string, DeviceAttemptView>();
  attempts.forEach((e, i) =>
    devices.set(e.tokenPrefix ?? `#${i}`, {
      transport: e.transport ?? null,
      tokenPrefix: e.tokenPrefix ?? null,
      status: e.status,
      answer: answerOf(e),
    }),
  );
  const sent = attempts.filter((e) => e.status === 'sent');
  const latest = attempts[attempts.length - 1];
  const outcome: DeliveryStatus = sent.length > 0 ? 'sent' : (latest?.status ?? 'queued');
  const answer =
    sent.length > 0
      ? sent
          .map((e) => e.providerMessageId)
          .filter((id): id is string => id !== undefined)
          .join(', ') || null
      : latest
        ? answerOf(latest)
        : null;
  return {
    notificationId: first.notificationId,
    type: first.type,
    firstAt: iso(first.atMs),
    lastAt: iso(last.atMs),
    outcome,
    answer,
    transports: [...new Set(attempts.map((e) => e.transport).filter((t): t is string => t !== undefined))],
    devices: [...devices.values()],
    opened: entries.some((e) => e.status === 'opened'),
  };
}
