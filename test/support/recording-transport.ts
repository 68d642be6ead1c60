/**
 * An in-process {@link PushTransport} for unit tests of the stages above the transports: records
 * every send and answers from a script. Wire-level behaviour is tested against the FCM fake.
 */
import type { DeviceRegistration } from '../../src/store/port.ts';
import type { PushTransport, SendOutcome } from '../../src/delivery/types.ts';
import type { PushMessage } from '../../src/notification/types.ts';

export interface RecordedSend {
  token: string;
  message: PushMessage;
}

export class RecordingTransport implements PushTransport {
  readonly sent: RecordedSend[] = [];
  /** Outcome per token; tokens not listed succeed. Functions are called per send. */
  readonly script = new Map<string, SendOutcome | (() => SendOutcome)>();

  handles(device: DeviceRegistration): boolean {
    return device.transport === 'fcm';
  }

  async sendBatch(devices: DeviceRegistration[], message: PushMessage): Promise<Map<string, SendOutcome>> {
    const results = new Map<string, SendOutcome>();
    for (const device of devices) {
      const scripted = this.script.get(device.token);
      const outcome = typeof scripted === 'function' ? scripted() : (scripted ?? { ok: true });
      if (outcome.ok) this.sent.push({ token: device.token, message });
      results.set(device.token, outcome);
    }
    return results;
  }

  async close(): Promise<void> {}
}

export const retryable = (retryAfterSecs = 1): SendOutcome => ({
  ok: false,
  error: { kind: 'retryable_internal', message: 'unavailable', retryAfterSecs, status: 503 },
});
export const unregistered: SendOutcome = { ok: false, error: { kind: 'token_not_registered', message: 'UNREGISTERED', status: 404 } };
export const invalidRequest: SendOutcome = { ok: false, error: { kind: 'invalid_request', message: 'bad', status: 400 } };
