/** Where a worker thread starts: {@link workerBody} tells it which module to run. */
export const WORKER_ENTRY_URL = new URL('./worker-entry.mjs', import.meta.url);

/** The `workerData.body` of a worker module given by its URL (`new URL('./x.ts', import.meta.url)` or `.js`). */
export function workerBody(moduleUrl: URL): string {
  return moduleUrl.href.replace(/\.(ts|js)$/, '');
}
