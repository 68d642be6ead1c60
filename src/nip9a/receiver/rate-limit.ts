/**
 * Per-callback token buckets: each callback URL may receive `ratePerSec` relay POSTs a second,
 * sustained, with bursts of up to `burst`. Kept in this api process's memory: a fleet of N api
 * processes behind a balancer admits up to N times the rate, which bounds the work one callback
 * can cause without a store round trip on the hot path.
 */
import type { Clock } from '../../store/port.ts';

/** Buckets kept before idle ones are dropped; an idle bucket is full, so dropping it changes nothing. */
export const MAX_TRACKED_CALLBACKS = 50_000;

interface Bucket {
  tokens: number;
  atMs: number;
  /** The last take was refused: the next refusal is part of the same flood. */
  refusing: boolean;
}

/** `firstRefusal`: the first refusal since the callback was last allowed (callers log that one, not the flood). */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterSecs: number; firstRefusal: boolean };

export class CallbackRateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly ratePerSec: number,
    private readonly burst: number,
    private readonly clock: Clock,
    private readonly maxTracked = MAX_TRACKED_CALLBACKS,
  ) {}

  /** Take one token of `callbackId`'s bucket, or say how long until one is back. */
  take(callbackId: string): RateDecision {
    const nowMs = this.clock.nowMs();
    let bucket = this.buckets.get(callbackId);
    if (!bucket) {
      if (this.buckets.size >= this.maxTracked) this.dropFull(nowMs);
      bucket = { tokens: this.burst, atMs: nowMs, refusing: false };
      this.buckets.set(callbackId, bucket);
    } else {
      this.refill(bucket, nowMs);
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      bucket.refusing = false;
      return { allowed: true };
    }
    const firstRefusal = !bucket.refusing;
    bucket.refusing = true;
    return { allowed: false, retryAfterSecs: Math.max(1, Math.ceil((1 - bucket.tokens) / this.ratePerSec)), firstRefusal };
  }

  private refill(bucket: Bucket, nowMs: number): void {
    const elapsedSecs = Math.max(0, nowMs - bucket.atMs) / 1000;
    bucket.tokens = Math.min(this.burst, bucket.tokens + elapsedSecs * this.ratePerSec);
    bucket.atMs = nowMs;
  }

  /** Forget every bucket that has refilled completely (it would be recreated full). */
  private dropFull(nowMs: number): void {
    for (const [id, bucket] of this.buckets) {
      this.refill(bucket, nowMs);
      if (bucket.tokens >= this.burst) this.buckets.delete(id);
    }
  }

  /** Buckets currently tracked (for tests). */
  get size(): number {
    return this.buckets.size;
  }
}
