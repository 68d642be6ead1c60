/**
 * `GET /v1/inbox/socket`: live count hints over a WebSocket (issue 13). The upgrade request is
 * authenticated with NIP-98 (method `GET`, `u` the socket's absolute `http(s)` URL); once open,
 * the server sends `{"type": "like", "totalNew": 12}` whenever one of the caller's counters
 * changes, on whichever process the change happened: hints come through the store
 * (`subscribeInboxHints`: Redis pub/sub, or the SQLite store's in-process bus, that store being
 * single-process). Hints are advisory: a client that reconnects reads `GET /v1/inbox/counts`.
 * The client sends nothing but control frames; the server pings every
 * {@link INBOX_SOCKET_PING_MS} and drops a peer that missed the previous pong.
 *
 * Served with the `ws` library on the HTTP server's `upgrade` event, beside ntfy's own WebSocket
 * handler (which leaves {@link INBOX_SOCKET_PATH} alone).
 *
 * Bounded per client (issue 35): at most `inbox.max_sockets_per_pubkey` open sockets per user and
 * `inbox.max_sockets_per_address` per client address (`server.trusted_proxies`); one more is
 * refused with 429 `TOO_MANY_INBOX_SOCKETS` before the upgrade. The counts are this process's
 * open sockets (a socket is a connection to one process, and what it costs, memory and a file
 * descriptor, is that process's): with N replicas behind a balancer a client holds at most N times
 * the bound in all, and each replica's own bound is what keeps that replica up.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { InboxHint } from '../store/port-inbox.ts';
import type { StorePort } from '../store/port.ts';
import { DEFAULT_APP_ID } from '../config/apps.ts';
import { HTTP_ERRORS } from './errors.ts';
import { checkNip98, nip98SignedUrl, type Nip98Auth } from './nip98-auth.ts';
import type { ClientAddressPolicy } from './client-address.ts';
import { INBOX_MAX_SOCKETS_PER_ADDRESS, INBOX_MAX_SOCKETS_PER_PUBKEY, INBOX_MAX_USERS_PER_ADDRESS_PER_DAY } from '../config/defaults.ts';
import { admitInboxUser } from './inbox.ts';
import type { RateRefusal, RequestLimit } from './rate-limits.ts';

export const INBOX_SOCKET_PATH = '/v1/inbox/socket';
/** Keepalive ping interval: inside the 60 s idle timeouts of common proxies. */
export const INBOX_SOCKET_PING_MS = 30_000;
const STATUS_TEXT: Record<number, string> = { 401: 'Unauthorized', 404: 'Not Found', 429: 'Too Many Requests' };
/** A client has nothing to say; anything bigger than a short control payload closes the socket. */
const MAX_CLIENT_PAYLOAD_BYTES = 125;

export interface InboxSocketDeps {
  /** The default app's store view. */
  store: StorePort;
  /**
   * Tenancy: the store view of a configured app, or undefined for an unknown one. The upgrade
   * names its app with `X-App` (none: the default app; unknown: 404). Absent: one app.
   */
  storeOf?: (appId: string) => StorePort | undefined;
  auth: Nip98Auth;
  metrics: Metrics;
  logger: Logger;
  /** Ping interval; tests shorten it. */
  pingMs?: number;
  /** Who is asking (`server.trusted_proxies`): the per-address bound's key. */
  clientAddresses: ClientAddressPolicy;
  /** `inbox.max_sockets_per_pubkey`; absent: the default. */
  maxSocketsPerPubkey?: number;
  /** `inbox.max_sockets_per_address`; absent: the default. */
  maxSocketsPerAddress?: number;
  /** `inbox.max_users_per_address_per_day` (shared with the user API); absent: the default. */
  maxUsersPerAddressPerDay?: number;
  /**
   * Whether another handler (ntfy's) serves the other upgrade paths. When none does, upgrades to
   * any other path are refused here with 404 instead of being left hanging.
   */
  otherUpgradesHandled: boolean;
  /** Upgrade paths another handler of this process always takes (the NIP-9a relay endpoint): never refused here. */
  pathsServedElsewhere?: ReadonlySet<string>;
  /**
   * Upgrades per client address (checked before the signature) and per pubkey (after), group
   * `inbox_socket` of `rate-limits.ts`; over either, 429 with `Retry-After`.
   */
  limits?: { address: RequestLimit; pubkey: RequestLimit; addressOf(request: IncomingMessage): string };
}

export interface InboxSockets {
  /** Close every socket and stop hearing hints. */
  close(): Promise<void>;
}

/** The URL a client signed for an upgrade: the public base (as http(s)), or the request's own Host. */
/** The URL a socket's client signed: `server.public_url` when set, else the scheme and Host as received. */
function signedUpgradeUrl(request: IncomingMessage, publicUrl: string | undefined): string {
  const secure = (request.socket as { encrypted?: boolean }).encrypted === true;
  return nip98SignedUrl(publicUrl, {
    scheme: secure ? 'https' : 'http',
    host: request.headers.host ?? 'localhost',
    pathAndQuery: request.url ?? '/',
  });
}

/** A header Node may hand over as a list (a repeated header): its values joined, as a proxy chain reads. */
function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}

function refuse(socket: Duplex, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const json = JSON.stringify(body);
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\n${extra}Connection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`,
  );
}

/** 429 `RATE_LIMITED` with `Retry-After`, the catalogue's body. */
function refuseRateLimited(socket: Duplex, refusal: RateRefusal): void {
  refuse(socket, 429, { error: HTTP_ERRORS.RATE_LIMITED.message, code: 'RATE_LIMITED' }, { 'Retry-After': String(refusal.retryAfterSecs) });
}

/** Serve the hint socket on `server`. */
export function attachInboxSockets(server: Server, deps: InboxSocketDeps): InboxSockets {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_PAYLOAD_BYTES, perMessageDeflate: false });
  /** Sockets by `{app}:{pubkey}`: a user of two apps hears each app's hints on that app's sockets only. */
  const byPubkey = new Map<string, Set<WebSocket>>();
  const alive = new WeakSet<WebSocket>();
  const unsubscribes = new Map<string, Promise<() => Promise<void>>>();
  const maxPerPubkey = deps.maxSocketsPerPubkey ?? INBOX_MAX_SOCKETS_PER_PUBKEY;
  const maxPerAddress = deps.maxSocketsPerAddress ?? INBOX_MAX_SOCKETS_PER_ADDRESS;
  /**
   * Sockets held or being opened, per pubkey (across apps: one person's budget) and per client
   * address. Taken before the upgrade's own awaits, so concurrent upgrades cannot all pass the check.
   */
  const perPubkey = new Map<string, number>();
  const perAddress = new Map<string, number>();
  const take = (counts: Map<string, number>, key: string): void => void counts.set(key, (counts.get(key) ?? 0) + 1);
  const give = (counts: Map<string, number>, key: string): void => {
    const left = (counts.get(key) ?? 0) - 1;
    if (left > 0) counts.set(key, left);
    else counts.delete(key);
  };

  const onHint =
    (appId: string) =>
    (hint: InboxHint): void => {
      const sockets = byPubkey.get(`${appId}:${hint.pubkey}`);
      if (!sockets) return;
      const frame = JSON.stringify({ type: hint.type, totalNew: hint.totalNew });
      for (const ws of sockets) ws.send(frame);
    };
  // One store subscription per app for the process, taken with the app's first socket.
  const subscribed = (appId: string, store: StorePort): Promise<() => Promise<void>> => {
    let unsubscribe = unsubscribes.get(appId);
    if (!unsubscribe) unsubscribes.set(appId, (unsubscribe = store.subscribeInboxHints(onHint(appId))));
    return unsubscribe;
  };

  const pinger = setInterval(() => {
    for (const sockets of byPubkey.values()) {
      for (const ws of sockets) {
        if (!alive.has(ws)) {
          ws.terminate();
          continue;
        }
        alive.delete(ws);
        ws.ping();
      }
    }
  }, deps.pingMs ?? INBOX_SOCKET_PING_MS);
  pinger.unref();

  const register = (key: string, ws: WebSocket, release: () => void): void => {
    let sockets = byPubkey.get(key);
    if (!sockets) byPubkey.set(key, (sockets = new Set()));
    sockets.add(ws);
    alive.add(ws);
    deps.metrics.inboxSockets.inc();
    ws.on('pong', () => alive.add(ws));
    ws.on('error', (err) => deps.logger.debug({ err: err.message }, 'inbox socket error'));
    ws.on('close', () => {
      release();
      deps.metrics.inboxSockets.dec();
      sockets.delete(ws);
      if (sockets.size === 0) byPubkey.delete(key);
    });
  };

  const upgrade = async (request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> => {
    const named = request.headers['x-app'];
    const appId = typeof named === 'string' && named !== '' ? named : DEFAULT_APP_ID;
    const store = appId === DEFAULT_APP_ID ? deps.store : deps.storeOf?.(appId);
    if (!store) {
      deps.metrics.inboxApiRequests.inc({ route: 'socket', outcome: 'NOT_FOUND' });
      refuse(socket, 404, { error: HTTP_ERRORS.NOT_FOUND.message, code: 'NOT_FOUND' });
      return;
    }
    const limits = deps.limits;
    const byAddress = limits ? await limits.address.take(limits.addressOf(request)) : null;
    if (byAddress) {
      deps.metrics.inboxApiRequests.inc({ route: 'socket', outcome: 'RATE_LIMITED' });
      refuseRateLimited(socket, byAddress);
      return;
    }
    const result = await checkNip98(deps.auth, {
      method: request.method ?? 'GET',
      url: signedUpgradeUrl(request, deps.auth.publicUrl),
      authorization: request.headers.authorization,
      path: INBOX_SOCKET_PATH,
    });
    if (!result.ok) {
      deps.metrics.inboxApiRequests.inc({ route: 'socket', outcome: 'NIP98_UNAUTHORIZED' });
      refuse(socket, 401, { error: `${HTTP_ERRORS.NIP98_UNAUTHORIZED.message}: ${result.reason}`, code: 'NIP98_UNAUTHORIZED' });
      return;
    }
    const bySigner = limits ? await limits.pubkey.take(result.pubkey) : null;
    if (bySigner) {
      deps.metrics.inboxApiRequests.inc({ route: 'socket', outcome: 'RATE_LIMITED' });
      refuseRateLimited(socket, bySigner);
      return;
    }
    const address = deps.clientAddresses.clientAddress(request.socket.remoteAddress, headerValue(request.headers['x-forwarded-for']));
    const overPubkey = (perPubkey.get(result.pubkey) ?? 0) >= maxPerPubkey;
    if (overPubkey || (perAddress.get(address) ?? 0) >= maxPerAddress) {
      const bound = overPubkey ? `inbox.max_sockets_per_pubkey (${maxPerPubkey})` : `inbox.max_sockets_per_address (${maxPerAddress})`;
      deps.metrics.inboxApiRequests.inc({ route: 'socket', outcome: 'TOO_MANY_INBOX_SOCKETS' });
      deps.logger.warn({ path: INBOX_SOCKET_PATH, pubkey: result.pubkey, address, bound }, 'inbox socket refused: too many open');
      refuse(socket, 429, { error: `${HTTP_ERRORS.TOO_MANY_INBOX_SOCKETS.message}; ${bound}`, code: 'TOO_MANY_INBOX_SOCKETS' });
      return;
    }
    take(perPubkey, result.pubkey);
    take(perAddress, address);
    let refusedUser: Awaited<ReturnType<typeof admitInboxUser>> = null;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      give(perPubkey, result.pubkey);
      give(perAddress, address);
    };
    try {
      // Subscribed before the socket opens, so no hint after the client's open is missed.
      await subscribed(appId, store);
      refusedUser = await admitInboxUser(
        store,
        address,
        result.pubkey,
        deps.maxUsersPerAddressPerDay ?? INBOX_MAX_USERS_PER_ADDRESS_PER_DAY,
      );
    } catch (err) {
      release();
      throw err;
    }
    if (refusedUser) {
      release();
      deps.metrics.inboxApiRequests.inc({ route: 'socket', outcome: refusedUser.error.code });
      deps.logger.warn({ path: INBOX_SOCKET_PATH, address, reason: refusedUser.error.message }, 'inbox socket refused');
      refuse(socket, 429, refusedUser.error.toJSON(), { 'Retry-After': String(refusedUser.retryAfterSecs) });
      return;
    }
    if (socket.destroyed) {
      release();
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      deps.metrics.inboxApiRequests.inc({ route: 'socket', outcome: 'ok' });
      register(`${appId}:${result.pubkey}`, ws, release);
    });
  };

  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = new URL(request.url ?? '/', 'http://upgrade.invalid').pathname;
    if (path !== INBOX_SOCKET_PATH) {
      if (!deps.otherUpgradesHandled && deps.pathsServedElsewhere?.has(path) !== true)
        refuse(socket, 404, { error: HTTP_ERRORS.NOT_FOUND.message, code: 'NOT_FOUND' });
      return;
    }
    upgrade(request, socket, head).catch((err: unknown) => {
      deps.logger.error({ err: (err as Error).message }, 'inbox socket upgrade failed');
      refuse(socket, 500, { error: HTTP_ERRORS.INTERNAL.message, code: 'INTERNAL' });
    });
  });

  return {
    async close() {
      clearInterval(pinger);
      for (const sockets of byPubkey.values()) for (const ws of sockets) ws.terminate();
      byPubkey.clear();
      wss.close();
      await Promise.allSettled([...unsubscribes.values()].map(async (unsubscribe) => (await unsubscribe)()));
    },
  };
}
