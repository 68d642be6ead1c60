/**
 * Which push endpoints the service will open a connection to. A push endpoint is a URL any
 * Nostr key can register, so without a rule the service is an open proxy into its own network
 * (SSRF). The rule:
 *
 * 1. The endpoint is an absolute `https://` or `http://` URL (UnifiedPush deployments run plain
 *    http behind proxies) of at most {@link MAX_ENDPOINT_CHARS} characters, without `user:pass@`.
 * 2. Unless `webpush.allow_private_endpoints` is on, every address the connection goes to must be
 *    public: the service's one outbound address policy (`src/net/`, purpose `webpush`), applied by
 *    `http-client.ts` on the addresses DNS returns *at connect time* (the socket's own lookup), so
 *    a name that resolves to a public address when registered and to 127.0.0.1 later (DNS
 *    rebinding) is still refused.
 * 3. Redirects are never followed (a push service answers 201; a 3xx is a failed push).
 *
 * Endpoints on this server's own ntfy topics never reach this check: they are appended to the
 * topic in the store, with no network hop. Tests and a local ntfy deployment on a private network
 * turn `allow_private_endpoints` on.
 */
/** UnifiedPush AND_3 caps endpoints at 1000 bytes; browsers' are shorter. Some slack for odd push services. */
export const MAX_ENDPOINT_CHARS = 2048;

export type EndpointCheck = { ok: true; url: URL } | { ok: false; reason: string };

/** Rule 1: the endpoint's shape. Never throws. */
export function parsePushEndpoint(endpoint: string): EndpointCheck {
  if (endpoint.length > MAX_ENDPOINT_CHARS) return { ok: false, reason: `the endpoint is longer than ${MAX_ENDPOINT_CHARS} characters` };
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return { ok: false, reason: 'the endpoint is not a URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return { ok: false, reason: `the endpoint scheme ${url.protocol} is not http(s)` };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'the endpoint carries credentials' };
  if (url.hostname === '') return { ok: false, reason: 'the endpoint has no host' };
  return { ok: true, url };
}
