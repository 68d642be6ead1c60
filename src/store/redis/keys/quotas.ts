/**
 * Key names of the per-client quotas (port-client-quotas.ts, issue 35): one section of
 * `createRedisKeys` (`../keys.ts`), the only place keys are built.
 *
 * | key                                         | type | value                                                   |
 * |---------------------------------------------|------|---------------------------------------------------------|
 * | `client_quota:{scope}:{windowStartMs}:{client}` | SET | the members one client address added in the window; `PEXPIRE` at the window's end |
 *
 * The same name in both layouts: every quota step touches this one key, so its slot is whatever
 * the name hashes to. The client address comes last, since an IPv6 address holds `:`.
 */
export function clientQuotaKeys() {
  return {
    clientQuotaKey: (scope: string, windowStartMs: number, client: string): string => `client_quota:${scope}:${windowStartMs}:${client}`,
  };
}
