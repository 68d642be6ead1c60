/**
 * The wiring of users' relays (issue 36) into the engine and the listener roles: what each is
 * given when `nostr.user_relays.enabled` is on, and nothing when it is off.
 */
import { USER_RELAY_LOOPBACK_ACKNOWLEDGEMENT } from '../config/defaults.ts';
import { optionalEventKinds } from '../engine/events/handler.ts';
import { createRelayQuery } from '../engine/relay-query.ts';
import type { RouterDeps } from '../engine/router.ts';
import {
  RELAY_LIST_FETCH_BATCH,
  relayListOf,
  storeUserRelayList,
  UserRelayListFetcher,
  USER_RELAY_LIST_KINDS,
  type UserRelayRegistration,
} from '../engine/user-relay-lists.ts';
import { runUserRelayBackfill, TASK_USER_RELAY_BACKFILL } from '../engine/user-relay-backfill.ts';
import type { ListenerOptions, UserRelaySummary } from '../listener/index.ts';
import type { HeartbeatUserRelays } from '../store/port-fleet.ts';
import { CONTROL_KINDS, PEOPLE_LIST } from '../nostr/kinds.ts';
import type { Logger } from '../observability/logger.ts';
import type { RoleContext } from './roles.ts';
import { OutboundPolicy, resolverFromEnvironment } from '../net/public-connect.ts';
import { outboundRefusalReporter } from '../net/refusals.ts';

type UserRelayContext = Pick<RoleContext, 'config' | 'store' | 'metrics' | 'verifier' | 'logger'>;

/**
 * What a registration path is given when `nostr.user_relays.enabled` is on, or null when it is
 * off: the one {@link UserRelayRegistration} behind both paths (the engine's 3079 handling and the
 * API's `PUT /v1/devices/{token}`), whose `requestLists` fetches the user's 10002 and 10050 from
 * the configured and profile relays in this process. `fetcher` is its fetcher (for the backfill;
 * `close()` on stop).
 */
export function userRelayRegistration(
  ctx: UserRelayContext,
  log: Logger,
): { registration: UserRelayRegistration; fetcher: UserRelayListFetcher } | null {
  const { config, store, metrics } = ctx;
  if (!config.nostr.user_relays.enabled) return null;
  const fetcher = new UserRelayListFetcher({
    store,
    metrics,
    logger: log,
    relays: [...new Set([...config.nostr.relays, ...config.nostr.profile_relays])],
    query: createRelayQuery({ logger: log, maxEventsPerRelay: USER_RELAY_LIST_KINDS.length * RELAY_LIST_FETCH_BATCH }),
    verifier: ctx.verifier,
    queryTimeoutMs: config.nostr.query_timeout_secs * 1000,
  });
  return { registration: { metrics, requestLists: (pubkey) => fetcher.request(pubkey) }, fetcher };
}

/**
 * {@link userRelayRegistration} of each app, for the API's `PUT /v1/devices/{token}`: the engine
 * may run in another process, so the API's process fetches with fetchers of its own. `of` is
 * undefined for an app with user relays off; `close` stops every fetcher.
 */
export function userRelayRegistrationsOfApps(
  apps: ReadonlyArray<{ id: string } & Pick<RoleContext, 'config' | 'store'>>,
  shared: Pick<RoleContext, 'metrics' | 'verifier' | 'logger'>,
): { of(appId: string): UserRelayRegistration | undefined; close(): Promise<void> } {
  const byApp = new Map<string, ReturnType<typeof userRelayRegistration>>(
    apps.map((app) => [
      app.id,
      userRelayRegistration({ ...shared, config: app.config, store: app.store }, shared.logger.child({ app: app.id })),
    ]),
  );
  return {
    of: (appId) => byApp.get(appId)?.registration,
    close: async () => {
      await Promise.all([...byApp.values()].flatMap((parts) => (parts === null ? [] : [parts.fetcher.close()])));
    },
  };
}

/**
 * The engine's part of users' relays (issue 36), or nothing when `nostr.user_relays.enabled` is
 * off: kinds 10002/10050 stored for users with devices, a registration's `relays`, the fetch of a
 * newly registered user's lists from the configured and profile relays, and the backfill task
 * (`engine/user-relay-backfill.ts`) that looks up users registered before.
 */
export function userRelayListParts(
  ctx: UserRelayContext & Pick<RoleContext, 'supervisor'>,
  log: Logger,
): Pick<RouterDeps, 'userRelays' | 'handleUserRelayList'> {
  const { store, metrics } = ctx;
  const parts = userRelayRegistration(ctx, log);
  if (parts === null) return {};
  const deps = { store, metrics, logger: log };
  const backfillLog = log.child({ task: TASK_USER_RELAY_BACKFILL });
  // Without a relay to ask there is nothing to look up.
  if (ctx.config.nostr.relays.length + ctx.config.nostr.profile_relays.length > 0)
    ctx.supervisor.spawn(TASK_USER_RELAY_BACKFILL, 'tolerated', async (signal) => {
      try {
        await runUserRelayBackfill({ store, fetcher: parts.fetcher, logger: backfillLog }, signal);
      } finally {
        await parts.fetcher.close();
      }
    });
  return {
    userRelays: parts.registration,
    handleUserRelayList: async (event) => {
      const list = relayListOf(event);
      if (list !== null) await storeUserRelayList(deps, event.pubkey, list);
    },
  };
}

/**
 * The listener's part of users' relays (issue 36), or nothing when `nostr.user_relays.enabled` is
 * off: `#p` filters for the content kinds the engine handles (control kinds and lists tag no
 * recipient), gift wraps on DM relays when `events.gift_wraps` is on.
 */
export function userRelayListenerOptions(ctx: UserRelayContext): Pick<ListenerOptions, 'userRelays'> {
  const { config, store } = ctx;
  const settings = config.nostr.user_relays;
  if (!settings.enabled) return {};
  const allowLoopback = settings.allow_loopback === USER_RELAY_LOOPBACK_ACKNOWLEDGEMENT;
  if (allowLoopback) ctx.logger.warn('nostr.user_relays.allow_loopback is on: user relays on ws:// and private addresses are connected to');
  const notTagging = new Set<number>([...CONTROL_KINDS, PEOPLE_LIST, ...USER_RELAY_LIST_KINDS]);
  return {
    userRelays: {
      store,
      kinds: [...new Set([...config.notification.event_kinds, ...optionalEventKinds(config.events)])].filter(
        (kind) => !notTagging.has(kind),
      ),
      giftWraps: config.events.gift_wraps,
      maxConnections: settings.max_connections,
      maxPubkeysPerFilter: settings.max_pubkeys_per_filter,
      refreshMs: settings.refresh_secs * 1000,
      policy: {
        allowLoopback,
        outbound: new OutboundPolicy({
          purpose: 'user_relay',
          rules: { allowLoopback, allowPrivate: false },
          resolver: resolverFromEnvironment(),
          onRefused: outboundRefusalReporter(ctx.metrics, ctx.logger.child({ userRelays: true })),
        }),
      },
    },
  };
}

/** The user relays of every app's listener in this process, summed for the console's heartbeat; null when none runs them. */
export function sumUserRelays(summaries: ReadonlyArray<UserRelaySummary | null>): HeartbeatUserRelays | null {
  const present = summaries.filter((s): s is UserRelaySummary => s !== null);
  if (present.length === 0) return null;
  const sum = (pick: (s: UserRelaySummary) => number): number => present.reduce((total, s) => total + pick(s), 0);
  return {
    watched: sum((s) => s.watched),
    connected: sum((s) => s.connected),
    dropped: sum((s) => s.dropped),
    uncoveredUsers: sum((s) => s.uncoveredUsers),
    requestsSent: sum((s) => s.requestsSent),
  };
}
