import { pino, type Logger } from 'pino';

export type { Logger };

/** How many characters of a secret (token, endpoint, key) a log line may show. */
export const SECRET_PREFIX_CHARS = 8;

/**
 * A secret cut to a short prefix for logs: `abcdefgh…` (char-safe for multibyte input). A URL
 * (push endpoint, callback) keeps its origin, which says where it points, and loses the path and
 * query that make it a credential: `https://push.example/ab…`.
 */
export function redact(secret: string | null | undefined): string {
  if (!secret) return '';
  if (/^https?:\/\//.test(secret)) {
    try {
      const url = new URL(secret);
      return `${url.origin}/${Array.from(url.pathname.slice(1)).slice(0, 2).join('')}…`;
    } catch {
      // not a URL after all: fall through to the prefix rule
    }
  }
  const chars = Array.from(secret);
  return chars.length <= SECRET_PREFIX_CHARS ? chars.join('') : `${chars.slice(0, SECRET_PREFIX_CHARS).join('')}…`;
}

/**
 * Field names that always hold secrets. pino censors them with `redact` wherever they appear in
 * a log object, so a careless `log.info({ token })` still leaks only a prefix.
 */
const SECRET_FIELDS = [
  'token',
  'tokens',
  'endpoint',
  'callbackUrl',
  'privateKey',
  'privateKeyHex',
  'authorization',
  'auth',
  'p256dh',
  'accessToken',
];

/** The log calls of a hot path that rarely logs (a pino logger is one). */
export interface LineLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/**
 * A child logger made only when the first line is logged: pino's `child()` costs more than most
 * deliveries ever log, so a per-notification child is made lazily.
 */
export function lazyChild(parent: Logger, bindings: () => Record<string, unknown>): LineLogger {
  let child: Logger | null = null;
  const get = (): Logger => (child ??= parent.child(bindings()));
  return {
    info: (fields, message) => get().info(fields, message),
    warn: (fields, message) => get().warn(fields, message),
  };
}

export interface LoggerOptions {
  level?: string;
  /** Destination stream; defaults to stdout. Tests pass a sink to read lines back. */
  destination?: NodeJS.WritableStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? process.env.LOG_LEVEL ?? (process.env.NODE_ENV === 'test' ? 'silent' : 'info');
  const paths = SECRET_FIELDS.flatMap((f) => [f, `*.${f}`]);
  return pino(
    {
      level,
      base: { service: 'nostr-push' },
      redact: {
        paths,
        censor: (value: unknown) =>
          Array.isArray(value) ? value.map((v) => redact(String(v))) : redact(typeof value === 'string' ? value : String(value)),
      },
    },
    options.destination ?? process.stdout,
  );
}
