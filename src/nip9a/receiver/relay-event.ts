/**
 * The engine's handling of a NIP-9a relay-event notice (router.ts `RelayEventNotice`): one
 * generic `relayEvent` push to the callback's owner, through the same gates and claims as any
 * other notification: the recipient allowlist, their devices, and the per-(event, recipient)
 * claim, so an event already pushed to them (as a like from our own relay subscription, or by an
 * earlier callback) is not pushed again. Preferences have no category for it (content.ts).
 */
import { randomUUID } from 'node:crypto';
import type { GateOutcome } from '../../engine/content.ts';
import type { OutboundQueue } from '../../engine/outbound-queue.ts';
import { buildRelayEventPayload } from '../../engine/payload.ts';
import type { RelayEventNotice } from '../../engine/router.ts';
import type { Metrics } from '../../observability/metrics.ts';
import type { StorePort } from '../../store/port.ts';
import type { OutboundNotification } from '../../notification/types.ts';

export interface RelayEventDeps {
  store: StorePort;
  /** Recipient allowlist; empty means everyone. */
  allowedPubkeys: ReadonlySet<string>;
  processedEventTtlSecs: number;
  outbound: OutboundQueue;
  metrics: Metrics;
}

export async function handleRelayEventNotice(deps: RelayEventDeps, notice: RelayEventNotice): Promise<GateOutcome> {
  const outcome = await gateAndQueue(deps, notice);
  deps.metrics.contentRecipients.inc({ type: 'relayEvent', outcome });
  return outcome;
}

async function gateAndQueue(deps: RelayEventDeps, notice: RelayEventNotice): Promise<GateOutcome> {
  const { recipient } = notice;
  if (deps.allowedPubkeys.size > 0 && !deps.allowedPubkeys.has(recipient)) return 'not_allowlisted';
  const [state] = await deps.store.readRecipients([recipient]);
  if (!state || state.devices.length === 0) return 'no_tokens';
  const notification: OutboundNotification = {
    eventId: notice.eventId,
    recipient,
    type: 'relayEvent',
    message: buildRelayEventPayload({
      eventId: notice.eventId,
      relay: notice.relay,
      recipient,
      ...(notice.eventKind === undefined ? {} : { eventKind: notice.eventKind }),
    }),
    claim: { eventId: notice.eventId, recipient, owner: randomUUID() },
    eventCreatedAt: notice.createdAt,
    devices: state.devices,
  };
  const [taken] = await deps.outbound.claimAndEnqueue([notification], deps.processedEventTtlSecs);
  return taken ? 'queued' : 'claimed';
}
