/**
 * The bearer check of `server.internal_api_token`: the internal hooks' authentication (the
 * direct-message hook). The admin routes take the platform's admin API keys instead.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { HttpError } from './errors.ts';

/** Compare the bearer token by digest, so the comparison time says nothing about the token. */
export function bearerMatches(header: string | undefined, expected: string): boolean {
  const match = /^Bearer (.+)$/.exec(header ?? '');
  if (!match) return false;
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(match[1] as string), digest(expected));
}

/**
 * A middleware that lets a request through only with `Authorization: Bearer <token>`; an empty
 * token turns the routes off (503 `INTERNAL_NOT_CONFIGURED`), a wrong or missing one is a 401.
 * `onRefused` sees the code of every refusal (a metric, a log line).
 */
export function internalTokenAuth(
  token: string,
  onRefused: (code: 'INTERNAL_NOT_CONFIGURED' | 'UNAUTHORIZED') => void = () => undefined,
): MiddlewareHandler {
  return async (c, next) => {
    if (token === '') {
      onRefused('INTERNAL_NOT_CONFIGURED');
      throw new HttpError('INTERNAL_NOT_CONFIGURED');
    }
    if (!bearerMatches(c.req.header('authorization'), token)) {
      onRefused('UNAUTHORIZED');
      throw new HttpError('UNAUTHORIZED');
    }
    await next();
  };
}
