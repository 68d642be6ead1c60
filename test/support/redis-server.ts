/**
 * A private `redis-server` for one test file: its own free port on 127.0.0.1, no persistence,
 * a temporary working directory, stopped by pid. Tests never touch a Redis on 6379.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PrivateRedisServer {
  /** `redis://127.0.0.1:<port>` (append `/<db>` for another database). */
  url: string;
  port: number;
  /** The server's process id (benchmarks read its CPU time). */
  pid: number;
  /** Kill the server (SIGTERM, SIGKILL after a grace period) and wait until it has exited. */
  stop(): Promise<void>;
  /** Kill the server with SIGKILL at once (a crash) and wait until it has exited. */
  kill(): Promise<void>;
  /** What the server logged so far (notice level): for a failed test's message. */
  log(): string;
}

export interface RedisServerOptions {
  /** More `redis-server` arguments (e.g. `--cluster-enabled yes`). */
  args?: readonly string[];
}

/** How long the server may take to accept connections after it was spawned. */
const START_TIMEOUT_MS = 10_000;
/** How long a stopped server gets to exit on SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 5_000;
/** Spawn attempts: a free port found by the OS can be taken by someone else before redis binds it. */
const START_ATTEMPTS = 3;

const INSTALL_HINT = 'redis-server is not on PATH; install it with `apt-get install -y redis-server`';

function redisServerAvailable(): boolean {
  const probe = spawnSync('redis-server', ['--version'], { stdio: 'ignore' });
  return !probe.error && probe.status === 0;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

/** One `PING` over a raw socket; resolves on `+PONG`. */
function ping(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let reply = '';
    socket.once('error', reject);
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('utf8');
      if (reply.includes('\r\n')) {
        socket.destroy();
        if (reply.startsWith('+PONG')) resolve();
        else reject(new Error(`unexpected PING reply: ${reply.trim()}`));
      }
    });
    socket.once('connect', () => socket.write('PING\r\n'));
  });
}

function waitForExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Resolves once the server logs that it accepts connections; rejects if it exits first. */
function waitUntilReady(child: ChildProcess, output: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => fail(new Error(`redis-server did not start within ${START_TIMEOUT_MS} ms:\n${output()}`)),
      START_TIMEOUT_MS,
    );
    const onData = () => {
      if (output().includes('Ready to accept connections')) done();
    };
    const onExit = (code: number | null) => fail(new Error(`redis-server exited with ${code} before it was ready:\n${output()}`));
    function cleanup() {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
    }
    function done() {
      cleanup();
      resolve();
    }
    function fail(error: Error) {
      cleanup();
      reject(error);
    }
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
    onData();
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  const exited = waitForExit(child);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  const killTimer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(killTimer);
}

async function startOnce(dir: string, extraArgs: readonly string[]): Promise<PrivateRedisServer> {
  const port = await freePort();
  // A cluster node's bus port defaults to port + 10,000, past 65,535 for a high free port: give
  // it a free port of its own.
  const clusterArgs = extraArgs.includes('--cluster-enabled') ? ['--cluster-port', String(await freePort())] : [];
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--loglevel',
      'notice',
      ...extraArgs,
      ...clusterArgs,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  try {
    await waitUntilReady(child, () => output);
    await ping(port);
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: child.pid as number,
    stop: () => stopChild(child),
    kill: async () => {
      const exited = waitForExit(child);
      child.kill('SIGKILL');
      await exited;
    },
    log: () => output,
  };
}

export async function startRedisServer(options: RedisServerOptions = {}): Promise<PrivateRedisServer> {
  if (!redisServerAvailable()) throw new Error(INSTALL_HINT);
  const dir = mkdtempSync(join(tmpdir(), 'nostr-push-redis-'));
  let lastError: unknown;
  for (let attempt = 0; attempt < START_ATTEMPTS; attempt++) {
    try {
      const server = await startOnce(dir, options.args ?? []);
      return {
        ...server,
        stop: async () => {
          await server.stop();
          rmSync(dir, { recursive: true, force: true });
        },
        kill: async () => {
          await server.kill();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    } catch (error) {
      lastError = error;
    }
  }
  rmSync(dir, { recursive: true, force: true });
  throw lastError instanceof Error ? lastError : new Error(String(lastError));
}
