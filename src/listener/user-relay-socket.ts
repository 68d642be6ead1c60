/**
 * The one way a socket to a user relay is opened. A user relay is a URL any Nostr key can name (in
 * its kind 10002 or 10050, or a registration's `relays`), so without a rule the listener would
 * connect wherever a stranger points it, into the service's own network (SSRF). The rule:
 *
 * 1. `wss://` only, unless `nostr.user_relays.allow_loopback` is `I_UNDERSTAND` (tests), which
 *    admits `ws://` and loopback addresses;
 * 2. every address the connection goes to is public, by the outbound address policy
 *    (`src/net/`, purpose `user_relay`): an IP literal is judged before anything is opened, a name
 *    is resolved once by the socket's own `lookup` and only checked addresses are connected to, so
 *    a name that turns private later (DNS rebinding) is still refused; redirects are never followed.
 *
 * A refusal throws (or surfaces as the socket's error), which the relay connection treats as a
 * failed connect: backed off and retried like any relay that is down, and visible in the relay's
 * `lastError`. The policy has already counted and logged it (`push_outbound_refused_total`).
 */
import { OutboundPolicy, openPolicyWebSocket } from '../net/public-connect.ts';
import { isIP } from 'node:net';
import { bareHost, classifyAddress, describeVerdict, isLoopbackName, publicNameProblem } from '../net/address-policy.ts';
import type { RelaySocket, RelaySocketOptions } from '../nostr/relay-socket.ts';

/** What user relays may be connected to. */
export interface UserRelayAddressPolicy {
  /** `nostr.user_relays.allow_loopback` is `I_UNDERSTAND`: `ws://` and loopback addresses admitted. */
  allowLoopback: boolean;
  /**
   * The outbound address policy the sockets use (purpose `user_relay`, reporting refusals).
   * Absent: a public-only policy on the system resolver that reports nothing.
   */
  outbound?: OutboundPolicy;
}

/** Why `url` may not be connected to under `policy`, judged by its text alone (scheme, literal, name); null when it may. */
export function userRelayRefusal(url: string, policy: UserRelayAddressPolicy): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a URL';
  }
  if (parsed.protocol !== 'wss:' && parsed.protocol !== 'ws:') return `scheme ${parsed.protocol} is not a relay scheme`;
  const host = bareHost(parsed.hostname);
  if (policy.allowLoopback && isLoopbackName(host)) return null;
  if (parsed.protocol !== 'wss:') return 'user relays must be wss://';
  if (isIP(host) !== 0) {
    // A public IP literal is a relay like any other; any other address is refused here, unresolved.
    const verdict = classifyAddress(host);
    return verdict.addressClass === 'public' ? null : `${host} is not a public address (${describeVerdict(verdict)})`;
  }
  return publicNameProblem(host);
}

/** A user relay refused by the address policy. */
export class UserRelayRefusedError extends Error {
  override readonly name = 'UserRelayRefusedError';
}

/** The policy's own outbound policy, or a public-only one (loopback as acknowledged) that reports nothing. */
function outboundOf(policy: UserRelayAddressPolicy): OutboundPolicy {
  return (
    policy.outbound ?? new OutboundPolicy({ purpose: 'user_relay', rules: { allowLoopback: policy.allowLoopback, allowPrivate: false } })
  );
}

/** Opens a socket to a user relay under `policy`; throws {@link UserRelayRefusedError} when the policy refuses it. */
export function connectUserRelay(url: string, options: RelaySocketOptions, policy: UserRelayAddressPolicy): RelaySocket {
  const refusal = userRelayRefusal(url, policy);
  if (refusal !== null) throw new UserRelayRefusedError(`user relay refused: ${refusal}`);
  return openPolicyWebSocket(url, outboundOf(policy), options);
}
