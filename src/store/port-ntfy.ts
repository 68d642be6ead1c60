/**
 * Storage operations of the built-in UnifiedPush (ntfy-compatible) server: durable per-topic
 * message queues with globally ordered ids, read by cursor, expired by TTL.
 * Part of {@link StorePort}; implemented by both adapters; tested in `test/store/contract/ntfy.ts`.
 */
export interface NtfyTopicStore {}
