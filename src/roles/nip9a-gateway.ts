/**
 * Role `gateway`: the NIP-9a watcher (relays → matched deliveries on the `nip9a` queue) and the
 * callback worker of that queue, in one process so the per-relay pending bound is counted where
 * both ends run. Run one gateway process per store: two would watch the same relays (their
 * deliveries are deduplicated by queue id and outcome record, but the relay traffic doubles).
 */
import type { RoleContext } from './roles.ts';
import { offThreadVerifier } from '../nostr/crypto-worker-pool.ts';
import { runQueueWorker } from './queue-worker.ts';
import { gatewaySettings } from '../nip9a/gateway/config.ts';
import { createCallbackPoster, type CallbackPoster } from '../nip9a/gateway/callback-post.ts';
import { CallbackPostThreads } from '../nip9a/gateway/callback-post-threads.ts';
import { nip9aDeliveryHandler } from '../nip9a/gateway/delivery.ts';
import { Nip9aGateway, type Nip9aDelivery } from '../nip9a/gateway/gateway.ts';
import { gatewayMetrics } from '../nip9a/gateway/metrics.ts';
import { LeasedInlet } from '../store/queue-work.ts';
import { OutboundPolicy, resolverFromEnvironment } from '../net/public-connect.ts';
import { outboundRefusalReporter } from '../net/refusals.ts';

/** Supervisor task names (health flags). */
export const TASK_NIP9A_DELIVERY = 'nip9a_delivery';

/** Lease of one delivery: the request's timeout and a wide margin for the store round trips around it. */
const LEASE_MARGIN_MS = 25_000;

/** Start the role; returns its stopper and the gateway (the benchmark feeds it directly). */
export async function startGatewayRole(
  ctx: RoleContext,
  options: { post?: CallbackPoster } = {},
): Promise<{ stop(): Promise<void>; gateway: Nip9aGateway }> {
  const settings = gatewaySettings(ctx.config.nip9a);
  const log = ctx.logger.child({ role: 'gateway' });
  const metrics = gatewayMetrics(ctx.metrics);
  const leaseMs = settings.requestTimeoutMs + LEASE_MARGIN_MS;
  // Matched deliveries are queued leased and handed straight to this process's worker (one store
  // write before the first attempt instead of an enqueue and a lease: bench/nip9a).
  const inlet = new LeasedInlet<Nip9aDelivery>();
  const reportRefusal = outboundRefusalReporter(ctx.metrics, log);
  const relayPolicy = new OutboundPolicy({
    purpose: 'nip9a_relay',
    rules: { allowLoopback: settings.policy.allowLoopback, allowPrivate: false },
    resolver: resolverFromEnvironment(),
    onRefused: reportRefusal,
  });
  const gateway = new Nip9aGateway({
    relayPolicy,
    store: ctx.store,
    settings,
    verifier: ctx.cryptoPool ? offThreadVerifier(ctx.verifier, ctx.cryptoPool) : ctx.verifier,
    clock: ctx.store.clock,
    logger: log,
    metrics,
    wake: ctx.wake,
    handOff: { inlet, leaseMs },
  });
  if (settings.policy.allowLoopback)
    log.warn('nip9a.allow_loopback_callbacks is on: loopback callbacks and relays bypass the SSRF allowlist');
  if (settings.policy.allowedOrigins.size === 0 && !settings.policy.allowLoopback)
    log.info('nip9a.callback_origins is empty: the gateway accepts no registration until the operator lists callback origins');
  const poster =
    settings.postThreads > 0
      ? new CallbackPostThreads({
          threads: settings.postThreads,
          allowLoopback: settings.policy.allowLoopback,
          onThreadExit: (reason) =>
            log.warn({ reason }, 'nip9a callback POST thread exited; its POSTs are retried, a new thread takes over'),
        })
      : createCallbackPoster({ allowLoopback: settings.policy.allowLoopback });
  const handle = nip9aDeliveryHandler({
    store: ctx.store,
    settings,
    metrics,
    logger: log,
    reportRefusal,
    onSettled: (relay) => gateway.settled(relay),
    knownRegistration: (pubkey, d, eventId) => gateway.loadedRegistration(pubkey, d, eventId),
    post: options.post ?? poster.post,
  });
  // The worker first, so its inlet is open before the first relay event can match.
  ctx.supervisor.spawn(TASK_NIP9A_DELIVERY, 'critical', (signal) =>
    runQueueWorker<Nip9aDelivery>({
      store: ctx.store,
      queue: 'nip9a',
      leaseMs,
      maxAttempts: settings.maxAttempts,
      pollMs: ctx.config.queue.poll_millis,
      inlet,
      signal,
      wake: ctx.wake,
      logger: log,
      metrics: ctx.metrics,
      concurrency: settings.deliveryConcurrency,
      batchSize: 2 * settings.deliveryConcurrency,
      handle,
    }),
  );
  await gateway.start();
  return {
    gateway,
    stop: async () => {
      gateway.stop();
      await poster.close();
    },
  };
}
