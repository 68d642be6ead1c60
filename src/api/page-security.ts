/**
 * The headers of the HTML pages the service serves (the console, the API reference at `/v1/docs`):
 * a strict Content-Security-Policy that allows nothing but the service's own files (no inline
 * script or style, no other origin), no MIME sniffing, no referrer. One constant, so the pages
 * cannot drift apart.
 */
export const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};
