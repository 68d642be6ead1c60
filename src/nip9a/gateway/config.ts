/**
 * The gateway's settings, derived once from `nip9a.*` (config/defaults.ts), and the checks that
 * refuse a bad configuration at start.
 */
import type { Nip9aConfig } from '../../config/defaults.ts';
import type { Nip9aRegistrationLimits } from '../../store/port-nip9a-gateway.ts';
import type { Nip9aLimits } from '../registration.ts';
import { parseAllowedOrigin, type CallbackPolicy } from '../ssrf.ts';

/** The value of `nip9a.allow_loopback_callbacks` that turns loopback on outside `NODE_ENV=test`. */
export const LOOPBACK_ACKNOWLEDGEMENT = 'I_UNDERSTAND';

/** Largest callback body: the seed's 4 MiB event allowance plus 4 KiB of envelope. */
export const MAX_CALLBACK_BODY_BYTES = 4 * 1024 * 1024 + 4 * 1024;

export interface GatewaySettings {
  policy: CallbackPolicy;
  limits: Nip9aLimits;
  /** What the store checks with every registration write (per author, per author per relay, watched relays). */
  registrationLimits: Nip9aRegistrationLimits;
  maxPendingPerRelay: number;
  pendingExpiryMs: number;
  requestTimeoutMs: number;
  maxAttempts: number;
  retryDelaysMs: number[];
  outcomeEntries: number;
  outcomeMaxAgeMs: number;
  deliveryConcurrency: number;
  /** Worker threads making the POSTs (0: the gateway's own thread). */
  postThreads: number;
  reloadPollMs: number;
}

/** Every problem with `nip9a.*` beyond the positive numbers `validate.ts` checks. */
export function nip9aConfigProblems(config: Nip9aConfig, nodeEnv: string | undefined): string[] {
  const problems: string[] = [];
  for (const entry of config.callback_origins) {
    const checked = parseAllowedOrigin(entry);
    if (!checked.ok) problems.push(`nip9a.callback_origins: ${checked.reason}`);
  }
  const loopback = config.allow_loopback_callbacks;
  if (loopback !== 'false' && loopback !== 'true' && loopback !== LOOPBACK_ACKNOWLEDGEMENT)
    problems.push(`nip9a.allow_loopback_callbacks must be false, true or ${LOOPBACK_ACKNOWLEDGEMENT}`);
  if (loopback === 'true' && nodeEnv !== 'test')
    problems.push(
      `nip9a.allow_loopback_callbacks: true is refused outside NODE_ENV=test (it bypasses the SSRF allowlist); set it to ${LOOPBACK_ACKNOWLEDGEMENT} if you mean it`,
    );
  if (config.retry_delays_secs.length === 0 || config.retry_delays_secs.some((s) => !(s > 0)))
    problems.push('nip9a.retry_delays_secs must list at least one delay, each greater than zero');
  if (!(config.max_ignore_filters >= 0)) problems.push('nip9a.max_ignore_filters must not be negative');
  return problems;
}

export function gatewaySettings(config: Nip9aConfig): GatewaySettings {
  const allowedOrigins = new Set<string>();
  for (const entry of config.callback_origins) {
    const checked = parseAllowedOrigin(entry);
    if (checked.ok) allowedOrigins.add(checked.url.origin);
  }
  return {
    policy: {
      allowedOrigins,
      allowLoopback: config.allow_loopback_callbacks === 'true' || config.allow_loopback_callbacks === LOOPBACK_ACKNOWLEDGEMENT,
    },
    limits: {
      maxBytes: config.max_registration_bytes,
      maxFilters: config.max_filters,
      maxIgnores: config.max_ignore_filters,
      maxRelays: 4,
    },
    registrationLimits: {
      perAuthor: config.max_registrations_per_author,
      perAuthorPerRelay: config.max_registrations_per_author_per_relay,
      maxWatchedRelays: config.max_watched_relays,
    },
    maxPendingPerRelay: config.max_pending_deliveries_per_relay,
    pendingExpiryMs: config.pending_expiry_secs * 1000,
    requestTimeoutMs: config.request_timeout_secs * 1000,
    maxAttempts: config.max_attempts,
    retryDelaysMs: config.retry_delays_secs.map((s) => s * 1000),
    outcomeEntries: config.outcome_dedup_entries,
    outcomeMaxAgeMs: config.outcome_dedup_max_age_secs * 1000,
    deliveryConcurrency: config.delivery_concurrency,
    postThreads: config.post_threads,
    reloadPollMs: config.reload_poll_millis,
  };
}
