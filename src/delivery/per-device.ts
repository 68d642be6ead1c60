/**
 * The batch loop of the per-token transports (FCM HTTP v1 and APNs both take one request per
 * device): one send per distinct token, at most `concurrency` at once, a device of another
 * transport refused without a request. Each outcome lands under its token.
 */
import type { DeviceRegistration } from '../store/port.ts';
import type { DeliveryError, SendOutcome } from './types.ts';

/** A failed outcome of `kind` with `message`. */
export function failedOutcome(kind: DeliveryError['kind'], message: string): SendOutcome {
  return { ok: false, error: { kind, message } };
}

export interface PerDeviceSendOptions {
  /** The transport's name in the refusal of a device it does not serve (`FCM`, `APNs`). */
  transportName: string;
  handles: (device: DeviceRegistration) => boolean;
  /** Sends in flight at once. */
  concurrency: number;
  /** One device's send; it must not throw (an exception belongs to its token only). */
  sendOne: (device: DeviceRegistration) => Promise<SendOutcome>;
}

export async function sendPerDevice(
  devices: readonly DeviceRegistration[],
  options: PerDeviceSendOptions,
): Promise<Map<string, SendOutcome>> {
  const outcomes = new Map<string, SendOutcome>();
  // Marked at once so a duplicate token is skipped; the real outcome replaces the mark.
  const sending = failedOutcome('internal_request', `${options.transportName} send did not finish`);
  const pending: DeviceRegistration[] = [];
  for (const device of devices) {
    if (outcomes.has(device.token)) continue;
    if (!options.handles(device)) {
      outcomes.set(
        device.token,
        failedOutcome('invalid_request', `not an ${options.transportName} device (transport ${device.transport})`),
      );
      continue;
    }
    outcomes.set(device.token, sending);
    pending.push(device);
  }
  // One device (most recipients): no worker closures.
  if (pending.length === 1) {
    const device = pending[0] as DeviceRegistration;
    outcomes.set(device.token, await options.sendOne(device));
    return outcomes;
  }
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < pending.length) {
      const device = pending[next++] as DeviceRegistration;
      outcomes.set(device.token, await options.sendOne(device));
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, options.concurrency), pending.length) }, worker));
  return outcomes;
}
