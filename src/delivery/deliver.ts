import { DEFAULT_APP_ID } from '../config/apps.ts';
import type { DeviceRegistration, RecipientClaim, StorePort } from '../store/port.ts';
import type { Logger } from '../observability/logger.ts';
import { lazyChild, redact, type LineLogger } from '../observability/logger.ts';
import { TurnBatcher } from '../util/turn-batcher.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { PushTransport, SendOutcome } from './types.ts';
import type { Copywriter } from '../notification/templates/compile.ts';
import { localizedGroups } from './localized.ts';
import { withBadge } from '../notification/badge.ts';
import type { OutboundNotification, PushMessage } from '../notification/types.ts';

/** What one device's send came to, for the delivery log. */
export interface DeviceAttempt {
  token: string;
  transport: string;
  outcome: SendOutcome;
}

const NO_OUTCOME: SendOutcome = Object.freeze({ ok: false as const, error: { kind: 'internal_response' as const, message: 'no outcome' } });

/** What became of one delivery, over every device of the recipient. */
export interface DeliveryReport {
  devices: number;
  delivered: number;
  failed: number;
  pruned: number;
  /** Set when nothing was delivered and some device failed retryably: the longest Retry-After asked. */
  retryAfterSecs: number | null;
  /** Each device's outcome, in device order (empty without devices). */
  attempts?: DeviceAttempt[];
  /** Set when a gate of the delivery stage stopped it before any provider call: why (`throttled`, `suppression`, `quiet_hours`, `already_delivered`). */
  suppressed?: string;
}

export interface DeliveryDeps {
  store: StorePort;
  transports: PushTransport[];
  /** The app whose pushes these are (labels `push_device_outcomes_total`); absent, the default app. */
  appId?: string;
  videoRecordTtlSecs: number;
  logger: Logger;
  metrics: Metrics;
  /**
   * Refreshes the activity of delivered tokens; defaults to `store.refreshTokenActivity`. The
   * delivery role passes one that writes the refreshes of a whole turn together.
   */
  refreshTokenActivity?: (tokens: string[]) => Promise<unknown>;
  /**
   * The recipient's badge (total new count) at send time; defaults to one `store.readInboxBadges`
   * call per delivery. The delivery role passes one that reads a whole turn's badges together;
   * null sends without a badge (`inbox.enabled: false`).
   */
  readBadge?: ((pubkey: string) => Promise<number>) | null;
  /**
   * Records a delivered bell (a notification with a `rateWindow` and a claim): token activity,
   * the rate window, the `newPost` coordinate record and the claim, in one store step. The
   * delivery role passes {@link batchedBellBookkeeping}; without it the records are written one
   * by one.
   */
  recordDeliveredBell?: (bell: DeliveredBell) => Promise<void>;
  /**
   * Renders templated copy in each device's language (`localized.ts`, docs/copy.md); absent,
   * every device gets the engine's English.
   */
  copywriter?: Copywriter;
}

/** What {@link DeliveryDeps.recordDeliveredBell} records of one delivered bell. */
export interface DeliveredBell {
  video: { owner: string; dTag: string };
  claim: RecipientClaim;
  tokens: string[];
  rateLimitSecs: number;
}

/**
 * A bell recorder that writes every delivered bell of one turn of the event loop with one
 * `recordBellBatch` per video: a fan-out delivers thousands of bells a second, and three
 * single-row writes per bell would cost the store more than the sends.
 */
export function batchedBellBookkeeping(
  store: StorePort,
  ttls: { claimTtlSecs: number; videoRecordTtlSecs: number },
): (bell: DeliveredBell) => Promise<void> {
  const batcher = new TurnBatcher<DeliveredBell, undefined>(async (bells) => {
    const byVideo = new Map<string, DeliveredBell[]>();
    for (const bell of bells) {
      const key = `${bell.video.owner}\n${bell.video.dTag}\n${bell.rateLimitSecs}`;
      const group = byVideo.get(key);
      if (group) group.push(bell);
      else byVideo.set(key, [bell]);
    }
    for (const group of byVideo.values()) {
      const [first] = group;
      if (!first) continue;
      await store.recordBellBatch({
        video: first.video,
        delivered: group.map((bell) => ({ claim: bell.claim, tokens: bell.tokens })),
        failed: [],
        released: [],
        rateLimited: [],
        claimTtlSecs: ttls.claimTtlSecs,
        rateLimitSecs: first.rateLimitSecs,
        videoRecordTtlSecs: ttls.videoRecordTtlSecs,
      });
    }
    return bells.map(() => undefined);
  });
  return (bell) => batcher.add(bell);
}

/** A refresher that writes every refresh asked for in one turn of the event loop as one store call. */
export function batchedTokenActivity(store: StorePort): (tokens: string[]) => Promise<unknown> {
  const batcher = new TurnBatcher<string[], number>(async (lists) => {
    const changed = await store.refreshTokenActivity(lists.flat());
    return lists.map(() => changed);
  });
  return (tokens) => (tokens.length === 0 ? Promise.resolve(0) : batcher.add(tokens));
}

/** A badge reader that reads every badge asked for while a read is out as one store call. */
export function batchedBadgeReader(store: StorePort): (pubkey: string) => Promise<number> {
  const batcher = new TurnBatcher<string, number>((pubkeys) => store.readInboxBadges(pubkeys), { oneInFlight: true });
  return (pubkey) => batcher.add(pubkey);
}

/**
 * `message` with the recipient's badge as it is now (issue 13). A failed read is logged and the
 * push goes out with the badge the message already carries, or none: a stale or missing badge is
 * better than a push held back.
 */
async function withCurrentBadge(deps: DeliveryDeps, notification: OutboundNotification, log: LineLogger): Promise<PushMessage> {
  if (deps.readBadge === null) return notification.message;
  try {
    const badge = await (deps.readBadge ?? (async (pubkey: string) => (await deps.store.readInboxBadges([pubkey]))[0] ?? 0))(
      notification.recipient,
    );
    return withBadge(notification.message, badge);
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'badge read failed; sending without the current badge');
    return notification.message;
  }
}

/** What the transports get: the template stays behind (it is the delivery stage's, not the wire's). */
function withoutTemplate(message: PushMessage): PushMessage {
  if (message.copy === undefined) return message;
  const { copy: _template, ...rest } = message;
  return rest;
}

/**
 * Send `message` to `devices`, each group through the transport that serves it, all groups at
 * once. One outcome per token; never throws (a device no transport serves is an `initialization`
 * failure).
 */
export async function sendToDevices(
  transports: readonly PushTransport[],
  devices: readonly DeviceRegistration[],
  message: PushMessage,
  signal?: AbortSignal,
): Promise<Map<string, SendOutcome>> {
  if (devices.length === 1) {
    // Most recipients have one device: no grouping to do.
    const device = devices[0] as DeviceRegistration;
    const transport = transports.find((t) => t.handles(device));
    if (transport) {
      const results = await transport.sendBatch([device], message, signal);
      if (!results.has(device.token))
        results.set(device.token, { ok: false, error: { kind: 'internal_response', message: 'transport returned no outcome' } });
      return results;
    }
  }
  const outcomes = new Map<string, SendOutcome>();
  const byTransport = new Map<PushTransport, DeviceRegistration[]>();
  for (const device of devices) {
    const transport = transports.find((t) => t.handles(device));
    if (!transport)
      outcomes.set(device.token, {
        ok: false,
        error: { kind: 'initialization', message: `no ${device.transport} transport is configured` },
      });
    else byTransport.set(transport, [...(byTransport.get(transport) ?? []), device]);
  }
  await Promise.all(
    [...byTransport].map(async ([transport, group]) => {
      const results = await transport.sendBatch(group, message, signal);
      for (const device of group) {
        outcomes.set(
          device.token,
          results.get(device.token) ?? { ok: false, error: { kind: 'internal_response', message: 'transport returned no outcome' } },
        );
      }
    }),
  );
  return outcomes;
}

/**
 * One count per device in `push_device_outcomes_total`: a device no transport of the app serves
 * is `unconfigured` (its failure is counted even though no provider was called).
 */
function countDeviceOutcomes(
  deps: Pick<DeliveryDeps, 'transports' | 'metrics' | 'appId'>,
  devices: readonly DeviceRegistration[],
  outcomes: ReadonlyMap<string, SendOutcome>,
): void {
  for (const device of devices) {
    const outcome = outcomes.get(device.token) ?? NO_OUTCOME;
    const served = outcome.ok || deps.transports.some((t) => t.handles(device));
    deps.metrics.pushDeviceOutcomes.inc({
      app: deps.appId ?? DEFAULT_APP_ID,
      transport: device.transport,
      outcome: outcome.ok ? 'ok' : served ? 'failed' : 'unconfigured',
    });
  }
}

/** What the device outcomes of one notification amount to (reference §4.5 steps 10 and 12). */
export interface DeviceOutcomes {
  /** Tokens that took the push. */
  delivered: string[];
  /** Tokens the provider no longer knows (the only answer that prunes a token). */
  dead: string[];
  /** For dead tokens whose provider said since when (APNs 410 `timestamp`, ms): prune only if not registered after it. */
  deadSinceMs: Map<string, number>;
  failed: number;
  /** Set only when nothing was delivered and some device failed retryably: the longest Retry-After asked. */
  retryAfterSecs: number | null;
}

/** Classify per-token outcomes; plain failures (neither dead nor retryable) are logged at warn. */
export function classifyOutcomes(outcomes: ReadonlyMap<string, SendOutcome>, log: LineLogger): DeviceOutcomes {
  const delivered: string[] = [];
  const dead: string[] = [];
  const deadSinceMs = new Map<string, number>();
  let failed = 0;
  let retryable = false;
  let retryAfterSecs: number | null = null;
  for (const [token, outcome] of outcomes) {
    if (outcome.ok) {
      delivered.push(token);
      continue;
    }
    failed++;
    if (outcome.error.kind === 'token_not_registered') {
      dead.push(token);
      if (outcome.error.unregisteredAtMs !== undefined) deadSinceMs.set(token, outcome.error.unregisteredAtMs);
    } else if (outcome.error.kind === 'retryable_internal') {
      retryable = true;
      retryAfterSecs = Math.max(retryAfterSecs ?? 0, outcome.error.retryAfterSecs ?? 1);
    } else log.warn({ token: redact(token), kind: outcome.error.kind, err: outcome.error.message }, 'push failed');
  }
  if (delivered.length > 0 || !retryable) retryAfterSecs = null;
  return { delivered, dead, deadSinceMs, failed, retryAfterSecs };
}

/**
 * Whether a token the provider called dead `sinceMs` may still be pruned: not when it was
 * registered again after that moment (APNs 410: "delete the token if it was not re-registered
 * after `timestamp`"). The token's activity time stands in for its registration time: a
 * registration sets it, and no delivery can have raised it past Apple's timestamp, since Apple
 * refuses the token from then on.
 */
export async function stillDeadAfterRegistration(store: StorePort, token: string, sinceMs: number | undefined): Promise<boolean> {
  if (sinceMs === undefined) return true;
  const activityMs = await store.tokenActivityMs(token);
  return activityMs === null || activityMs <= sinceMs;
}

/**
 * Send one notification to every device of its recipient and record the outcome (reference §4.5
 * steps 9–12): delivered tokens get their activity refreshed, a video trigger writes its
 * coordinate records, dead tokens are pruned (only on a dead-token answer). Bookkeeping failures
 * are logged and never fail the delivery. Never throws for provider errors.
 */
export async function deliverNotification(
  deps: DeliveryDeps,
  notification: OutboundNotification,
  signal?: AbortSignal,
  knownDevices?: DeviceRegistration[],
): Promise<DeliveryReport> {
  const { store } = deps;
  const log = lazyChild(deps.logger, () => ({ eventId: notification.eventId, recipient: notification.recipient, type: notification.type }));
  const devices = knownDevices ?? (await store.listDevices(notification.recipient));
  const report: DeliveryReport = { devices: devices.length, delivered: 0, failed: 0, pruned: 0, retryAfterSecs: null };
  if (devices.length === 0) return report;

  const message = await withCurrentBadge(deps, notification, log);
  // withBadge keeps data only: the template is read from the queued message.
  const templated: PushMessage = notification.message.copy ? { ...message, copy: notification.message.copy } : message;
  const groups = localizedGroups(devices, templated, deps.copywriter);
  const outcomes =
    groups.length === 1
      ? await sendToDevices(deps.transports, devices, withoutTemplate(groups[0]?.message ?? message), signal)
      : new Map(
          (
            await Promise.all(groups.map((group) => sendToDevices(deps.transports, group.devices, withoutTemplate(group.message), signal)))
          ).flatMap((results) => [...results]),
        );
  const { delivered, dead, deadSinceMs, failed, retryAfterSecs } = classifyOutcomes(outcomes, log);
  report.delivered = delivered.length;
  report.failed = failed;
  report.retryAfterSecs = retryAfterSecs;
  report.attempts = devices.map((device) => ({
    token: device.token,
    transport: device.transport,
    outcome: outcomes.get(device.token) ?? NO_OUTCOME,
  }));
  countDeviceOutcomes(deps, devices, outcomes);

  await bookkeeping(deps, notification, delivered, dead, deadSinceMs, report, log);
  return report;
}

async function bookkeeping(
  deps: DeliveryDeps,
  n: OutboundNotification,
  delivered: string[],
  dead: string[],
  deadSinceMs: ReadonlyMap<string, number>,
  report: DeliveryReport,
  log: LineLogger,
): Promise<void> {
  if (delivered.length === 0 && dead.length === 0) return;
  const { store } = deps;
  const step = async (what: string, work: () => Promise<unknown>) => {
    try {
      await work();
    } catch (err) {
      log.warn({ step: what, err: (err as Error).message }, 'delivery bookkeeping failed; carrying on');
    }
  };
  const bellRecorder = deps.recordDeliveredBell;
  if (bellRecorder && delivered.length > 0 && n.rateWindow && n.video && n.claim) {
    const bell: DeliveredBell = {
      video: { owner: n.video.owner, dTag: n.video.dTag },
      claim: n.claim,
      tokens: delivered,
      rateLimitSecs: n.rateWindow.ttlSecs,
    };
    await step('bell records', () => bellRecorder(bell));
    await pruneDead(deps, n, dead, deadSinceMs, report, log, step);
    return;
  }
  const refresh = deps.refreshTokenActivity ?? ((tokens: string[]) => store.refreshTokenActivity(tokens));
  await step('refresh token activity', () => refresh(delivered));
  if (delivered.length > 0 && n.rateWindow) {
    const window = n.rateWindow;
    await step('bell rate window', () => store.openNewPostRateWindow(window.subscriber, window.creator, window.ttlSecs));
  }
  if (delivered.length > 0 && n.video) {
    const video = n.video;
    await step('video records', () =>
      store.writeVideoRecords({ owner: video.owner, dTag: video.dTag, recipient: n.recipient }, video.recordTypes, deps.videoRecordTtlSecs),
    );
  }
  await pruneDead(deps, n, dead, deadSinceMs, report, log, step);
}

async function pruneDead(
  deps: DeliveryDeps,
  n: OutboundNotification,
  dead: string[],
  deadSinceMs: ReadonlyMap<string, number>,
  report: DeliveryReport,
  log: LineLogger,
  step: (what: string, work: () => Promise<unknown>) => Promise<void>,
): Promise<void> {
  const { store } = deps;
  for (const token of dead) {
    await step('prune token', async () => {
      if (!(await stillDeadAfterRegistration(store, token, deadSinceMs.get(token)))) {
        log.info({ token: redact(token) }, 'provider says the token is gone, but it was registered again since: kept');
        return;
      }
      if (await store.removeToken(n.recipient, token)) {
        report.pruned++;
        deps.metrics.tokensPruned.inc({ reason: 'invalid' });
        log.info({ token: redact(token) }, 'pruned a token the provider no longer knows');
      }
    });
  }
}
