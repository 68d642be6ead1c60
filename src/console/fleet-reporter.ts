/**
 * Every process's report to the console: a heartbeat every `console.heartbeat_interval_secs`
 * (roles, task flags, relay connections, ntfy subscriptions) and a metric sample every
 * `console.sample_interval_secs` (`sampler.ts`), both through the store, so any replica's console
 * shows the whole fleet. A failed write is logged and retried at the next tick: the console is
 * never a reason for a process to stop. A graceful stop removes the heartbeat at once.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { RelayStatus } from '../listener/index.ts';
import { CONSOLE_HEARTBEAT_MISSED_BEATS } from '../config/defaults.ts';
import type { HeartbeatTask, HeartbeatUserRelays, ProcessHeartbeat } from '../store/port-fleet.ts';
import type { StorePort } from '../store/port.ts';
import { pushCounters, queueDepths, SAMPLE_RETENTION_MS, TOKEN_COUNT_EVERY_SAMPLES, tokenCounts } from './sampler.ts';
import { sleep } from '../util/async.ts';

/** The supervisor task that runs the reporter (not critical: `/health` does not depend on it). */
export const TASK_FLEET_REPORTER = 'console_reporter';

export interface FleetReporterDeps {
  store: StorePort;
  metrics: Metrics;
  logger: Logger;
  roles: readonly string[];
  version: string;
  heartbeatIntervalMs: number;
  sampleIntervalMs: number;
  tasks: () => HeartbeatTask[];
  /** The listeners' relay connections, each with the app whose listener holds it (absent: the default app's). */
  relays: () => Array<RelayStatus & { app?: string }>;
  /** The user relays of this process's listeners, summed; null when there are none. */
  userRelays?: () => HeartbeatUserRelays | null;
  ntfySubscribers: () => Record<string, number>;
}

/** A process id unique per run: host, pid and 32 random bits (a restarted pid is a new process). */
export function newProcessId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

const userRelaysOf = (summary: HeartbeatUserRelays | null): Pick<ProcessHeartbeat, 'userRelays'> =>
  summary === null ? {} : { userRelays: summary };

export class FleetReporter {
  readonly processId = newProcessId();
  private readonly startedAtMs: number;
  private samples = 0;

  constructor(private readonly deps: FleetReporterDeps) {
    this.startedAtMs = deps.store.clock.nowMs();
  }

  heartbeat(): ProcessHeartbeat {
    return {
      processId: this.processId,
      host: hostname(),
      pid: process.pid,
      roles: [...this.deps.roles],
      version: this.deps.version,
      startedAtMs: this.startedAtMs,
      tasks: this.deps.tasks().map((t) => ({ name: t.name, kind: t.kind, alive: t.alive, ...(t.error ? { error: t.error } : {}) })),
      relays: this.deps.relays().map((r) => ({
        url: r.url,
        connected: r.connected,
        authenticated: r.authenticated,
        lastEventAtMs: r.lastEventAt,
        reconnects: r.reconnects,
        lastError: r.lastError,
        disconnects: r.disconnects ?? [],
        ...(r.app === undefined ? {} : { app: r.app }),
      })),
      ntfySubscribers: this.deps.ntfySubscribers(),
      ...userRelaysOf(this.deps.userRelays?.() ?? null),
    };
  }

  /** Write one heartbeat now. */
  async beat(): Promise<void> {
    await this.deps.store.writeHeartbeat(this.heartbeat(), this.deps.heartbeatIntervalMs * CONSOLE_HEARTBEAT_MISSED_BEATS);
  }

  /** Take and write one sample now. */
  async sample(): Promise<void> {
    const countTokens = this.samples % TOKEN_COUNT_EVERY_SAMPLES === 0;
    this.samples += 1;
    const values = {
      ...(await pushCounters(this.deps.metrics)),
      ...(await queueDepths(this.deps.store)),
      ...(countTokens ? await tokenCounts(this.deps.store) : {}),
    };
    await this.deps.store.writeMetricSample(this.processId, values, SAMPLE_RETENTION_MS);
  }

  /** Beat and sample until `signal` aborts, then remove the heartbeat. */
  async run(signal: AbortSignal): Promise<void> {
    const loop = async (intervalMs: number, what: string, step: () => Promise<void>) => {
      while (!signal.aborted) {
        try {
          await step();
        } catch (err) {
          this.deps.logger.warn({ err: (err as Error).message }, `console ${what} failed; retrying at the next tick`);
        }
        await sleep(intervalMs, signal).catch(() => undefined);
      }
    };
    await Promise.all([
      loop(this.deps.heartbeatIntervalMs, 'heartbeat', () => this.beat()),
      loop(this.deps.sampleIntervalMs, 'metric sample', () => this.sample()),
    ]);
  }

  /** Remove this process's heartbeat (a graceful stop: the console drops it at once). */
  async remove(): Promise<void> {
    try {
      await this.deps.store.removeHeartbeat(this.processId);
    } catch (err) {
      this.deps.logger.warn({ err: (err as Error).message }, 'console heartbeat removal failed; it expires by itself');
    }
  }
}
