/**
 * The coalescing settings, taken from the `service.coalesce_*` and `service.recipient_*`
 * configuration keys (reference §1.5), and the collapse key of a group (reference §8.1).
 */
import type { ServiceConfig } from '../../config/defaults.ts';
import type { CoalescePolicy } from '../../store/port-coalesce.ts';
import { createBLAKE3 } from 'hash-wasm';

/** Bytes of BLAKE3(group id) in a collapse key: 16 bytes, 32 hex chars, within APNs' 64-byte `apns-collapse-id`. */
export const COLLAPSE_KEY_BYTES = 16;

/**
 * The collapse key shared by a group's immediate pushes and its summary: hex of the first 16
 * bytes of BLAKE3(group id), as divine-push-service derives it, so a group started by divine and
 * finished here still collapses into one banner on iOS.
 */
export function collapseKeyForGroup(groupId: string): string {
  return Buffer.from(blake3Digest(Buffer.from(groupId, 'utf8')).subarray(0, COLLAPSE_KEY_BYTES)).toString('hex');
}

/**
 * BLAKE3 in WebAssembly (hash-wasm): one instance, reset per call, synchronous once created.
 * @noble/hashes' pure-JS BLAKE3 left ~16 KB of garbage per key (an object per mixing step), 6 %
 * of the NIP-9a receiver's allocations, where nearly every push starts a group of its own.
 */
const blake3Hasher = await createBLAKE3();

/** BLAKE3 (32-byte hash mode) of `bytes`. */
export function blake3Digest(bytes: Uint8Array): Uint8Array {
  return blake3Hasher.init().update(bytes).digest('binary');
}

export function coalescePolicyFromConfig(service: ServiceConfig): CoalescePolicy {
  return {
    windowSecs: service.coalesce_window_secs,
    immediateLimit: service.coalesce_immediate_limit,
    groupTtlSecs: service.coalesce_group_ttl_secs,
    graceSecs: service.coalesce_logical_expiry_grace_secs,
    throttleCapacity: service.recipient_throttle_capacity,
    throttleRefillSecs: service.recipient_throttle_refill_secs,
    dailyWindowSecs: service.recipient_daily_window_secs,
    dailyCap: service.recipient_daily_cap,
  };
}

/** What the flush worker needs beyond the store policy. */
export interface FlushSettings {
  /** Lease of one claimed group (`coalesce_lease_secs`); must exceed twice the flush timeout. */
  leaseSecs: number;
  /** Floor of the requeue delay after an all-token retryable failure (`coalesce_retry_secs`). */
  retrySecs: number;
  /** Idle poll when nothing is due (`coalesce_poll_millis`). */
  pollMs: number;
  /** Hard bound on one flush (`coalesce_flush_timeout_secs`). */
  flushTimeoutMs: number;
}

export function flushSettingsFromConfig(service: ServiceConfig): FlushSettings {
  return {
    leaseSecs: service.coalesce_lease_secs,
    retrySecs: service.coalesce_retry_secs,
    pollMs: service.coalesce_poll_millis,
    flushTimeoutMs: service.coalesce_flush_timeout_secs * 1000,
  };
}
