/**
 * The few lines a start ends with: where the service listens, where the console is, each app's
 * service key, the store, the relays, and which transports are on and which are off and why. An
 * operator reads them instead of the start-up log; each line is also a log line with the same
 * facts as fields under `summary` (for JSON readers), which pretty output leaves out.
 */
import type { AddressInfo } from 'node:net';
import type { Config, RoleName } from './config/defaults.ts';
import { resolveStoreLocation } from './config/load.ts';
import { describeStoreLocation } from './store/open.ts';
import type { Logger } from './observability/logger.ts';

/** One summary line: the human sentence and its facts. */
export interface SummaryLine {
  msg: string;
  summary: Record<string, unknown>;
}

/** Whether one transport pushes in this process, and what it pushes through or why it does not. */
export interface TransportState {
  name: 'fcm' | 'apns' | 'webpush';
  on: boolean;
  /** On: what it sends through; off: why, and the keys that turn it on. */
  detail: string;
}

/** The roles that build transports (`src/service.ts`): delivery sends, the api sends directly, the scheduler fans out. */
const TRANSPORT_ROLES: readonly RoleName[] = ['delivery', 'api', 'scheduler'];

/**
 * The transports an app's configuration turns on, as `delivery/transports.ts` builds them. A
 * provider without credentials is off: its devices are kept, but nothing reaches them.
 */
export function transportStates(config: Pick<Config, 'firebase' | 'apns'>): TransportState[] {
  const { firebase, apns } = config;
  const apnsKeys = (['key_path', 'key_id', 'team_id', 'bundle_id'] as const).filter((key) => apns[key] === '');
  return [
    firebase.credentials_path === ''
      ? { name: 'fcm', on: false, detail: 'firebase.credentials_path is not set' }
      : { name: 'fcm', on: true, detail: `project ${firebase.project_id || '(from the credentials)'}` },
    apnsKeys.length > 0
      ? { name: 'apns', on: false, detail: `${apnsKeys.map((key) => `apns.${key}`).join(', ')} not set` }
      : { name: 'apns', on: true, detail: `bundle ${apns.bundle_id}${apns.sandbox ? ', sandbox' : ''}` },
    // Needs no credentials: the VAPID key is generated when none is configured.
    { name: 'webpush', on: true, detail: 'Web Push and UnifiedPush endpoints' },
  ];
}

/** `on: fcm (project p), webpush (…); off: apns (why)`. */
export function describeTransports(states: readonly TransportState[]): string {
  const list = (on: boolean) =>
    states
      .filter((s) => s.on === on)
      .map((s) => `${s.name} (${s.detail})`)
      .join(', ');
  const on = list(true);
  const off = list(false);
  return [on === '' ? 'on: none' : `on: ${on}`, ...(off === '' ? [] : [`off: ${off}`])].join('; ');
}

/** `http://host:port` of a bound address (IPv6 in brackets). */
export function addressUrl(address: Pick<AddressInfo, 'address' | 'port' | 'family'>): string {
  const host = address.family === 'IPv6' || address.address.includes(':') ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/**
 * Where a browser on this machine reaches the console: under `server.public_url` when set, else
 * the bound address, with an all-interfaces address (`0.0.0.0`, `::`) read as `localhost`.
 */
export function consoleUrl(address: Pick<AddressInfo, 'address' | 'port' | 'family'>, publicUrl: string): string {
  if (publicUrl !== '') return `${publicUrl}/console`;
  const unspecified = address.address === '0.0.0.0' || address.address === '::';
  return `${unspecified ? `http://localhost:${address.port}` : addressUrl(address)}/console`;
}

export interface StartupFacts {
  version: string;
  config: Config;
  /** The bound HTTP address; null in a process without the api and pusher roles. */
  httpAddress: AddressInfo | null;
  /** Every app: its id, service key npub and configuration (the default first). */
  apps: ReadonlyArray<{ id: string; npub: string; config: Config }>;
}

/** The summary's lines, in the order they are logged. */
export function startupSummary(facts: StartupFacts): SummaryLine[] {
  const { config, httpAddress } = facts;
  const roles = config.roles;
  const lines: SummaryLine[] = [
    { msg: `nostr-push ${facts.version} ready, roles ${roles.join(', ')}`, summary: { version: facts.version, roles } },
  ];
  if (httpAddress) {
    const url = addressUrl(httpAddress);
    lines.push({ msg: `listening on ${url}`, summary: { listening: url } });
    if (!roles.includes('api')) lines.push({ msg: 'console: not in this process (the api role serves it)', summary: { console: null } });
    else if (!config.console.enabled) lines.push({ msg: 'console: off (console.enabled is false)', summary: { console: null } });
    else {
      const at = consoleUrl(httpAddress, config.server.public_url);
      lines.push({ msg: `console: ${at}`, summary: { console: at } });
    }
  } else lines.push({ msg: 'no HTTP server in this process (only the api and pusher roles serve HTTP)', summary: { listening: null } });
  for (const app of facts.apps) lines.push({ msg: `app ${app.id}: service key ${app.npub}`, summary: { app: app.id, npub: app.npub } });
  const store = describeStoreLocation(resolveStoreLocation(config));
  lines.push({ msg: `store: ${store}`, summary: { store } });
  if (roles.includes('listener')) {
    for (const app of facts.apps) {
      const relays = app.config.nostr.relays;
      const label = facts.apps.length === 1 ? 'relays' : `relays (${app.id})`;
      lines.push({ msg: `${label}: ${relays.join(', ')}`, summary: { app: app.id, relays } });
    }
  }
  if (roles.some((role) => TRANSPORT_ROLES.includes(role))) {
    for (const app of facts.apps) {
      const states = transportStates(app.config);
      const label = facts.apps.length === 1 ? 'transports' : `transports (${app.id})`;
      lines.push({ msg: `${label} ${describeTransports(states)}`, summary: { app: app.id, transports: states } });
    }
  } else lines.push({ msg: 'transports: none in this process (roles delivery, api and scheduler push)', summary: { transports: [] } });
  return lines;
}

/** Log the summary at info, one line each (a transport that is off is said at warn when the service starts). */
export function logStartupSummary(logger: Logger, facts: StartupFacts): void {
  for (const line of startupSummary(facts)) logger.info({ summary: line.summary }, line.msg);
}
