/**
 * Storage operations of new-post bells (seed 000, reference §3.4, §3.5, §9): the notify-list index
 * (forward and reverse, replaced atomically), the bell rate window, and the durable fan-out job
 * queue. Part of {@link StorePort}; implemented by both adapters; tested in
 * `test/store/contract/bells.ts`.
 */
export interface NotifyListStore {}
