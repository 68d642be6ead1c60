import type { Config } from '../config/defaults.ts';
import type { ServiceKey } from '../config/service-key.ts';
import type { StorePort } from '../store/port.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { EventVerifier } from '../nostr/event.ts';
import { CONTROL_KINDS } from '../nostr/kinds.ts';
import { routeInbound, type InboundEnvelope } from '../engine/router.ts';
import { createNip44ControlDecryptor } from '../engine/nip44-decryptor.ts';
import { Listener } from '../listener/listener.ts';
import { DONE, runQueueWorker, type QueueSignal } from './queue-worker.ts';
import { sleep, type Supervisor } from './supervisor.ts';

export interface RoleContext {
  config: Config;
  key: ServiceKey;
  store: StorePort;
  metrics: Metrics;
  supervisor: Supervisor;
  wake: QueueSignal;
  verifier: EventVerifier;
  logger: Logger;
}

/** Health flag names of the critical tasks (divine's names, so its probes and dashboards carry over). */
export const TASK_NOSTR_LISTENER = 'nostr_listener';
export const TASK_EVENT_HANDLER = 'event_handler';
export const TASK_TOKEN_CLEANUP = 'token_cleanup';

export interface StartedRoles {
  /** Stop what needs more than the supervisor's abort signal (sockets, cursor flushes). */
  stop(): Promise<void>;
}

/** Start the tasks of every role in `config.roles`. Roles share nothing but the store. */
export async function startRoles(ctx: RoleContext): Promise<StartedRoles> {
  const { config, supervisor, store } = ctx;
  const stoppers: Array<() => Promise<void>> = [];

  if (config.roles.includes('engine')) {
    const decryptor = createNip44ControlDecryptor(ctx.key.secretHex);
    const log = ctx.logger.child({ role: 'engine' });
    const deps = {
      store,
      decryptor,
      servicePubkey: ctx.key.pubkey,
      processedEventTtlSecs: config.service.processed_event_ttl_secs,
      clock: store.clock,
      logger: log,
      metrics: ctx.metrics,
    };
    ctx.metrics.lastEventProcessed.set(Math.floor(store.clock.nowMs() / 1000));
    supervisor.spawn(TASK_EVENT_HANDLER, 'critical', (signal) =>
      runQueueWorker<InboundEnvelope>({
        store,
        queue: 'inbound',
        // One sequential consumer per replica: the control and video-record rules rely on it.
        concurrency: 1,
        batchSize: 64,
        leaseMs: config.queue.lease_secs * 1000,
        maxAttempts: config.queue.max_attempts,
        pollMs: config.queue.poll_millis,
        signal,
        wake: ctx.wake,
        logger: log,
        metrics: ctx.metrics,
        handle: async (item) => {
          await routeInbound(deps, item.payload);
          ctx.metrics.eventsProcessed.inc();
          ctx.metrics.lastEventProcessed.set(Math.floor(store.clock.nowMs() / 1000));
          return DONE;
        },
      }),
    );
  }

  if (config.roles.includes('listener')) {
    const liveKinds = [...new Set([...CONTROL_KINDS, ...config.notification.event_kinds])];
    const listener = new Listener({
      relays: config.nostr.relays,
      servicePubkey: ctx.key.pubkey,
      serviceSecretKeyHex: ctx.key.secretHex,
      liveKinds,
      processWindowDays: config.service.process_window_days,
      notifyListHistoryLimit: config.service.notify_list_history_limit,
      eventSilenceTimeoutSecs: config.nostr.event_silence_timeout_secs,
      verifier: ctx.verifier,
      cursors: store,
      clock: store.clock,
      logger: ctx.logger.child({ role: 'listener' }),
      metrics: ctx.metrics,
      sink: async (accepted) => {
        const envelope: InboundEnvelope = accepted;
        await store.enqueue('inbound', { id: accepted.event.id, payload: envelope });
        ctx.wake.notify('inbound');
      },
    });
    supervisor.spawn(TASK_NOSTR_LISTENER, 'critical', async (signal) => {
      await listener.start();
      await Promise.race([listener.done, new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))]);
    });
    stoppers.push(() => listener.stop());
  }

  if (config.roles.includes('janitor')) {
    supervisor.spawn(TASK_TOKEN_CLEANUP, 'tolerated', (signal) => runTokenCleanup(ctx, signal));
  }

  return {
    async stop() {
      await Promise.allSettled(stoppers.map((s) => s()));
    },
  };
}

/**
 * The stale-token sweep (reference §11.3): once at start, then every `cleanup.interval_secs`. A
 * token is stale when it had neither a registration nor a delivered push for `token_max_age_days`.
 */
async function runTokenCleanup(ctx: RoleContext, signal: AbortSignal): Promise<void> {
  const { cleanup } = ctx.config;
  const log = ctx.logger.child({ role: 'janitor' });
  if (!cleanup.enabled) {
    log.warn('stale-token cleanup is disabled');
    return;
  }
  if (cleanup.interval_secs <= 0 || cleanup.token_max_age_days <= 0) {
    log.error({ interval: cleanup.interval_secs, maxAgeDays: cleanup.token_max_age_days }, 'stale-token cleanup misconfigured; not running');
    return;
  }
  while (!signal.aborted) {
    try {
      const removed = await ctx.store.sweepStaleTokens(cleanup.token_max_age_days * 86_400_000);
      if (removed > 0) {
        ctx.metrics.tokensPruned.inc({ reason: 'stale' }, removed);
        log.info({ removed }, 'stale tokens removed');
      }
    } catch (err) {
      log.error({ err: (err as Error).message }, 'stale-token sweep failed');
    }
    await sleep(cleanup.interval_secs * 1000, signal).catch(() => undefined);
  }
}
