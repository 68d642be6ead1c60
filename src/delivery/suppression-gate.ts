/**
 * The suppression gate of the delivery stage (issue 15 item 5): before any push goes to a
 * provider, the recipient and each device token are checked against the app's suppressions
 * (`POST /v1/admin/suppressions`), in one store read. A suppressed recipient gets nothing; a
 * suppressed device is left out and the recipient's other devices are pushed. Every push kind
 * passes here, since every push goes through the outbound queue's one handler (`outbound.ts`).
 */
import type { SuppressionTarget } from '../store/port-suppressions.ts';
import type { DeviceRegistration, StorePort } from '../store/port.ts';
import { TurnBatcher } from '../util/turn-batcher.ts';

/** The devices that may be pushed; [] when the recipient (or every device) is suppressed. */
export type SuppressionGate = (appId: string, recipient: string, devices: readonly DeviceRegistration[]) => Promise<DeviceRegistration[]>;

/** A gate on `store`; the checks of one turn's deliveries are one store read per app. */
export function storeSuppressionGate(store: StorePort): SuppressionGate {
  const batcher = new TurnBatcher<{ appId: string; targets: SuppressionTarget[] }, boolean[]>(
    async (checks) => {
      const byApp = new Map<string, number[]>();
      checks.forEach((check, i) => byApp.set(check.appId, [...(byApp.get(check.appId) ?? []), i]));
      const results: boolean[][] = checks.map(() => []);
      for (const [appId, indexes] of byApp) {
        const flat = await store.suppressedAmong(
          appId,
          indexes.flatMap((i) => checks[i]?.targets ?? []),
        );
        let at = 0;
        for (const i of indexes) {
          const n = checks[i]?.targets.length ?? 0;
          results[i] = flat.slice(at, at + n);
          at += n;
        }
      }
      return results;
    },
    { oneInFlight: true },
  );
  return async (appId, recipient, devices) => {
    if (devices.length === 0) return [];
    const targets: SuppressionTarget[] = [
      { kind: 'pubkey', value: recipient },
      ...devices.map((d) => ({ kind: 'token' as const, value: d.token })),
    ];
    const suppressed = await batcher.add({ appId, targets });
    if (suppressed[0]) return [];
    return devices.filter((_, i) => !suppressed[i + 1]);
  };
}
