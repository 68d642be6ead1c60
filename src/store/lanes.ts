/**
 * Priority lanes of the durable queues, shared by both adapters: the lane order and how one lease
 * call divides its batch between the lanes.
 *
 * Each lane is a queue of its own (its own ready and leased sets on Redis, its own index range on
 * SQLite), never a score inside one queue: a backlog of low items is simply not looked at while
 * critical ones are due.
 */
import type { Lane } from './port.ts';

/** Every lane, in the order a lease drains them. */
export const LANES: readonly Lane[] = ['critical', 'normal', 'low'];

/** The lane of an item enqueued without one. */
export const DEFAULT_LANE: Lane = 'normal';

/**
 * Share of every lease batch first offered to each lane below critical: 1/16. Strict priority
 * would let a steady stream of critical (or normal) items hold the lower lanes back forever; with
 * this share a full batch of the stages' windows (256 inbound, 800 outbound, and at least half of
 * that per lease call) always carries a few low and normal items when they are due, while
 * critical items still get 7/8 of every batch, so a backlog below them costs critical almost
 * nothing. Slots a lower lane does not fill go back to the others.
 */
export const LOWER_LANE_RESERVED_SHARE = 1 / 16;

/**
 * Below this batch size nothing is reserved (strict priority): a batch of 2 or 3 reserving a
 * slot per lower lane would hand them as much as critical. The queue worker leases at least
 * half its window at a time, far above this.
 */
export const MIN_BATCH_FOR_RESERVED_SLOTS = 4;

/** Slots of a batch of `max` first offered to each of the normal and low lanes. */
export function reservedLaneSlots(max: number): number {
  if (max < MIN_BATCH_FOR_RESERVED_SLOTS) return 0;
  return Math.max(1, Math.floor(max * LOWER_LANE_RESERVED_SHARE));
}

/** One pass of a lease call: take up to `limit` due items of `lane` (`undefined`: whatever is left of the batch). */
export interface LanePass {
  lane: Lane;
  limit: number | undefined;
}

/**
 * The passes of one lease call of `max`, in the order both adapters run them: the reserved slots
 * of low and normal, then critical, normal and low for the rest of the batch. (The batch handed
 * back lists critical items first whatever pass took them.)
 */
export function leasePasses(max: number): LanePass[] {
  const reserved = reservedLaneSlots(max);
  const passes: LanePass[] = [];
  if (reserved > 0) passes.push({ lane: 'low', limit: reserved }, { lane: 'normal', limit: reserved });
  passes.push({ lane: 'critical', limit: undefined }, { lane: 'normal', limit: undefined }, { lane: 'low', limit: undefined });
  return passes;
}

export function isLane(value: unknown): value is Lane {
  return value === 'critical' || value === 'normal' || value === 'low';
}

/** Empty per-lane counts, to add to. */
export function zeroLaneStats(): Record<Lane, { ready: number; leased: number }> {
  return { critical: { ready: 0, leased: 0 }, normal: { ready: 0, leased: 0 }, low: { ready: 0, leased: 0 } };
}
