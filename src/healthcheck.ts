/**
 * `nostr-push healthcheck`: the container image's health check. Asks this machine's `/health` at
 * the port `server.listen_addr` names (from the environment or the `--config` file, as `serve`
 * reads it), so the check follows the configuration instead of a port written into the Dockerfile.
 * Exit 0 for a 200 (`ok` or `degraded`), 1 otherwise, with one line saying what it saw.
 *
 * Its own entry (bin/nostr-push.js loads only this module for it): the check runs every 30 s, and
 * loading the whole CLI would cost several times the CPU of the request.
 */
import { ConfigError, loadConfig } from './config/load.ts';
import { parseListenAddr } from './config/validate.ts';

/** How long the check waits for `/health`: the image's HEALTHCHECK allows 5 s in all. */
export const HEALTHCHECK_TIMEOUT_MS = 4_000;

/** `http://127.0.0.1:8000/health` for `0.0.0.0:8000`: an all-interfaces address is asked on loopback. */
export function healthUrl(listenAddr: string): string | null {
  const listen = parseListenAddr(listenAddr);
  if (!listen) return null;
  const host =
    listen.host === '0.0.0.0' ? '127.0.0.1' : listen.host === '::' ? '[::1]' : listen.host.includes(':') ? `[${listen.host}]` : listen.host;
  return `http://${host}:${listen.port}/health`;
}

export async function main(argv: string[]): Promise<void> {
  const at = argv.indexOf('--config');
  const configPath = at === -1 ? undefined : argv[at + 1];
  let url: string | null;
  try {
    url = healthUrl(loadConfig({ configPath }).config.server.listen_addr);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exitCode = 2;
    return;
  }
  if (url === null) {
    process.stderr.write('server.listen_addr is not host:port\n');
    process.exitCode = 2;
    return;
  }
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(HEALTHCHECK_TIMEOUT_MS) });
    const body = (await res.json().catch(() => ({}))) as { status?: unknown };
    process.stdout.write(`${url}: ${res.status} ${typeof body.status === 'string' ? body.status : ''}\n`);
    process.exitCode = res.status === 200 ? 0 : 1;
  } catch (err) {
    process.stdout.write(`${url}: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
