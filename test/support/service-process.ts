/**
 * The real binary, started as an operator would start it (`bin/nostr-push.js serve` with
 * `NOSTR_PUSH__…` environment), for end-to-end tests. Reads its JSON log lines so tests can wait
 * for what the service says, and kills it by pid.
 */
import { SERVER_NODE_FLAGS } from '../../src/util/heap-growth.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/nostr-push.js', import.meta.url));

/**
 * The least time any wait here allows, whatever a test asks: waits are for the service's own
 * signals, so their deadlines only exist to turn a hang into a failure, and a loaded 2-core
 * machine (or the WASM secp256k1 build) can take many times longer than a quiet one.
 */
export const HANG_DEADLINE_FLOOR_MS = 60_000;

/** Set to a folder: every service process a test starts writes its log lines there too. */
export const KEEP_SERVICE_LOGS_ENV = 'NOSTR_PUSH_TEST_KEEP_SERVICE_LOGS';

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface ServiceProcess {
  child: ChildProcess;
  baseUrl: string;
  port: number;
  logs: LogLine[];
  stderr: string[];
  /** Resolve with the first log line (past or future) that matches. */
  waitForLog(predicate: (line: LogLine) => boolean, timeoutMs?: number, what?: string): Promise<LogLine>;
  /** Resolves with the exit code once the process is gone. */
  exited: Promise<number | null>;
  /** SIGTERM and wait (a graceful stop). */
  stop(): Promise<number | null>;
  /** SIGKILL and wait (a crash). */
  kill(): Promise<number | null>;
}

/**
 * A stdout line as the service wrote it: a JSON log line, or anything else (pretty output, a
 * plain print) kept as `{ level: 30, msg: <the raw line> }`, without the `time` every JSON line has.
 */
export function parseLogLine(raw: string): LogLine {
  try {
    const parsed: unknown = JSON.parse(raw);
    // A pretty line's field (`    "environment"`) can parse as JSON too, but not as a log object.
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && 'level' in parsed) return parsed as LogLine;
  } catch {
    // not JSON: a raw line
  }
  return { level: 30, msg: raw };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * The environment of an ntfy server process as the benchmarks and the distributor test start
 * one: roles api, pusher and janitor on loopback `port`, a store in `dataDir` (SQLite) or at
 * `redisUrl`, loopback exempt from visitor limits, info logs.
 */
export function ntfyServiceEnv(options: { dataDir: string; port: number; redisUrl?: string | undefined }): Record<string, string> {
  return {
    NOSTR_PUSH__ROLES: 'api,pusher,janitor',
    NOSTR_PUSH__DATA_DIR: options.dataDir,
    NOSTR_PUSH__STORE__URL: options.redisUrl ?? `sqlite:${join(options.dataDir, 'nostr-push.sqlite')}`,
    NOSTR_PUSH__SERVER__LISTEN_ADDR: `127.0.0.1:${options.port}`,
    NOSTR_PUSH__NTFY__VISITOR_EXEMPT_HOSTS: '127.0.0.1,::1',
    NOSTR_PUSH__LOG__LEVEL: 'info',
    LOG_LEVEL: 'info',
  };
}

export interface StartServiceProcessOptions {
  env: Record<string, string>;
  /** Wait until `/health` answers (default true). */
  waitForHttp?: boolean;
  args?: string[];
  /** Node flags for the binary (e.g. `--cpu-prof`, which NODE_OPTIONS does not allow); benchmarks profile with it. */
  nodeArgs?: string[];
  /**
   * The service's own Node flags, before `nodeArgs`: by default {@link SERVER_NODE_FLAGS}, as
   * every launcher of the binary passes them; `[]` starts it as a bare `node bin/nostr-push.js`.
   */
  serverNodeFlags?: readonly string[];
  /** The loopback port to listen on (a free one by default): for settings that name the service's own URL. */
  port?: number;
}

export async function startServiceProcess(options: StartServiceProcessOptions): Promise<ServiceProcess> {
  const port = options.port ?? (await freePort());
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    // A test binary is a test process (it may honour test-only settings such as the clock file).
    NODE_ENV: 'test',
    // The secp256k1 backend a stress run forces (npm run test:stress) applies to the binary too.
    ...(process.env.NOSTR_PUSH_SECP256K1 ? { NOSTR_PUSH_SECP256K1: process.env.NOSTR_PUSH_SECP256K1 } : {}),
    LOG_LEVEL: 'debug',
    NOSTR_PUSH__LOG__LEVEL: 'debug',
    NOSTR_PUSH__SERVER__LISTEN_ADDR: `127.0.0.1:${port}`,
    ...options.env,
  };
  const nodeFlags = [...(options.serverNodeFlags ?? SERVER_NODE_FLAGS), ...(options.nodeArgs ?? [])];
  const child = spawn(process.execPath, [...nodeFlags, BIN, 'serve', ...(options.args ?? [])], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: LogLine[] = [];
  const stderr: string[] = [];
  // For reading a failed run afterwards: every line of every binary a test starts, one file each.
  const keepLogsIn = process.env[KEEP_SERVICE_LOGS_ENV];
  const kept = keepLogsIn ? createWriteStream(join(keepLogsIn, `service-${Date.now()}-${child.pid ?? 0}.jsonl`)) : null;
  if (kept) child.stdout.on('data', (chunk: string) => kept.write(chunk));
  child.once('exit', () => kept?.end());
  const waiters = new Set<{ predicate: (l: LogLine) => boolean; resolve: (l: LogLine) => void }>();

  let buffered = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) !== -1) {
      const raw = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      const line = parseLogLine(raw);
      logs.push(line);
      for (const w of waiters) {
        if (w.predicate(line)) {
          waiters.delete(w);
          w.resolve(line);
        }
      }
    }
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => stderr.push(chunk));

  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const waitForLog = (predicate: (line: LogLine) => boolean, requestedMs = 15_000, what = 'a log line'): Promise<LogLine> => {
    const timeoutMs = Math.max(requestedMs, HANG_DEADLINE_FLOOR_MS);
    const found = logs.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const waiter = { predicate, resolve: (l: LogLine) => (clearTimeout(timer), resolve(l)) };
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for ${what}; stderr: ${stderr.join('')}; last logs: ${logs
              .slice(-8)
              .map((l) => l.msg)
              .join(' | ')}`,
          ),
        );
      }, timeoutMs);
      waiters.add(waiter);
      void exited.then((code) => {
        if (!waiters.has(waiter)) return;
        waiters.delete(waiter);
        clearTimeout(timer);
        reject(new Error(`service exited (${code}) while waiting for ${what}; stderr: ${stderr.join('')}`));
      });
    });
  };

  const handle: ServiceProcess = {
    child,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    logs,
    stderr,
    waitForLog,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      return exited;
    },
  };
  if (options.waitForHttp !== false) await waitForLog((l) => l.msg === 'http listening', 20_000, 'the HTTP server');
  return handle;
}

/** Poll `check` until it returns a value (not undefined), without fixed sleeps past a window. */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  requestedMs = 10_000,
  what = 'a condition',
): Promise<T> {
  const timeoutMs = Math.max(requestedMs, HANG_DEADLINE_FLOOR_MS);
  const deadline = Date.now() + timeoutMs;
  // Boxed, so that whatever was thrown is told apart from no failure at all.
  let lastError: { error: unknown } | undefined;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = { error: err };
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${String(lastError.error)}` : ''}`);
}
