/**
 * The first admin key: on a start where the default app has no live admin key, one is made,
 * stored as a hash like every key, and printed once, in one warn line with the service's npub (the
 * only place the key ever appears). `nostr-push apps keys create default --role admin` makes more;
 * revoking them all makes the next start print a fresh one.
 *
 * Two replicas starting together on an empty store may each make one; both work, each printed by
 * its own process.
 */
import type { Logger } from '../observability/logger.ts';
import { createApiKey } from '../platform/api-keys.ts';
import { DEFAULT_APP_ID } from '../platform/apps.ts';
import type { StorePort } from '../store/port.ts';

/** Make and print the first admin key when there is none. Returns the key made, or null. */
export async function ensureAdminKey(store: StorePort, npub: string, logger: Logger): Promise<string | null> {
  const keys = await store.listApiKeys(DEFAULT_APP_ID);
  if (keys.some((k) => k.role === 'admin' && k.revokedAtMs === null)) return null;
  const issued = await createApiKey(store, DEFAULT_APP_ID, 'admin');
  logger.warn(
    { npub, keyId: issued.record.id, consolePath: '/console' },
    `first start: no admin key existed, so one was made. Log in to /console with ${issued.key} (shown only this once; stored as a hash). Service ${npub}`,
  );
  return issued.key;
}
