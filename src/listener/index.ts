/** The relay listener's public surface, for the composition root, /health and doctor. */
export {
  createListener,
  ListenerConfigError,
  DEFAULT_EVENT_SILENCE_TIMEOUT_SECS,
  DEFAULT_NOTIFY_LIST_HISTORY_LIMIT,
  DEFAULT_PROCESS_WINDOW_DAYS,
  type Listener,
  type ListenerOptions,
  type ListenerTuning,
  type UserRelayListenerOptions,
} from './listener.ts';
export type { UserRelaySummary } from './user-relays.ts';
export type { AcceptedEvent, EventContext, EventSink, RelayCursorStore, RelayStatus } from './types.ts';
