/**
 * Storage operations of like/repost coalescing (seed 000, reference §8): atomic ingest with a
 * per-event disposition, the per-recipient token bucket and rolling emission window, and the leased
 * flush outbox. Part of {@link StorePort}; implemented by both adapters; tested in
 * `test/store/contract/coalesce.ts`.
 */
export interface CoalesceStore {}
