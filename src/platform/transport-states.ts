/**
 * Which push transports an app has, and why the others are off, from its configuration alone (the
 * rules of `delivery/transports.ts`): the console shows it per app, beside the pushes each
 * transport made and the ones that failed because it is off.
 */
import type { Config } from '../config/defaults.ts';

export type TransportName = 'fcm' | 'apns' | 'webpush' | 'unifiedpush';

export interface TransportState {
  transport: TransportName;
  configured: boolean;
  /** What it runs with when on; when off, what is missing. */
  detail: string;
}

export function transportStates(config: Config): TransportState[] {
  const { firebase, apns, webpush } = config;
  const vapid = webpush.vapid_private_key !== '' ? 'the configured VAPID key' : 'a generated VAPID key';
  return [
    firebase.credentials_path === ''
      ? { transport: 'fcm', configured: false, detail: 'off: firebase.credentials_path is not set (a service-account JSON)' }
      : {
          transport: 'fcm',
          configured: true,
          detail: `project ${firebase.project_id || '(from the credentials)'} via ${firebase.api_base_url}`,
        },
    apns.key_path === ''
      ? { transport: 'apns', configured: false, detail: 'off: apns.key_path is not set (with key_id, team_id and bundle_id)' }
      : {
          transport: 'apns',
          configured: true,
          detail: `bundle ${apns.bundle_id || '(unset)'}, key ${apns.key_id || '(unset)'}${apns.sandbox ? ', sandbox' : ''}`,
        },
    { transport: 'webpush', configured: true, detail: `needs no credentials; ${vapid}` },
    { transport: 'unifiedpush', configured: true, detail: `through the Web Push transport; ${vapid}` },
  ];
}
