/**
 * Operator actions on dead letters, shared by the HTTP admin routes (`dlq.ts`) and the CLI
 * (`nostr-push dlq`): the JSON view of a dead letter, and finding which queue an id is dead in.
 */
import type { DeadLetter } from '../../store/port-dlq.ts';
import type { QueueName, StorePort } from '../../store/port.ts';

export const DEAD_LETTER_QUEUES: readonly QueueName[] = ['inbound', 'outbound'];

export function isQueueName(value: unknown): value is QueueName {
  return value === 'inbound' || value === 'outbound';
}

/** A dead letter as the admin API and the CLI print it (times as ISO 8601). */
export interface DeadLetterView {
  id: string;
  queue: QueueName;
  lane: DeadLetter['lane'];
  item: unknown;
  reason: string;
  attempts: number;
  lastError: string | null;
  firstFailedAt: string;
  lastFailedAt: string;
  deadAt: string;
}

export function deadLetterView(queue: QueueName, dead: DeadLetter): DeadLetterView {
  return {
    id: dead.id,
    queue,
    lane: dead.lane,
    item: dead.payload,
    reason: dead.reason,
    attempts: dead.attempts,
    lastError: dead.lastError,
    firstFailedAt: new Date(dead.firstFailedAtMs).toISOString(),
    lastFailedAt: new Date(dead.lastFailedAtMs).toISOString(),
    deadAt: new Date(dead.deadAtMs).toISOString(),
  };
}

/** Where a dead letter was found: one queue, none, or several (the caller must name one). */
export type DeadLetterLocation = { kind: 'found'; queue: QueueName } | { kind: 'missing' } | { kind: 'ambiguous' };

/** The queue `id` is dead in: `queue` when given, else whichever of the queues holds it. */
export async function locateDeadLetter(store: StorePort, id: string, queue?: QueueName): Promise<DeadLetterLocation> {
  const candidates = queue ? [queue] : DEAD_LETTER_QUEUES;
  const found: QueueName[] = [];
  for (const candidate of candidates) if ((await store.getDead(candidate, id)) !== null) found.push(candidate);
  const [only] = found;
  if (only === undefined) return { kind: 'missing' };
  return found.length === 1 ? { kind: 'found', queue: only } : { kind: 'ambiguous' };
}
