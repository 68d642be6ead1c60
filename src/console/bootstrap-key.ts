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

/**
 * Make, show and store an admin key of the default app when it has no live one. Returns the key
 * shown and stored, or null when there was one already or the key could not be shown (nothing is
 * stored then, and the next start tries again).
 */
export async function showFirstAdminKey(options: FirstAdminKeyOptions): Promise<string | null> {
  const { store, logger } = options;
  const keys = await store.listApiKeys(DEFAULT_APP_ID);
  if (keys.some((k) => k.role === 'admin' && k.revokedAtMs === null)) return null;
  const issued = issueApiKey(DEFAULT_APP_ID, 'admin');
  const fields = { npub: options.npub, keyId: issued.record.id, keyPrefix: issued.record.prefix, console: options.consoleUrl };
  try {
    await options.show(firstAdminKeyText(issued.key, options.consoleUrl, options.npub));
  } catch (err) {
    logger.error({ ...fields, err }, 'the first admin key could not be shown, so it was not stored; the next start makes another');
    return null;
  }
  // 64 random bits of id and 256 of key: a clash means the store is wrong, not unlucky.
  if (!(await store.createApiKey(issued.record))) throw new Error(`the store refused the first admin key ${issued.record.id}`);
  logger.warn(
    fields,
    `no admin key existed, so one was made and printed on its own line (${issued.record.prefix}…); log in at ${options.consoleUrl}`,
  );
  return issued.key;
}
