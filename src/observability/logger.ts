import { createRequire } from 'node:module';
import { pino, type Logger } from 'pino';
import type { Prettifier, PrettyOptions, PrettyStream } from 'pino-pretty';
import type { LogFormat } from '../config/types.ts';

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

/** How a logger writes its lines: `auto` resolved against the destination ({@link resolveLogFormat}). */
export type ResolvedLogFormat = Exclude<LogFormat, 'auto'>;

/** `log.format` for a destination: `auto` is pretty on a terminal only, so pipes, files and log shippers get JSON. */
export function resolveLogFormat(format: LogFormat, destinationIsTerminal: boolean): ResolvedLogFormat {
  if (format === 'auto') return destinationIsTerminal ? 'pretty' : 'json';
  return format;
}

/**
 * Fields a pretty line leaves out: the process's own constants, and `summary`, the structured
 * copy of a start-up summary line whose message already says it all (`src/startup-summary.ts`).
 */
const PRETTY_IGNORED_FIELDS = 'pid,hostname,service,summary';

/**
 * pino-pretty as a synchronous stream (no worker thread: lines appear in order with whatever the
 * process writes itself, and none is lost at `process.exit`). Loaded only when a pretty logger
 * is made, so JSON processes never load it.
 */
/** pino's level number of `error`: below it, a pretty line shows an error's message only. */
const PINO_ERROR_LEVEL = 50;

/**
 * An error field on a pretty line: its message, and its stack only on error and fatal lines. A
 * relay refusing a connection is a warning an operator reads, not a trace to debug (JSON lines
 * keep every stack).
 */
const prettyError: Prettifier = (value, _key, log) => {
  if (typeof value !== 'object') return value;
  const { message, stack } = value as { message?: unknown; stack?: unknown };
  const level = (log as { level?: unknown }).level;
  if (typeof level === 'number' && level >= PINO_ERROR_LEVEL && typeof stack === 'string') return stack;
  return typeof message === 'string' ? message : JSON.stringify(value);
};

function prettyDestination(destination: NodeJS.WritableStream | undefined, colorize: boolean): PrettyStream {
  const build = createRequire(import.meta.url)('pino-pretty') as (options: PrettyOptions) => PrettyStream;
  return build({
    sync: true,
    colorize,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: PRETTY_IGNORED_FIELDS,
    customPrettifiers: { err: prettyError, error: prettyError },
    ...(destination ? { destination } : {}),
  });
}

export interface LoggerOptions {
  level?: string;
  /**
   * `json` (default) or `pretty`; `auto` is pretty when the destination is a terminal. Tests and
   * every program that reads the lines back get JSON unless they ask.
   */
  format?: LogFormat;
  /** Destination stream; defaults to stdout. Tests pass a sink to read lines back. */
  destination?: NodeJS.WritableStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? process.env.LOG_LEVEL ?? (process.env.NODE_ENV === 'test' ? 'silent' : 'info');
  const paths = SECRET_FIELDS.flatMap((f) => [f, `*.${f}`]);
  const destination = options.destination ?? process.stdout;
  const isTerminal = (destination as Partial<NodeJS.WriteStream>).isTTY === true;
  const format = resolveLogFormat(options.format ?? 'json', isTerminal);
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
    format === 'pretty' ? prettyDestination(options.destination, isTerminal) : destination,
  );
}
