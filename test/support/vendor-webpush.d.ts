/**
 * The slice of `http_ece` 1.2 and `web-push` 3.6 the Web Push tests use (neither ships types,
 * and `@types/web-push` is not installed). Ambient declarations: no imports at top level.
 */
declare module 'http_ece' {
  import type { ECDH } from 'node:crypto';

  /** Parameters of an `aes128gcm` decryption by the receiver (the user agent). */
  export interface Aes128gcmDecryptParams {
    version: 'aes128gcm';
    /** The receiver's ECDH key pair (`crypto.createECDH('prime256v1')`). */
    privateKey: ECDH;
    /** The 16-byte auth secret, base64url or raw. */
    authSecret: string | Buffer;
  }

  export function decrypt(body: Buffer, params: Aes128gcmDecryptParams): Buffer;
}

declare module 'web-push' {
  export interface PushSubscription {
    endpoint: string;
    keys: { p256dh: string; auth: string };
  }

  export interface VapidDetails {
    subject: string;
    publicKey: string;
    privateKey: string;
  }

  export interface RequestOptions {
    TTL?: number;
    urgency?: 'very-low' | 'low' | 'normal' | 'high';
    topic?: string;
    vapidDetails?: VapidDetails;
    contentEncoding?: 'aes128gcm' | 'aesgcm';
    headers?: Record<string, string>;
    timeout?: number;
  }

  export interface RequestDetails {
    method: 'POST';
    endpoint: string;
    headers: Record<string, string | number>;
    body: Buffer | null;
  }

  export function generateRequestDetails(
    subscription: PushSubscription,
    payload: string | Buffer | null,
    options?: RequestOptions,
  ): RequestDetails;
  export function generateVAPIDKeys(): { publicKey: string; privateKey: string };
  export function getVapidHeaders(
    audience: string,
    subject: string,
    publicKey: string,
    privateKey: string,
    contentEncoding: 'aes128gcm',
    expiration?: number,
  ): { Authorization: string };

  const webpush: {
    generateRequestDetails: typeof generateRequestDetails;
    generateVAPIDKeys: typeof generateVAPIDKeys;
    getVapidHeaders: typeof getVapidHeaders;
  };
  export default webpush;
}
