/**
 * The first admin key. `serve` calls {@link showFirstAdminKey} once the HTTP port is bound (a start
 * that fails before that makes no key): when the default app has no live admin key, one is made,
 * shown to the operator on its own line, and only then stored (as a hash, like every key).
 *
 * Shown before stored, so every live admin key is one somebody was shown: a start that dies
 * between the two, or whose output could not be written, stores nothing, and the next start makes
 * and shows another. Once one is stored, starts show nothing more; keys made with
 * `nostr-push apps keys create default --role admin` count too (the CLI shows them). Revoking every
 * admin key makes the next start show a fresh one.
 *
 * Two replicas starting together on an empty store may each make one; both work, each shown by
 * its own process.
 */
import type { Logger } from '../observability/logger.ts';
import { issueApiKey } from '../platform/api-keys.ts';
import { DEFAULT_APP_ID } from '../platform/apps.ts';
import type { StorePort } from '../store/port.ts';
import { sleep } from '../util/async.ts';

/** Writes the lines that show a key; resolves once they are written, rejects when they could not be. */
export type ShowLines = (text: string) => Promise<void>;

/** A writer for {@link ShowLines} over a stream (the process's stderr). */
export function showOn(stream: NodeJS.WritableStream): ShowLines {
  return (text) => new Promise((resolve, reject) => stream.write(text, (err) => (err ? reject(err) : resolve())));
}

export interface FirstAdminKeyOptions {
  store: StorePort;
  show: ShowLines;
  logger: Logger;
  /** The service's npub, said with the key. */
  npub: string;
  /** Where to log in with it. */
  consoleUrl: string;
  /** The pause before the first retry of a failed store step; {@link FIRST_ADMIN_KEY_RETRY_BASE_MS} by default. */
  retryBaseMs?: number;
}

/**
 * The text that shows a key: a heading, then the key alone on its line, so `grep npk_` or a
 * double-click copies it whole.
 */
export function firstAdminKeyText(key: string, consoleUrl: string, npub: string): string {
  return (
    `nostr-push: the first admin key of service ${npub}, shown only this once (log in at ${consoleUrl}):\n` +
    `${key}\n` +
    `nostr-push: more with: nostr-push apps keys create default --role admin\n`
  );
}

/** How often a store step of the first admin key is tried before the start goes on without it. */
export const FIRST_ADMIN_KEY_STORE_ATTEMPTS = 5;
/** The pause before the first retry, doubled after each (100, 200, 400, 800 ms: about 1.5 s in all). */
export const FIRST_ADMIN_KEY_RETRY_BASE_MS = 100;

/**
 * Make, show and store an admin key of the default app when it has no live one. Returns the key
 * shown and stored, or null when there was one already, the key could not be shown (nothing is
 * stored then, and the next start tries again), or the store kept failing.
 *
 * Never throws: the service is already serving when this runs, and a store that refuses this one
 * step (a replica acknowledgement that timed out, a lost answer) must not stop it. A store step
 * that failed may have been applied (issue 42), so a refused `createApiKey` on a retry is checked
 * against the store: finding our own record means the earlier try went through.
 */
export async function showFirstAdminKey(options: FirstAdminKeyOptions): Promise<string | null> {
  const { store, logger } = options;
  const keys = await withStoreRetries(options, 'list the api keys', () => store.listApiKeys(DEFAULT_APP_ID));
  if (keys === undefined) {
    logger.error('the api keys could not be read, so no first admin key was made; the next start tries again');
    return null;
  }
  if (keys.some((k) => k.role === 'admin' && k.revokedAtMs === null)) return null;
  const issued = issueApiKey(DEFAULT_APP_ID, 'admin');
  const fields = { npub: options.npub, keyId: issued.record.id, keyPrefix: issued.record.prefix, console: options.consoleUrl };
  try {
    await options.show(firstAdminKeyText(issued.key, options.consoleUrl, options.npub));
  } catch (err) {
    logger.error({ ...fields, err }, 'the first admin key could not be shown, so it was not stored; the next start makes another');
    return null;
  }
  const stored = await withStoreRetries(options, 'store the first admin key', async () => {
    if (await store.createApiKey(issued.record)) return true;
    // Refused: an earlier try whose answer was lost may have stored it. 64 random bits of id and
    // 256 of key: anything else holding that id means the store is wrong, not unlucky.
    const mine = (await store.listApiKeys(DEFAULT_APP_ID)).find((k) => k.id === issued.record.id);
    if (mine?.hash === issued.record.hash) return true;
    throw new Error(`the store refused the first admin key ${issued.record.id}`);
  });
  if (stored === undefined) {
    logger.error(
      fields,
      'the first admin key printed above could not be stored, so it will not log in; the next start makes and shows another ' +
        '(or make one now with: nostr-push apps keys create default --role admin)',
    );
    return null;
  }
  logger.warn(
    fields,
    `no admin key existed, so one was made and printed on its own line (${issued.record.prefix}…); log in at ${options.consoleUrl}`,
  );
  return issued.key;
}

/** `step`'s result, tried up to {@link FIRST_ADMIN_KEY_STORE_ATTEMPTS} times; undefined when every try failed. */
async function withStoreRetries<T>(options: FirstAdminKeyOptions, what: string, step: () => Promise<T>): Promise<T | undefined> {
  const { logger, retryBaseMs = FIRST_ADMIN_KEY_RETRY_BASE_MS } = options;
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      const last = attempt >= FIRST_ADMIN_KEY_STORE_ATTEMPTS;
      logger.warn({ err, attempt, of: FIRST_ADMIN_KEY_STORE_ATTEMPTS }, `could not ${what}${last ? '' : '; trying again'}`);
      if (last) return undefined;
      await sleep(retryBaseMs * 2 ** (attempt - 1));
    }
  }
}
