/** The shape of the `ntfy:` section of the configuration (`types.ts` has the rest; defaults in `defaults.ts`). */
import type { NtfyWebSocketKind } from './types.ts';

/**
 * The built-in ntfy server. Names follow ntfy's own settings where it has them
 * (`cache-duration`, `keepalive-interval`, `visitor-request-limit-burst`, …).
 */
export interface NtfyConfig {
  /**
   * Public base URL of this server (`https://push.example.com`), as the ntfy app is configured
   * with. UnifiedPush endpoints under it are delivered by appending to the topic in the store,
   * without an HTTP hop. Unset: no endpoint is recognised as local.
   */
  base_url: string;
  /** How long messages are kept and replayed (ntfy's `cache-duration`): `12h`, `30m`, `1h30m`, `45s`, or whole seconds. */
  cache_duration: string;
  /** Largest body accepted; a larger one gets 413 (RFC 8030 §7.2 forbids 413 at 4096 bytes or less). */
  message_size_limit_bytes: number;
  /** Shortest delay of a scheduled message (`Delay`, `At`, `In`), ntfy's `10s` by default; shorter is refused (40005). Same syntax as `cache_duration`. */
  min_delay: string;
  /** Longest delay of a scheduled message, ntfy's `message-delay-limit` (`3d` by default); longer is refused (40006). */
  max_delay: string;
  /** Interval of keepalive events on HTTP streams and of pings on WebSockets (the Android app times out after 77 s of silence). */
  keepalive_interval_secs: number;
  /** A WebSocket silent this long (no pong, no frame) is dropped. */
  websocket_timeout_secs: number;
  /** WebSocket server of `/…/ws` subscriptions: `builtin` or `ws` ({@link NTFY_WEBSOCKET_KINDS}). */
  websocket: NtfyWebSocketKind;
  /** How often the pusher checks the store head against the append events it followed, and reads what it missed: a lost event costs at most this much latency. */
  safety_redrain_secs: number;
  /** How often the janitor deletes expired messages. */
  expiry_interval_secs: number;
  /** Requests (publish and subscribe) a visitor may make in a burst. */
  visitor_request_burst: number;
  /** One request is given back to a visitor's burst every this many seconds. */
  visitor_request_replenish_secs: number;
  /** Concurrent subscriptions (streams and WebSockets) per visitor. */
  visitor_subscription_limit: number;
  /** Addresses or CIDR ranges exempt from every visitor limit (for loopback load tests, trusted gateways). */
  visitor_exempt_hosts: string[];
  /** Take the visitor's address from `X-Forwarded-For` (set only behind a reverse proxy you run). */
  behind_proxy: boolean;
  /** Access without a token, and of a token for topics none of its entries match: `read-write`, `read-only`, `write-only` or `deny-all`. */
  auth_default_access: string;
  /**
   * Access tokens, each `<token>:<access>:<topic pattern>` (`*` matches any characters; access
   * `rw`, `ro`, `wo` or `deny`); a token may have several entries, the first match wins. Sent as
   * `Authorization: Bearer <token>`, as the password of `Basic` (any user name), or as `?auth=`.
   */
  auth_tokens: string[];
}
