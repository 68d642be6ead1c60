/**
 * The built-in ntfy-compatible UnifiedPush server (seed 004; reference unifiedpush-ntfy.md).
 * `createNtfyServer` is what the service mounts; `appendUnifiedPushMessage` and
 * `localNtfyTopicOf` are what other parts of nostr-push (Web Push delivery) use to deliver to a
 * topic of this server without an HTTP hop.
 */
export { createNtfyServer, type NtfyServer, type NtfyServerOptions } from './server.ts';
export { appendUnifiedPushMessage } from './publish.ts';
export { localNtfyTopicOf, checkTopic } from './topics.ts';
export { NtfyError, NTFY_ERRORS } from './errors.ts';
export { runNtfyExpiry } from './janitor.ts';
export { runNtfyScheduledDelivery } from './scheduled.ts';
export { ntfySettings, type NtfySettings } from './config.ts';
export type { NtfyHub } from './hub.ts';
