import { firstTagValue, type Tagged } from './tags.ts';

/** NIP-40 expiration: `["expiration", "<unix seconds>"]`. */
export const EXPIRATION_TAG = 'expiration';

const DECIMAL = /^[0-9]+$/;

/**
 * The expiration time of an event in unix seconds, from its first `expiration` tag, or null when
 * there is none or its value is not a plain decimal integer (signs, fractions, exponents, spaces
 * and values past 2^53 all count as malformed, so such an event never expires).
 */
export function expirationOf(event: Tagged): number | null {
  const value = firstTagValue(event, EXPIRATION_TAG);
  if (value === undefined || !DECIMAL.test(value)) return null;
  const seconds = Number(value);
  return Number.isSafeInteger(seconds) ? seconds : null;
}

/** True when the event carries an expiration at or before `nowSecs`. */
export function isExpired(event: Tagged, nowSecs: number): boolean {
  const expiration = expirationOf(event);
  return expiration !== null && expiration <= nowSecs;
}
