/**
 * Subscribing: `GET /{topics}/json|sse|raw` (HTTP streams) here, `/{topics}/ws` in
 * `websocket.ts`; both start with {@link prepareSubscription}.
 *
 * Order, as in ntfy: request limit, topics, authorization, parameters, the connection limit;
 * then the starting cursor is resolved from `since=`; only then are headers written, so every
 * refusal is a proper ntfy error. A stream sends `open`, any `since=latest` messages and, with
 * `scheduled=1`, the pending scheduled ones, then everything after the cursor and every later
 * message; `poll=1` sends the cached messages (then, with `scheduled=1`, the pending ones) and
 * ends, without `open`.
 */
import type { ServerResponse } from 'node:http';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { NtfyContext, NtfyHonoContext } from './context.ts';
import { honoVisitorAddress, lightParamSource, nodeBindings } from './context.ts';
import { NtfyError } from './errors.ts';
import { readBoolParam, readParam, type ParamSource } from './publish-params.ts';
import { scheduledAsMessage, SCHEDULED_LIST_LIMIT } from './scheduled.ts';
import { parseSince } from './since.ts';
import { pollMessages, subscriptionStart, type SubscriptionStart } from './since-cursor.ts';
import { openHttpStream, streamHeaders } from './sinks.ts';
import { parseTopicList } from './topics.ts';
import { releaseNothing } from './visitor.ts';
import { controlFrame, messageFrame, type Transport } from './wire.ts';

/** A subscription that passed every check, ready to be served. */
export interface PreparedSubscription {
  topics: string[];
  /** The topic segment as requested, for `open`/`keepalive` events. */
  topicLabel: string;
  poll: boolean;
  start: SubscriptionStart;
  /** Give the visitor's connection slot back; call once when the subscription ends. */
  release: () => void;
}

export interface SubscriptionRequest {
  topicSegment: string;
  params: ParamSource;
  address: string;
  authorization: string | undefined;
}

/** Every check of a subscribe, then its starting point. Throws {@link NtfyError}. */
export async function prepareSubscription(ctx: NtfyContext, request: SubscriptionRequest): Promise<PreparedSubscription> {
  if (!ctx.limits.takeRequest(request.address)) throw new NtfyError('TOO_MANY_REQUESTS');
  const topics = parseTopicList(request.topicSegment);
  const identity = ctx.settings.authorizer.authenticate(request.authorization, request.params.query('auth'));
  ctx.settings.authorizer.authorize(identity, topics, 'read');
  const poll = readBoolParam(request.params, 'x-poll', 'poll', 'po');
  const scheduled = readBoolParam(request.params, 'x-scheduled', 'scheduled', 'sched');
  const since = parseSince(readParam(request.params, 'x-since', 'since', 'si'), poll, ctx.clock.nowMs());
  // A poll holds no connection slot.
  const release = poll ? releaseNothing : ctx.limits.openSubscription(request.address);
  if (!release) throw new NtfyError('TOO_MANY_SUBSCRIPTIONS');
  try {
    const start = await subscriptionStart(ctx.store, topics, since);
    if (scheduled) {
      const pending = (await ctx.store.readNtfyScheduled(topics, SCHEDULED_LIST_LIMIT)).map(scheduledAsMessage);
      if (poll) start.scheduled = pending;
      else start.preload = [...start.preload, ...pending];
    }
    return { topics, topicLabel: request.topicSegment, poll, start, release };
  } catch (err) {
    release();
    throw err;
  }
}

/**
 * A poll's messages, streamed. The first batch is read before the headers, so a store that is
 * down is a clean 500; a failure later ends the response early (the client polls again and drops
 * what it already has by id).
 */
async function servePoll(
  ctx: NtfyContext,
  outgoing: ServerResponse,
  transport: Exclude<Transport, 'ws'>,
  prepared: PreparedSubscription,
  batchSize: number,
): Promise<void> {
  const messages = pollMessages(ctx.store, prepared.topics, prepared.start, batchSize);
  const first = await messages.next();
  outgoing.writeHead(200, streamHeaders(transport));
  let sent = 0;
  try {
    for (let item = first; !item.done; item = await messages.next()) {
      outgoing.write(messageFrame(transport, item.value));
      sent += 1;
    }
    outgoing.end();
  } catch (err) {
    ctx.logger.warn({ topics: prepared.topicLabel, err: (err as Error).message }, 'ntfy poll failed midway; response cut short');
    outgoing.destroy();
  }
  ctx.metrics.ntfyDelivered.inc({ transport }, sent);
}

/** `GET /{topics}/json|sse|raw`. */
export async function handleHttpSubscribe(ctx: NtfyContext, c: NtfyHonoContext, transport: Exclude<Transport, 'ws'>): Promise<Response> {
  const hub = ctx.hub;
  const { outgoing } = nodeBindings(c);
  if (!hub || !outgoing) throw new NtfyError('SUBSCRIBE_NOT_SERVED');
  const params = lightParamSource(c);
  const prepared = await prepareSubscription(ctx, {
    topicSegment: c.req.param('topics') ?? '',
    params,
    address: honoVisitorAddress(c, ctx.settings.behindProxy),
    authorization: params.header('authorization'),
  });

  if (prepared.poll) {
    await servePoll(ctx, outgoing, transport, prepared, hub.batchSize);
    return RESPONSE_ALREADY_SENT;
  }

  const sink = openHttpStream(outgoing, {
    transport,
    topicLabel: prepared.topicLabel,
    keepalives: ctx.timers.keepalives,
    clock: ctx.clock,
  });
  sink.write(controlFrame(transport, 'open', prepared.topicLabel, ctx.clock.nowMs()));
  for (const message of prepared.start.preload) sink.write(messageFrame(transport, message));
  hub.subscribe(prepared.topics, prepared.topicLabel, transport, sink, prepared.start.cursor, prepared.release);
  return RESPONSE_ALREADY_SENT;
}
