/**
 * Start-up failures an operator causes and fixes: a port in use, a store that does not answer, a
 * credentials file that does not load. `serve` says each in one line on stderr and exits 1, with
 * no stack trace (a stack is for bugs, which still crash with theirs).
 */
import { ApnsKeyError } from './delivery/apns/jwt.ts';
import { FcmCredentialsError } from './delivery/fcm/oauth.ts';
import { VapidKeyError } from './delivery/webpush/vapid.ts';

/** A start-up failure with its one-line explanation as the message. */
export class StartupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupError';
  }
}

/** What `listen()`'s error codes mean to an operator. */
const LISTEN_FAILURES: Readonly<Record<string, string>> = {
  EADDRINUSE: 'address already in use',
  EACCES: 'permission denied (ports under 1024 need a privilege)',
  EADDRNOTAVAIL: 'address not available on this host',
};

/** `cannot listen on 0.0.0.0:8000: address already in use`. */
export function listenFailure(host: string, port: number, err: unknown): StartupError {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  const reason = LISTEN_FAILURES[code] ?? (err instanceof Error ? err.message : String(err));
  const where = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return new StartupError(`cannot listen on ${where}: ${reason}`, { cause: err });
}

/** `cannot open the store redis://…: connect ECONNREFUSED 127.0.0.1:6379`. */
export function storeOpenFailure(store: string, err: unknown): StartupError {
  // An adapter's own error wraps the driver's, which says what is wrong; one without a cause
  // that already says it cannot open the store is kept as it is.
  if (err instanceof Error && err.cause instanceof Error)
    return new StartupError(`cannot open the store ${store}: ${err.cause.message}`, { cause: err });
  const message = err instanceof Error ? err.message : String(err);
  if (message.startsWith('cannot open ')) return new StartupError(message, { cause: err });
  return new StartupError(`cannot open the store ${store}: ${message}`, { cause: err });
}

/** The one line for a start-up failure an operator can fix, or null for anything else (a bug). */
export function operatorStartupProblem(err: unknown): string | null {
  if (err instanceof StartupError || err instanceof FcmCredentialsError || err instanceof ApnsKeyError || err instanceof VapidKeyError)
    return err.message;
  return null;
}
