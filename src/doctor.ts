import { accessSync, constants, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer as createNetServer } from 'node:net';
import WebSocket from 'ws';
import { parseListenAddr } from './config/validate.ts';
import { readApnsKey } from './delivery/apns/jwt.ts';
import { listenFailure } from './startup-errors.ts';
import { DEFAULT_APP_ID } from './config/apps.ts';
import type { Config } from './config/defaults.ts';
import type { LoadedConfig } from './config/load.ts';
import { resolveStoreLocation, type StoreLocation } from './config/load.ts';
import { SERVICE_KEY_FILE, resolveServiceKey } from './config/service-key.ts';
import { appServiceKeyFile } from './config/apps.ts';
import { describeStoreLocation, openStore } from './store/open.ts';
import { selectSecp256k1Backend } from './nostr/secp256k1.ts';
import { describeTopology, topologyServesEverySlot } from './store/port-topology.ts';
import type { StorePort } from './store/port.ts';
import { nip98PublicUrlWarning } from './api/nip98-auth.ts';

/** How long `doctor` waits for one relay to accept a WebSocket. */
export const DOCTOR_RELAY_TIMEOUT_MS = 5_000;

type Say = (line: string) => void;

/** What doctor uses from outside, injectable (a test's store). */
export interface DoctorDeps {
  openStore?: (location: StoreLocation) => Promise<StorePort>;
  /** null when the relay accepts a WebSocket, else why not (a test's relays). */
  probeRelay?: (url: string) => Promise<string | null>;
}

/**
 * `nostr-push doctor`: checks what a start would need and says plainly what is wrong. Returns the
 * exit status: 0 when everything needed to serve is in order, 1 otherwise. Fails: no relay
 * reachable (for a listener), the HTTP port taken, an enabled transport whose credentials do not
 * load, the store, the data directory, the service key. Warnings (one relay of several down, a
 * provider without credentials, no admin key yet) do not fail it: the service runs without them.
 */
export async function runDoctor(loaded: LoadedConfig, say: Say, deps: DoctorDeps = {}): Promise<number> {
  const open = deps.openStore ?? openStore;
  const { config } = loaded;
  let failures = 0;
  const ok = (what: string) => say(`ok    ${what}`);
  const warn = (what: string) => say(`warn  ${what}`);
  const fail = (what: string) => {
    failures++;
    say(`FAIL  ${what}`);
  };

  ok(`configuration (${loaded.sources.join(' < ')}); roles: ${config.roles.join(', ')}`);

  try {
    mkdirSync(config.data_dir, { recursive: true });
    accessSync(config.data_dir, constants.W_OK);
    ok(`data directory ${config.data_dir} is writable`);
  } catch (err) {
    fail(`data directory ${config.data_dir}: ${(err as Error).message}`);
  }

  if (config.service.private_key_hex === '' && !existsSync(join(config.data_dir, SERVICE_KEY_FILE))) {
    warn(`no service key yet: one will be generated in ${join(config.data_dir, SERVICE_KEY_FILE)} on first start`);
  } else {
    try {
      const key = resolveServiceKey(config.service.private_key_hex, config.data_dir);
      ok(`service key ${key.npub} (from ${key.source})`);
    } catch (err) {
      fail(`service key: ${(err as Error).message}`);
    }
  }

  // The WASM fallback serves correctly, only slower, so a missing addon is a warning; a backend
  // forced by NOSTR_PUSH_SECP256K1 that is unavailable stops `serve`, so it fails here too.
  try {
    const secp256k1 = selectSecp256k1Backend(process.env);
    if (secp256k1.degraded) warn(secp256k1.summary);
    else ok(secp256k1.summary);
  } catch (err) {
    fail(`secp256k1: ${(err as Error).message}`);
  }

  const nip98Warning = nip98PublicUrlWarning(config);
  if (nip98Warning) {
    // On loopback only the URL this process sees is the URL clients use (a trial on one machine);
    // anywhere else a proxy or a public name is in front, and every NIP-98 request and NIP-9a
    // callback URL needs the public URL.
    if (listensOnLoopbackOnly(config.server.listen_addr)) warn(`${nip98Warning} (fine while it listens on loopback only)`);
    else fail(`${nip98Warning}; NIP-9a callback URLs cannot be made without it`);
  } else if (config.roles.includes('api')) ok(`NIP-98 requests are checked against server.public_url ${config.server.public_url}`);

  // Which protocol stacks run: our own, or the standard fallback the operator switched to.
  ok(protocolStacksLine(config));

  const location = resolveStoreLocation(config);
  let probe = await probeStore(location, open);
  if (probe.error) {
    // A cluster client can lose a node connection on first contact on a loaded host ("Connection
    // is closed."): the service retries such a step, so doctor looks once more before failing.
    const first = probe.error;
    probe = await probeStore(location, open);
    if (!probe.error) warn(`store: a first look failed (${first.message}); a second one answered`);
  }
  for (const [verdict, line] of probe.lines) (verdict === 'ok' ? ok : verdict === 'warn' ? warn : fail)(line);
  if (probe.error) fail(`store ${describeStoreLocation(location)}: ${probe.error.message}`);

  const servesHttp = config.roles.includes('api') || config.roles.includes('pusher');
  if (servesHttp) {
    const listen = parseListenAddr(config.server.listen_addr);
    const taken = listen ? await probeListen(listen.host, listen.port) : null;
    if (taken) fail(`${taken} (is nostr-push already running? server.listen_addr)`);
    else ok(`the HTTP port is free (${config.server.listen_addr})`);
  }

  const results = await Promise.all(config.nostr.relays.map((url) => (deps.probeRelay ?? probeRelay)(url)));
  let reachable = 0;
  for (const [i, result] of results.entries()) {
    const url = config.nostr.relays[i] as string;
    if (result === null) {
      reachable++;
      ok(`relay ${url} accepts connections`);
    } else warn(`relay ${url}: ${result}`);
  }
  // The listener receives nothing without a relay: the service would run, deaf.
  const noRelay = 'no relay is reachable: the service would keep retrying, but receives nothing until one is (nostr.relays)';
  if (reachable === 0) (config.roles.includes('listener') ? fail : warn)(noRelay);

  const checkFcm = (firebase: Config['firebase'], app: string) => {
    if (firebase.credentials_path === '')
      warn(`${app}FCM is off: set firebase.credentials_path (NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH) to a service-account JSON`);
    else {
      try {
        const account = JSON.parse(readFileSync(firebase.credentials_path, 'utf8')) as Record<string, unknown>;
        const missing = ['client_email', 'private_key', 'token_uri'].filter((k) => typeof account[k] !== 'string');
        if (missing.length > 0) fail(`${app}FCM credentials ${firebase.credentials_path} lack ${missing.join(', ')}`);
        else ok(`${app}FCM credentials for ${String(account.client_email)} (project ${firebase.project_id})`);
      } catch (err) {
        fail(`${app}FCM credentials ${firebase.credentials_path}: ${(err as Error).message}`);
      }
    }
  };
  checkFcm(config.firebase, '');
  const checkApns = (apns: Config['apns'], app: string) => {
    if (apns.key_path === '' || apns.key_id === '' || apns.team_id === '' || apns.bundle_id === '') return;
    try {
      readApnsKey(apns.key_path);
      ok(`${app}APNs key ${apns.key_id} for ${apns.bundle_id} loads`);
    } catch (err) {
      fail(`${app}${(err as Error).message}`);
    }
  };
  checkApns(config.apns, '');

  // The other apps (tenancy): each one's service key and FCM credentials.
  for (const app of config.apps) {
    const label = `app ${app.id}: `;
    const keyFile = join(config.data_dir, appServiceKeyFile(app.id));
    if (app.config.service.private_key_hex === '' && !existsSync(keyFile))
      warn(`${label}no service key yet: one will be generated in ${keyFile} on first start`);
    else {
      try {
        const key = resolveServiceKey(app.config.service.private_key_hex, config.data_dir, appServiceKeyFile(app.id));
        ok(`${label}service key ${key.npub} (from ${key.source})`);
      } catch (err) {
        fail(`${label}service key: ${(err as Error).message}`);
      }
    }
    checkFcm(app.config.firebase, label);
    checkApns(app.config.apns, label);
  }

  say(failures === 0 ? 'doctor: ready to serve' : `doctor: ${failures} problem(s) to fix before serving`);
  return failures === 0 ? 0 : 1;
}

/** The HTTP/2 client and the ntfy WebSocket server the configuration selects. */
export function protocolStacksLine(config: Pick<Config, 'delivery' | 'ntfy'>): string {
  const http2 = config.delivery.http2_client === 'node' ? 'node:http2' : 'our own';
  const websocket = config.ntfy.websocket === 'ws' ? 'the ws package' : 'our own';
  return (
    `HTTP/2 client: ${config.delivery.http2_client} (${http2}; delivery.http2_client); ` +
    `ntfy WebSocket server: ${config.ntfy.websocket} (${websocket}; ntfy.websocket)`
  );
}

/** null when `host:port` can be bound now (and is let go at once), else the one line why not. */
function probeListen(host: string, port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const server = createNetServer();
    server.once('error', (err) => resolve(listenFailure(host, port, err).message));
    server.listen(port, host, () => server.close(() => resolve(null)));
  });
}

/** null when the relay accepted a WebSocket within the timeout, else why not. */
function probeRelay(url: string): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url, { handshakeTimeout: DOCTOR_RELAY_TIMEOUT_MS });
    const timer = setTimeout(() => finish('timed out'), DOCTOR_RELAY_TIMEOUT_MS);
    let settled = false;
    function finish(result: string | null) {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.removeAllListeners();
      socket.on('error', () => undefined);
      socket.terminate();
      resolve(result);
    }
    socket.once('open', () => finish(null));
    socket.once('error', (err) => finish(err.message));
  });
}

type Verdict = 'ok' | 'warn' | 'fail';

/** One look at the store: the lines it gives, and the error that ended it early, if one did. */
async function probeStore(
  location: StoreLocation,
  open: (location: StoreLocation) => Promise<StorePort>,
): Promise<{ lines: Array<[Verdict, string]>; error?: Error }> {
  const lines: Array<[Verdict, string]> = [];
  try {
    const store = await open(location);
    try {
      await store.ping();
      // The topology first: on a cluster with a master down, it says why the reads below fail.
      const topology = await store.topology();
      if (topology.kind === 'redis-cluster') {
        if (topologyServesEverySlot(topology)) lines.push(['ok', `store: ${describeTopology(topology)}`]);
        else lines.push(['fail', `store: ${describeTopology(topology)}; commands for the uncovered slots fail until a replica takes over`]);
        for (const node of topology.nodes) {
          const role = node.role === 'master' ? `master, ${node.slots} slots` : `replica of ${node.masterId?.slice(0, 8) ?? '?'}`;
          lines.push([
            node.reachable ? 'ok' : 'warn',
            `  node ${node.address} ${node.id.slice(0, 8)} (${role})${node.reachable ? '' : ' unreachable'}`,
          ]);
        }
      } else lines.push(['ok', `store: ${describeTopology(topology)}`]);
      const adminKeys = (await store.listApiKeys(DEFAULT_APP_ID)).filter((k) => k.role === 'admin' && k.revokedAtMs === null);
      if (adminKeys.length > 0)
        lines.push(['ok', `${adminKeys.length} admin key(s) of app ${DEFAULT_APP_ID} (the console and the admin API)`]);
      else
        lines.push([
          'warn',
          `no admin key of app ${DEFAULT_APP_ID} yet: the next start prints one, or make one now with nostr-push apps keys create ${DEFAULT_APP_ID} --role admin`,
        ]);
      const inbound = await store.queueStats('inbound');
      lines.push([
        'ok',
        `store ${describeStoreLocation(location)} answers (inbound queue: ${inbound.ready} ready, ${inbound.leased} leased, ${inbound.dead} dead)`,
      ]);
    } finally {
      await store.close();
    }
    return { lines };
  } catch (err) {
    return { lines, error: err instanceof Error ? err : new Error(String(err)) };
  }
}

/** True when `listenAddr` is a loopback address (127.0.0.0/8, ::1, localhost): reachable from this machine only. */
export function listensOnLoopbackOnly(listenAddr: string): boolean {
  const host = parseListenAddr(listenAddr)
    ?.host.replace(/^\[|\]$/g, '')
    .toLowerCase();
  return host !== undefined && (host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host));
}
