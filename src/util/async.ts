/** Small waiting and pacing helpers every stage uses. */

/** Resolve after `ms`, or reject with an AbortError as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError());
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function abortError(): Error {
  const err = new Error('aborted');
  err.name = 'AbortError';
  return err;
}

/**
 * Resolve on the next turn of the event loop. A handler over a synchronous store (SQLite)
 * resolves in microtasks only, so without this a sequential consumer would starve every socket
 * in the process (relays, HTTP/2 sends) until its whole batch is done.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Run `fn` over `items` with at most `limit` in flight, yielding to I/O between items. */
export async function forEachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  if (limit <= 1) {
    for (const item of items) {
      await fn(item);
      await yieldToEventLoop();
    }
    return;
  }
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
      await yieldToEventLoop();
    }
  });
  await Promise.all(lanes);
}
