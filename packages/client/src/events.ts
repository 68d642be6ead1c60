/**
 * The control events an app publishes for its user (docs/app-developers.md, "Registering"):
 * kind 3079 registers a device, 3080 removes it, 3083 states the user's preferences. Each is
 * `p`-tagged with the service's pubkey and its content is the NIP-44 encryption, to that pubkey, of
 * the JSON payload; the service refuses plaintext. Publish the result to a relay the service
 * watches (or send the same payloads over HTTP with the client's `registerDevice`,
 * `removeDevice` and `setPreferences`).
 */
import type { DeviceRegistrationPayload, PreferencesPayload } from './types.js';
import type { NostrSigner, SignedEvent } from './signer.js';

/** Register a device. */
export const KIND_REGISTER_DEVICE = 3079;
/** Deregister a device. */
export const KIND_DEREGISTER_DEVICE = 3080;
/** The user's notification preferences. */
export const KIND_PREFERENCES = 3083;

const HEX_PUBKEY = /^[0-9a-f]{64}$/;

/** What every control event needs besides its payload. */
export interface ControlEventOptions {
  /** The service's pubkey (hex): `/health`'s `pubkey`, or the app's own service key on a multi-app service. */
  servicePubkey: string;
  /** Unix seconds; default now. The service ignores an event older than the newest it applied for the user and kind. */
  createdAt?: number;
  /** More tags after the `p` tag (the service reads none of them). */
  tags?: string[][];
}

async function controlEvent(signer: NostrSigner, kind: number, payload: object, options: ControlEventOptions): Promise<SignedEvent> {
  const servicePubkey = options.servicePubkey.toLowerCase();
  if (!HEX_PUBKEY.test(servicePubkey)) throw new TypeError('servicePubkey must be a 64-character hex public key');
  const content = await signer.nip44.encrypt(servicePubkey, JSON.stringify(payload));
  return signer.signEvent({
    kind,
    created_at: options.createdAt ?? Math.floor(Date.now() / 1000),
    tags: [['p', servicePubkey], ...(options.tags ?? [])],
    content,
  });
}

/** A signed kind 3079 registering `device` (its `token` and, optionally, transport, locale, timezone, keys). */
export function registrationEvent(
  signer: NostrSigner,
  device: DeviceRegistrationPayload,
  options: ControlEventOptions,
): Promise<SignedEvent> {
  return controlEvent(signer, KIND_REGISTER_DEVICE, device, options);
}

/** A signed kind 3080 removing the device of `token` (only its owner's removal counts). */
export function deregistrationEvent(signer: NostrSigner, token: string, options: ControlEventOptions): Promise<SignedEvent> {
  return controlEvent(signer, KIND_DEREGISTER_DEVICE, { token }, options);
}

/** A signed kind 3083: the whole preferences each time (a field left out clears what it set). */
export function preferencesEvent(signer: NostrSigner, preferences: PreferencesPayload, options: ControlEventOptions): Promise<SignedEvent> {
  return controlEvent(signer, KIND_PREFERENCES, preferences, options);
}
