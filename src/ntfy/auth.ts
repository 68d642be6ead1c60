/**
 * Optional access tokens for topics (ntfy's auth, reduced to tokens; `ntfy.auth_*` settings).
 *
 * - With no token configured every credential is ignored, as ntfy without an auth file does, and
 *   `auth_default_access` alone decides (read-write by default: every topic open).
 * - `Authorization: Bearer <token>`, `Basic` with the token as the password (any user name, as
 *   ntfy's empty-user token form) or with `user:password` as the token, or `?auth=` holding one
 *   of those headers in unpadded base64url (ntfy's form for browser WebSockets).
 * - Any other scheme — `vapid t=…,k=…`, `WebPush …` from Web Push app servers — is ignored and
 *   the request is anonymous, never refused (ntfy issue #629): a UnifiedPush endpoint must accept
 *   app servers that sign with VAPID.
 * - An unknown token is 401 40101; a known token or an anonymous request without the needed
 *   access to a topic is 403 40301.
 */
import { NtfyError } from './errors.ts';

export type Permission = 'read' | 'write';

interface Access {
  read: boolean;
  write: boolean;
}

/** `auth_default_access` values. */
export const DEFAULT_ACCESS_VALUES: Readonly<Record<string, Access>> = {
  'read-write': { read: true, write: true },
  'read-only': { read: true, write: false },
  'write-only': { read: false, write: true },
  'deny-all': { read: false, write: false },
};

/** Access codes of a token entry. */
const ENTRY_ACCESS: Readonly<Record<string, Access>> = {
  rw: { read: true, write: true },
  ro: { read: true, write: false },
  wo: { read: false, write: true },
  deny: { read: false, write: false },
};

const PATTERN_CHARS = /^[-_A-Za-z0-9*]+$/;

export interface TokenEntry {
  token: string;
  access: Access;
  pattern: RegExp;
  /** The pattern as configured, for messages. */
  source: string;
}

/** One `auth_tokens` entry (`<token>:<access>:<topic pattern>`, the token may contain `:`), or the reason it is wrong. */
export function parseTokenEntry(text: string): TokenEntry | string {
  const parts = text.split(':');
  if (parts.length < 3) return `"${redactEntry(text)}" is not <token>:<access>:<topic pattern>`;
  const source = parts.pop() as string;
  const accessName = parts.pop() as string;
  const token = parts.join(':');
  const access = ENTRY_ACCESS[accessName];
  if (token === '') return 'an entry has an empty token';
  if (!access) return `"${redactEntry(text)}": access must be rw, ro, wo or deny, not "${accessName}"`;
  if (!PATTERN_CHARS.test(source)) return `"${redactEntry(text)}": the topic pattern may only hold [-_A-Za-z0-9] and *`;
  const pattern = new RegExp(`^${source.replace(/\*/g, '.*')}$`);
  return { token, access, pattern, source };
}

/** Entries appear in error messages; their tokens must not. */
function redactEntry(text: string): string {
  const parts = text.split(':');
  return parts.length >= 3 ? `…:${parts.slice(-2).join(':')}` : '…';
}

/** What an authenticated request is: the token it proved, or null for anonymous. */
export type Identity = string | null;

export class TopicAuthorizer {
  private readonly byToken = new Map<string, TokenEntry[]>();

  constructor(
    private readonly defaultAccess: Access,
    entries: readonly TokenEntry[],
  ) {
    for (const entry of entries) {
      const list = this.byToken.get(entry.token) ?? [];
      list.push(entry);
      this.byToken.set(entry.token, list);
    }
  }

  /** False when any request may do anything: no check is needed. */
  get enforcing(): boolean {
    return this.byToken.size > 0 || !this.defaultAccess.read || !this.defaultAccess.write;
  }

  /**
   * The identity of a request from its `Authorization` header and `?auth=` parameter. Throws
   * 401 40101 for credentials that name no configured token.
   */
  authenticate(authorization: string | undefined, authParam: string | undefined): Identity {
    if (this.byToken.size === 0) return null;
    const fromHeader = authorization === undefined ? undefined : this.credentialsOf(authorization);
    if (fromHeader !== undefined) return this.known(fromHeader);
    if (authParam !== undefined && authParam !== '') {
      const decoded = Buffer.from(authParam, 'base64url').toString('utf8');
      const fromParam = this.credentialsOf(decoded);
      if (fromParam === undefined) throw new NtfyError('UNAUTHORIZED');
      return this.known(fromParam);
    }
    return null;
  }

  /** Throws 403 40301 unless `identity` may `permission` on every one of `topics`. */
  authorize(identity: Identity, topics: readonly string[], permission: Permission): void {
    if (!this.enforcing) return;
    for (const topic of topics) {
      if (!this.accessOf(identity, topic)[permission]) throw new NtfyError('FORBIDDEN');
    }
  }

  private accessOf(identity: Identity, topic: string): Access {
    if (identity !== null) {
      for (const entry of this.byToken.get(identity) ?? []) if (entry.pattern.test(topic)) return entry.access;
    }
    return this.defaultAccess;
  }

  /** Candidate tokens of a header value; undefined for a scheme this server ignores. */
  private credentialsOf(header: string): string[] | undefined {
    const space = header.indexOf(' ');
    const scheme = (space === -1 ? header : header.slice(0, space)).toLowerCase();
    const value = space === -1 ? '' : header.slice(space + 1).trim();
    if (scheme === 'bearer') return [value];
    if (scheme === 'basic') {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      return colon === -1 ? [decoded] : [decoded, decoded.slice(colon + 1)];
    }
    return undefined;
  }

  private known(candidates: string[]): string {
    for (const candidate of candidates) if (candidate !== '' && this.byToken.has(candidate)) return candidate;
    throw new NtfyError('UNAUTHORIZED');
  }
}
