/**
 * Storage operations of the operator console's view of the fleet: process heartbeats, metric
 * samples, token counts, and console sessions. Part of {@link StorePort}; implemented by both
 * adapters; tested in `test/store/contract/fleet.ts`.
 *
 * Heartbeats. Every process writes its own record every few seconds with a time to live; a record
 * whose time ran out (the process stopped beating) is never listed again. A graceful stop removes
 * it at once.
 *
 * Metric samples. Every process writes a sample of its own counters every few seconds; samples
 * older than the retention given at write time are dropped by later writes and never read. Reads
 * return every process's samples, so any replica's console shows the whole fleet.
 *
 * Sessions. A console login is a session record keyed by the SHA-256 of its random id (the id
 * itself lives only in the browser's cookie), with a time to live, so every replica accepts it.
 *
 * Time: "now" is the store clock; expiry is decided by it on read, in both adapters (Redis also
 * gives the keys a real expiry, only to reclaim the space).
 */
import type { Transport } from './port.ts';

/** One task of a process as its heartbeat reports it (the supervisor's view). */
export interface HeartbeatTask {
  name: string;
  /** `critical` tasks are the `/health` flags. */
  kind: string;
  alive: boolean;
  error?: string;
}

/** One relay connection of a listener process. */
export interface HeartbeatRelay {
  url: string;
  connected: boolean;
  authenticated: boolean;
  /** When the last event from this relay was accepted, ms; null when none yet. */
  lastEventAtMs: number | null;
  reconnects: number;
  lastError: string | null;
  /** The app whose listener holds the connection (each app listens with its own key); absent: the default app's. */
  app?: string;
  /** The latest connections that ended or failed, oldest first (a few): when and why. Absent in older processes' heartbeats. */
  disconnects?: Array<{ atMs: number; error: string | null }>;
}

/** What a process says about itself in a heartbeat. */
export interface ProcessHeartbeat {
  /** Unique per process run (host, pid and a random part). */
  processId: string;
  host: string;
  pid: number;
  roles: string[];
  version: string;
  startedAtMs: number;
  tasks: HeartbeatTask[];
  relays: HeartbeatRelay[];
  /** ntfy topics with live subscribers in this process: topic → subscriptions. */
  ntfySubscribers: Record<string, number>;
  /** The listener's user relays (issue 36); absent without role `listener` or with the feature off. */
  userRelays?: HeartbeatUserRelays;
}

/** A listener's user relays in a heartbeat: counts only (the relays themselves can be hundreds). */
export interface HeartbeatUserRelays {
  watched: number;
  connected: number;
  dropped: number;
  uncoveredUsers: number;
  requestsSent: number;
}

/** A stored heartbeat: as written, with when it was written (store clock). */
export interface ProcessHeartbeatRecord extends ProcessHeartbeat {
  lastSeenAtMs: number;
}

/**
 * One sample of a process's counters and of the gauges it read. Keys are series names
 * (`push:fcm:ok`, `queue:outbound:normal:ready`, `tokens:fcm`, see `console/sampler.ts`); counters
 * are cumulative since the process started (a reader takes differences), gauges are values.
 */
export interface MetricSample {
  processId: string;
  atMs: number;
  values: Record<string, number>;
}

/** One line of {@link FleetStore.countNtfyMessagesByTopic}. */
export interface NtfyTopicCount {
  topic: string;
  messages: number;
}

/** A console session as stored. */
export interface ConsoleSession {
  /** SHA-256 (hex) of the session id from the cookie. */
  idHash: string;
  /** The random CSRF token the page sends back in a header on every state-changing request. */
  csrfToken: string;
  /** The API key the login used (its public id), so a revocation can end its sessions. */
  keyId: string;
  createdAtMs: number;
  expiresAtMs: number;
}

export interface FleetStore {
  /** Write (replace) this process's heartbeat, now, live for `ttlMs`. */
  writeHeartbeat(heartbeat: ProcessHeartbeat, ttlMs: number): Promise<void>;

  /** Every live heartbeat (written less than its time to live ago), ordered by process id. */
  listHeartbeats(): Promise<ProcessHeartbeatRecord[]>;

  /** Forget a heartbeat (a graceful stop); false when there was none. */
  removeHeartbeat(processId: string): Promise<boolean>;

  /**
   * Store a sample taken now (its `atMs` is the store clock's, whatever was passed), and drop
   * every sample, of any process, older than now − `retentionMs`. A second sample of the same
   * process at the same millisecond replaces the first.
   */
  writeMetricSample(processId: string, values: Record<string, number>, retentionMs: number): Promise<void>;

  /** Every sample with `atMs` ≥ `sinceMs`, of every process, oldest first (ties by process id). */
  readMetricSamples(sinceMs: number): Promise<MetricSample[]>;

  /** Registered device tokens per transport (every transport listed, 0 when none). */
  countTokensByTransport(): Promise<Record<Transport, number>>;

  /**
   * Stored ntfy messages per topic (messages not yet removed by the janitor's expiry), topics in
   * name order, at most `limit` topics; topics without messages are not listed.
   */
  countNtfyMessagesByTopic(limit: number): Promise<NtfyTopicCount[]>;

  /** Store a new session. False when its id hash is already stored (and live). */
  createConsoleSession(session: ConsoleSession): Promise<boolean>;

  /** The live session with this id hash, or null (unknown or expired). */
  findConsoleSession(idHash: string): Promise<ConsoleSession | null>;

  /** End a session; false when there was none. */
  deleteConsoleSession(idHash: string): Promise<boolean>;
}
