/**
 * The one way a socket to a user relay is opened. A user relay is a URL any Nostr key can name (in
 * its kind 10002 or 10050, or a registration's `relays`), so without a rule the listener would
 * connect wherever a stranger points it, into the service's own network (SSRF). The rule:
 *
 * 1. `wss://` only, unless `nostr.user_relays.allow_loopback` is `I_UNDERSTAND` (tests), which
 *    admits `ws://` and every address;
 * 2. every address the connection goes to is public: an IP literal is checked here (Node skips the
 *    lookup for literals), a name by the socket's own DNS lookup at connect time
 *    (`publicOnlyLookup`), so a name that turns private later (DNS rebinding) is still refused.
 *
 * A refusal throws, which the relay connection treats as a failed connect: logged, backed off and
 * retried like any relay that is down, and visible in the relay's `lastError`.
 *
 * @remarks The outbound address policy of the abuse work (src/net/) replaces the lookup here when
 * it lands; this module is the one place to swap.
 */
import { isIP } from 'node:net';
import { WebSocket as WsWebSocket } from 'ws';
import { isNonPublicAddress, publicOnlyLookup } from '../delivery/webpush/endpoint-policy.ts';
import type { RelaySocket, RelaySocketOptions } from './types.ts';

/** What user relays may be connected to. */
export interface UserRelayAddressPolicy {
  /** `nostr.user_relays.allow_loopback` is `I_UNDERSTAND`: `ws://` and non-public addresses admitted. */
  allowLoopback: boolean;
}

/** Why `url` may not be connected to under `policy`, or null when it may (rule 1, and rule 2 for IP literals). */
export function userRelayRefusal(url: string, policy: UserRelayAddressPolicy): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a URL';
  }
  if (parsed.protocol !== 'wss:' && parsed.protocol !== 'ws:') return `scheme ${parsed.protocol} is not a relay scheme`;
  if (policy.allowLoopback) return null;
  if (parsed.protocol !== 'wss:') return 'user relays must be wss://';
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0 && isNonPublicAddress(host)) return `${host} is not a public address`;
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} is not a public name`;
  return null;
}

/** A user relay refused by the address policy. */
export class UserRelayRefusedError extends Error {
  override readonly name = 'UserRelayRefusedError';
}

/** Opens a socket to a user relay under `policy`; throws {@link UserRelayRefusedError} when the policy refuses it. */
export function connectUserRelay(url: string, options: RelaySocketOptions, policy: UserRelayAddressPolicy): RelaySocket {
  const refusal = userRelayRefusal(url, policy);
  if (refusal !== null) throw new UserRelayRefusedError(`user relay refused: ${refusal}`);
  return new WsWebSocket(url, { ...options, ...(policy.allowLoopback ? {} : { lookup: publicOnlyLookup }) });
}
