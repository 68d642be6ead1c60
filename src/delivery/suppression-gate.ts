/**
 * The suppression gate of the delivery stage (issue 15 item 5): before any push goes to a
 * provider, the recipient and each device token are checked against the app's suppressions
 * (`POST /v1/admin/suppressions`), in one store read. A suppressed recipient gets nothing; a
 * suppressed device is left out and the recipient's other devices are pushed. Every push kind
 * passes here, since every push goes through the outbound queue's one handler (`outbound.ts`).
 */
import type { SuppressionTarget } from '../store/port-suppressions.ts';
import type { DeviceRegistration, StorePort } from '../store/port.ts';

/** The devices that may be pushed; [] when the recipient (or every device) is suppressed. */
export type SuppressionGate = (appId: string, recipient: string, devices: readonly DeviceRegistration[]) => Promise<DeviceRegistration[]>;

export function storeSuppressionGate(store: StorePort): SuppressionGate {
  return async (appId, recipient, devices) => {
    if (devices.length === 0) return [];
    const targets: SuppressionTarget[] = [
      { kind: 'pubkey', value: recipient },
      ...devices.map((d) => ({ kind: 'token' as const, value: d.token })),
    ];
    const suppressed = await store.suppressedAmong(appId, targets);
    if (suppressed[0]) return [];
    return devices.filter((_, i) => !suppressed[i + 1]);
  };
}
