/**
 * The live-flow watchdog of one relay connection (divine-push-service §6.4), as a pure state
 * machine: it is told what happened and the time, and answers what to do. The connection owns
 * the timers and the socket.
 *
 * Where divine exits the process (its listener is fatal), nostr-push tears down only that relay's
 * connection and reconnects it with backoff: one bad relay never stops the others.
 */

/** A relay that CLOSEs the sibling subscription within this window after a recovery is repeating a stale close (5 s). */
export const CLOSED_RECOVERY_GRACE_MS = 5_000;
/** Most CLOSED recoveries per silence window before the connection is rebuilt instead. */
export const MAX_CLOSED_RECOVERIES_PER_WINDOW = 3;
/** Wait after a `rate-limited:` CLOSED before subscribing again (5 s). */
export const RATE_LIMIT_RECOVERY_BACKOFF_MS = 5_000;

export interface WatchdogOptions {
  /** Silence window: no live event for this long triggers a resubscription. */
  silenceTimeoutMs: number;
  closedGraceMs?: number;
  maxClosedRecoveries?: number;
  rateLimitBackoffMs?: number;
}

export type WatchdogAction =
  /** Nothing to do. */
  | { action: 'none' }
  /** Send both live REQs again (since = cursor − overlap) after `delayMs`. */
  | { action: 'resubscribe'; delayMs: number; trigger: 'silence' | 'closed' }
  /** Give up on this connection: tear it down and reconnect with backoff. */
  | { action: 'reconnect'; trigger: 'silence' | 'closed'; why: string };

interface ClosedRecovery {
  triggerId: string;
  startedAtMs: number;
  siblingClosed: boolean;
  flowResumed: boolean;
}

export class LiveFlowWatchdog {
  private recoveryAttempted = false;
  private closedRecovery: ClosedRecovery | null = null;
  private closedRecoveryTimes: number[] = [];
  private deadline: number;
  private readonly silenceTimeoutMs: number;
  private readonly closedGraceMs: number;
  private readonly maxClosedRecoveries: number;
  private readonly rateLimitBackoffMs: number;

  constructor(options: WatchdogOptions, nowMs: number) {
    this.silenceTimeoutMs = options.silenceTimeoutMs;
    this.closedGraceMs = options.closedGraceMs ?? CLOSED_RECOVERY_GRACE_MS;
    this.maxClosedRecoveries = options.maxClosedRecoveries ?? MAX_CLOSED_RECOVERIES_PER_WINDOW;
    this.rateLimitBackoffMs = options.rateLimitBackoffMs ?? RATE_LIMIT_RECOVERY_BACKOFF_MS;
    this.deadline = nowMs + this.silenceTimeoutMs;
  }

  /** When the silence deadline falls (milliseconds). */
  get deadlineMs(): number {
    return this.deadline;
  }

  /** A live event from this relay was handled (taken by the sink, or already known). */
  onLiveEvent(nowMs: number): void {
    this.recoveryAttempted = false;
    this.deadline = nowMs + this.silenceTimeoutMs;
    if (this.closedRecovery !== null) this.closedRecovery.flowResumed = true;
  }

  /**
   * Postpones the deadline by a full window without counting as flow: used while the sink is
   * busy, since silence caused by our own backpressure is not the relay's fault.
   */
  postpone(nowMs: number): void {
    this.deadline = nowMs + this.silenceTimeoutMs;
  }

  /** The silence deadline passed. */
  onSilence(nowMs: number): WatchdogAction {
    if (this.recoveryAttempted) {
      return {
        action: 'reconnect',
        trigger: 'silence',
        why: `event flow did not resume within ${this.silenceTimeoutMs} ms after resubscribing`,
      };
    }
    this.recoveryAttempted = true;
    this.deadline = nowMs + this.silenceTimeoutMs;
    return { action: 'resubscribe', delayMs: 0, trigger: 'silence' };
  }

  /** The relay sent CLOSED for one of the live subscriptions (`auth-required:` is handled before this). */
  onClosed(subscriptionId: string, reason: string, nowMs: number): WatchdogAction {
    const recovery = this.closedRecovery;
    if (recovery !== null && recovery.flowResumed && nowMs - recovery.startedAtMs >= this.closedGraceMs) {
      this.closedRecovery = null;
    }
    if (this.closedRecovery !== null) {
      const active = this.closedRecovery;
      if (subscriptionId !== active.triggerId && !active.siblingClosed && nowMs - active.startedAtMs < this.closedGraceMs) {
        active.siblingClosed = true;
        return { action: 'none' };
      }
      return { action: 'reconnect', trigger: 'closed', why: `relay closed recovered subscription ${subscriptionId}: ${reason}` };
    }
    if (this.recoveryAttempted) {
      return {
        action: 'reconnect',
        trigger: 'closed',
        why: `relay closed subscription ${subscriptionId} during event-flow recovery: ${reason}`,
      };
    }
    this.closedRecoveryTimes = this.closedRecoveryTimes.filter((t) => nowMs - t < this.silenceTimeoutMs);
    if (this.closedRecoveryTimes.length >= this.maxClosedRecoveries) {
      return {
        action: 'reconnect',
        trigger: 'closed',
        why: `relay repeatedly closed live subscriptions: ${this.closedRecoveryTimes.length} recoveries within ${this.silenceTimeoutMs} ms`,
      };
    }
    this.closedRecoveryTimes.push(nowMs);
    this.recoveryAttempted = true;
    this.closedRecovery = { triggerId: subscriptionId, startedAtMs: nowMs, siblingClosed: false, flowResumed: false };
    const delayMs = reason.startsWith('rate-limited:') ? this.rateLimitBackoffMs : 0;
    this.deadline = nowMs + delayMs + this.silenceTimeoutMs;
    return { action: 'resubscribe', delayMs, trigger: 'closed' };
  }
}
