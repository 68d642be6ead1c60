/**
 * The gateway's relay endpoint: a small NIP-01 relay at `/nip9a` on the service's HTTP port that
 * only knows kind 30390 registrations (and kind 5 deletions of them), with NIP-42 AUTH required
 * before anything (seed 003: "Kind 30390 is author-only").
 *
 * On connect the endpoint sends `["AUTH", challenge]`. Until the client answers with a valid kind
 * 22242 (this challenge, a `relay` tag naming this host, `created_at` within ten minutes, a good
 * signature), `EVENT` gets `OK false "auth-required: …"` and `REQ` gets `CLOSED "auth-required: …"`.
 * After it: `EVENT` of the authenticated author's own 30390 or kind 5 (`intake.ts`), `REQ` that
 * returns only that author's registrations (whatever `authors` the filter names) then `EOSE`,
 * and `CLOSE`. Subscriptions are answered from the store and not kept live.
 *
 * The WebSocket upgrade is taken on the shared HTTP server's `upgrade` event (as `src/ntfy/`
 * does); the `ws` package serves the connection.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { CLIENT_AUTH, RELAY_PUSH } from '../../nostr/kinds.ts';
import { isEventRejection, parseEvent, type EventVerifier, type NostrEvent } from '../../nostr/event.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Clock } from '../../store/port.ts';
import type { StoredNip9aRegistration } from '../../store/port-nip9a-gateway.ts';
import { HTTP_ERRORS } from '../../api/errors.ts';
import type { RequestLimit } from '../../api/rate-limits.ts';
import { acceptGatewayEvent, type IntakeDeps } from './intake.ts';

/** The endpoint's path on the HTTP port. */
export const NIP9A_RELAY_PATH = '/nip9a';
/** Largest client frame: a registration is at most 8 KiB, so this leaves room for the envelope. */
export const MAX_CLIENT_FRAME_BYTES = 64 * 1024;
/** Open subscriptions per connection (they are answered at once, so a few suffice). */
export const MAX_SUBSCRIPTIONS = 8;
/** How far an AUTH event's created_at may be from now (NIP-42 suggests about ten minutes). */
export const AUTH_WINDOW_SECS = 600;
const MAX_SUBSCRIPTION_ID_CHARS = 64;

export interface RelayEndpointDeps extends IntakeDeps {
  verifier: EventVerifier;
  clock: Clock;
  logger: Logger;
  /**
   * The `nip9a_registrations` limits (`src/api/rate-limits.ts`), shared with the HTTP bridge:
   * upgrades per client address (429 with `Retry-After`), and each EVENT per address and per
   * authenticated pubkey (`OK false "rate-limited: …"`). Absent: unlimited.
   */
  limits?: { address: RequestLimit; pubkey: RequestLimit; addressOf(request: IncomingMessage): string };
}

/** A REQ filter as far as this endpoint reads it: what narrows the author's own registrations. */
function wants(filter: unknown, stored: StoredNip9aRegistration): boolean {
  if (typeof filter !== 'object' || filter === null) return false;
  const f = filter as Record<string, unknown>;
  if (Array.isArray(f.kinds) && !f.kinds.includes(RELAY_PUSH)) return false;
  if (Array.isArray(f.ids) && !f.ids.includes(stored.eventId)) return false;
  if (Array.isArray(f['#d']) && !f['#d'].includes(stored.d)) return false;
  if (typeof f.since === 'number' && stored.createdAt < f.since) return false;
  if (typeof f.until === 'number' && stored.createdAt > f.until) return false;
  return true;
}

function hostOf(value: string): string | null {
  try {
    return new URL(value).host.toLowerCase();
  } catch {
    return null;
  }
}

class EndpointConnection {
  private readonly challenge = randomBytes(16).toString('hex');
  private pubkey: string | null = null;
  private readonly subscriptions = new Set<string>();

  constructor(
    private readonly deps: RelayEndpointDeps,
    private readonly socket: WebSocket,
    /** The Host the client connected to, which its AUTH `relay` tag must name. */
    private readonly host: string,
    /** The client address the connection came from (per `server.trusted_proxies`). */
    private readonly address: string,
  ) {
    this.send(['AUTH', this.challenge]);
    socket.on('message', (data: RawData, isBinary: boolean) => {
      if (isBinary) return;
      void this.receive(Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.concat(data as Buffer[]).toString('utf8')).catch(
        (err: unknown) => {
          deps.logger.error({ err: (err as Error).message }, 'nip9a relay endpoint: message handling failed');
        },
      );
    });
    socket.on('error', () => socket.terminate());
  }

  private send(message: unknown[]): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(JSON.stringify(message));
  }

  private notice(text: string): void {
    this.send(['NOTICE', text]);
  }

  private async receive(text: string): Promise<void> {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      this.notice('invalid: message is not JSON');
      return;
    }
    if (!Array.isArray(message) || typeof message[0] !== 'string') {
      this.notice('invalid: message is not a NIP-01 array');
      return;
    }
    const items = message as unknown[];
    switch (items[0]) {
      case 'AUTH':
        this.auth(items[1]);
        return;
      case 'EVENT':
        await this.event(items[1]);
        return;
      case 'REQ':
        await this.req(items[1], items.slice(2));
        return;
      case 'CLOSE':
        if (typeof items[1] === 'string') this.subscriptions.delete(items[1]);
        return;
      default:
        this.notice(`invalid: ${String(items[0]).slice(0, 16)} is not supported here`);
    }
  }

  private verified(raw: unknown): NostrEvent | string {
    const event = parseEvent(raw);
    if (isEventRejection(event)) return `invalid: ${event.message}`;
    if (!this.deps.verifier.verify(event)) return 'invalid: bad event id or signature';
    return event;
  }

  private auth(raw: unknown): void {
    const event = this.verified(raw);
    const id =
      typeof raw === 'object' && raw !== null && typeof (raw as { id?: unknown }).id === 'string' ? (raw as { id: string }).id : '';
    if (typeof event === 'string') {
      this.send(['OK', id, false, event]);
      return;
    }
    const tag = (name: string): string | undefined => event.tags.find((t) => t[0] === name)?.[1];
    const nowSecs = Math.floor(this.deps.clock.nowMs() / 1000);
    const relay = tag('relay');
    let problem: string | null = null;
    if (event.kind !== CLIENT_AUTH) problem = `kind ${event.kind} is not an AUTH event (22242)`;
    else if (tag('challenge') !== this.challenge) problem = 'the challenge does not match';
    else if (relay === undefined || hostOf(relay) !== this.host) problem = `the relay tag must name ${this.host}`;
    else if (Math.abs(event.created_at - nowSecs) > AUTH_WINDOW_SECS) problem = 'created_at is too far from now';
    if (problem !== null) {
      this.send(['OK', event.id, false, `auth-required: ${problem}`]);
      return;
    }
    this.pubkey = event.pubkey;
    this.send(['OK', event.id, true, '']);
  }

  private async event(raw: unknown): Promise<void> {
    const id =
      typeof raw === 'object' && raw !== null && typeof (raw as { id?: unknown }).id === 'string' ? (raw as { id: string }).id : '';
    if (this.pubkey === null) {
      this.send(['OK', id, false, 'auth-required: authenticate with NIP-42 first']);
      return;
    }
    const limits = this.deps.limits;
    const refusal = limits ? ((await limits.address.take(this.address)) ?? (await limits.pubkey.take(this.pubkey))) : null;
    if (refusal) {
      this.send(['OK', id, false, `rate-limited: too many registrations; retry in ${refusal.retryAfterSecs} s`]);
      return;
    }
    const event = this.verified(raw);
    if (typeof event === 'string') {
      this.send(['OK', id, false, event]);
      return;
    }
    const result = await acceptGatewayEvent(this.deps, event, this.pubkey, 'relay');
    this.send(['OK', event.id, result.accepted, result.message]);
  }

  private async req(subscriptionId: unknown, filters: unknown[]): Promise<void> {
    if (typeof subscriptionId !== 'string' || subscriptionId.length === 0 || subscriptionId.length > MAX_SUBSCRIPTION_ID_CHARS) {
      this.notice('invalid: bad subscription id');
      return;
    }
    if (this.pubkey === null) {
      this.send(['CLOSED', subscriptionId, 'auth-required: registrations are only readable by their author']);
      return;
    }
    if (!this.subscriptions.has(subscriptionId) && this.subscriptions.size >= MAX_SUBSCRIPTIONS) {
      this.send(['CLOSED', subscriptionId, `rate-limited: at most ${MAX_SUBSCRIPTIONS} subscriptions`]);
      return;
    }
    this.subscriptions.add(subscriptionId);
    // Only the author's own registrations, whatever the filter's `authors` say (a `p` grants nothing).
    const mine = await this.deps.store.listNip9aRegistrations(this.pubkey);
    for (const stored of mine) {
      if (filters.some((f) => wants(f, stored))) this.send(['EVENT', subscriptionId, JSON.parse(stored.eventJson) as unknown]);
    }
    this.send(['EOSE', subscriptionId]);
  }
}

/** 429 `RATE_LIMITED` with `Retry-After` and the catalogue's body, instead of the upgrade. */
function refuseUpgrade(socket: Duplex, retryAfterSecs: number): void {
  const body = JSON.stringify({ error: HTTP_ERRORS.RATE_LIMITED.message, code: 'RATE_LIMITED' });
  socket.end(
    `HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nRetry-After: ${retryAfterSecs}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** Serve the endpoint on `server`'s upgrades to {@link NIP9A_RELAY_PATH}; `close()` cuts every connection. */
export function attachNip9aRelayEndpoint(deps: RelayEndpointDeps, server: Server): { close(): void } {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_FRAME_BYTES });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== NIP9A_RELAY_PATH) return;
    const host = (request.headers.host ?? '').toLowerCase();
    const address = deps.limits?.addressOf(request) ?? '';
    const open = (): void => {
      wss.handleUpgrade(request, socket, head, (ws) => {
        new EndpointConnection(deps, ws, host, address);
      });
    };
    if (!deps.limits) {
      open();
      return;
    }
    deps.limits.address.take(address).then(
      (refusal) => {
        if (!refusal) open();
        else refuseUpgrade(socket, refusal.retryAfterSecs);
      },
      (err: unknown) => {
        deps.logger.error({ err: (err as Error).message }, 'nip9a relay endpoint: upgrade failed');
        socket.destroy();
      },
    );
  });
  return {
    close() {
      for (const client of wss.clients) client.terminate();
      wss.close();
    },
  };
}
