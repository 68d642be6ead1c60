/**
 * Publishing: `PUT`/`POST /{topic}` (the body is the message), `PUT`/`POST /` (a JSON message,
 * as Apprise and other clients send it), `GET /{topic}/publish|send|trigger` (webhooks), and
 * {@link appendUnifiedPushMessage}, the same append for code in this process (Web Push delivery to
 * an endpoint on this server).
 *
 * Every publish is recorded in the store first, and nothing else happens on the publish path: the
 * pusher finds the message through the store. Usually it is appended to the topic's durable queue
 * and the answer is the stored message, whose id is the one every subscriber sees. A scheduled
 * publish (`Delay`) is kept until it is due and the answer is that pending message (`time` its
 * delivery time); a `Cache: no` publish is only announced to live subscribers.
 */
import type { IncomingMessage } from 'node:http';
import type { NtfyMessage } from '../store/port-ntfy.ts';
import type { StorePort } from '../store/port.ts';
import { NTFY_MESSAGE_SIZE_LIMIT_BYTES } from '../config/defaults.ts';
import type { Metrics } from '../observability/metrics.ts';
import { honoVisitorAddress, lightParamSource, nodeBindings, type NtfyContext, type NtfyHonoContext } from './context.ts';
import { NtfyError } from './errors.ts';
import { jsonPublishRequest } from './json-publish.ts';
import { readPublishOptions, type PublishContext } from './publish-options.ts';
import { contentFromBody, type ParamSource, type PublishOptions } from './publish-params.ts';
import { scheduledAsMessage } from './scheduled.ts';
import { checkTopic } from './topics.ts';
import { messageJsonLine } from './wire.ts';

/** A JSON publish body may be twice the message limit (ntfy's rule: room for the other fields). */
export const JSON_BODY_LIMIT_FACTOR = 2;

/**
 * Append a UnifiedPush message to `topic` in the store, as an HTTP publish with `?up=1` would:
 * the bytes exactly (UTF-8 text as it is, anything else as base64 with `encoding: base64`),
 * expiring after `ttlMs`. Subscribers are woken through the store. Throws {@link NtfyError} for
 * an invalid topic (40009/40010) or a body over 4096 bytes (41304).
 *
 * This is the operation Web Push delivery uses for endpoints on this server (see
 * `localNtfyTopicOf` in `topics.ts`), so a push to a local ntfy topic needs no HTTP request.
 */
export async function appendUnifiedPushMessage(
  store: StorePort,
  topic: string,
  body: Uint8Array,
  ttlMs: number,
  metrics?: Metrics,
): Promise<NtfyMessage> {
  checkTopic(topic);
  if (body.byteLength > NTFY_MESSAGE_SIZE_LIMIT_BYTES)
    throw new NtfyError('MESSAGE_TOO_LARGE', `more than ${NTFY_MESSAGE_SIZE_LIMIT_BYTES} bytes`);
  const content = contentFromBody(Buffer.from(body.buffer, body.byteOffset, body.byteLength), { unifiedPush: true, markdown: false });
  const message = await store.appendNtfyMessage(topic, content, ttlMs);
  metrics?.ntfyPublished.inc({ mode: 'local' });
  return message;
}

/**
 * Node's request body up to `maxBytes`, or null past it (whatever Content-Length claims). Past the limit the rest is read and
 * dropped instead of the stream being destroyed, which would reset the connection before the 413
 * answer is written.
 */
export function readIncomingCapped(incoming: IncomingMessage, maxBytes: number): Promise<Buffer | null> {
  if (Number(incoming.headers['content-length'] ?? '0') > maxBytes) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      cleanup();
      incoming.resume();
      resolve(null);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
  });
}

/**
 * The body, or null when it is longer than `maxBytes` (whatever Content-Length claims). Read from
 * Node's request stream when there is one: going through `c.req` would make @hono/node-server
 * build a fetch `Request` (with its AbortSignal) for every publish, a large share of its cost.
 */
async function readBodyCapped(c: NtfyHonoContext, params: ParamSource, maxBytes: number): Promise<Buffer | null> {
  const declared = Number(params.header('content-length') ?? '0');
  if (declared > maxBytes) return null;
  const { incoming } = nodeBindings(c);
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (incoming) return readIncomingCapped(incoming, maxBytes);
  const reader = c.req.raw.body?.getReader();
  if (!reader) return Buffer.alloc(0);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** ntfy's JSON answers end with a newline. */
export function jsonAnswer(body: unknown, status = 200): Response {
  return jsonLineAnswer(`${JSON.stringify(body)}\n`, status);
}

function jsonLineAnswer(line: string, status = 200): Response {
  return new Response(line, { status, headers: { 'Content-Type': 'application/json', 'Access-Control-Allow-Origin': '*' } });
}

function checkVisitor(ctx: NtfyContext, address: string): void {
  if (!ctx.limits.takeRequest(address)) throw new NtfyError('TOO_MANY_REQUESTS');
}

function authorizeWrite(ctx: NtfyContext, params: ParamSource, topic: string): void {
  const identity = ctx.settings.authorizer.authenticate(params.header('authorization'), params.query('auth'));
  ctx.settings.authorizer.authorize(identity, [topic], 'write');
}

/** What option reading needs from the server: the store clock's now and the delay bounds. */
function publishContext(ctx: NtfyContext): PublishContext {
  return { nowMs: ctx.clock.nowMs(), delay: { minMs: ctx.settings.minDelayMs, maxMs: ctx.settings.maxDelayMs } };
}

/**
 * Publish one message as its options say: scheduled (`Delay`), announced to live subscribers only
 * (`Cache: no`, `Poll-ID`), or appended. Returns what the publisher is answered with.
 */
async function publishMessage(ctx: NtfyContext, topic: string, options: PublishOptions, body: Buffer): Promise<NtfyMessage> {
  const content = contentFromBody(body, options);
  if (options.deliverAtMs !== undefined) {
    const scheduled = await ctx.store.scheduleNtfyMessage(topic, content, options.deliverAtMs, ctx.settings.cacheDurationMs);
    ctx.publishedScheduled.inc();
    return scheduledAsMessage(scheduled);
  }
  if (options.cache === false) {
    const announced = await ctx.store.announceNtfyMessage(topic, content);
    ctx.publishedUncached.inc();
    return announced;
  }
  const message = await ctx.store.appendNtfyMessage(topic, content, ctx.settings.cacheDurationMs);
  (options.unifiedPush ? ctx.publishedUnifiedPush : ctx.publishedPlain).inc();
  return message;
}

/**
 * `PUT`/`POST /{topic}` in order: visitor limit, topic, write access, options, body, publish.
 * Returns the answer line: the same `{json}\n` the json and ws subscribers get, serialised once.
 */
export async function publishToTopic(
  ctx: NtfyContext,
  request: { topicSegment: string; address: string; params: ParamSource; readBody: (maxBytes: number) => Promise<Buffer | null> },
): Promise<string> {
  checkVisitor(ctx, request.address);
  const topic = checkTopic(request.topicSegment);
  authorizeWrite(ctx, request.params, topic);
  const options = readPublishOptions(request.params, publishContext(ctx));
  const body = await request.readBody(ctx.settings.messageSizeLimitBytes);
  if (body === null) throw new NtfyError('MESSAGE_TOO_LARGE', `more than ${ctx.settings.messageSizeLimitBytes} bytes`);
  return messageJsonLine(await publishMessage(ctx, topic, options, body));
}

/** `PUT`/`POST /{topic}` through Hono (the front listener in `front.ts` usually answers it first). */
export async function handlePublish(ctx: NtfyContext, c: NtfyHonoContext): Promise<Response> {
  const params = lightParamSource(c);
  const line = await publishToTopic(ctx, {
    topicSegment: c.req.param('topic') ?? '',
    address: honoVisitorAddress(c, ctx.settings.behindProxy),
    params,
    readBody: (maxBytes) => readBodyCapped(c, params, maxBytes),
  });
  return jsonLineAnswer(line);
}

/**
 * `GET /{topic}/publish`, `/send` or `/trigger` (ntfy's webhooks): a publish whose options are
 * query parameters (or headers) and whose body is empty. One topic only: a list is 404, as in ntfy.
 */
export async function handlePublishViaGet(ctx: NtfyContext, c: NtfyHonoContext): Promise<Response> {
  const segment = c.req.param('topic') ?? '';
  if (segment.includes(',')) throw new NtfyError('NOT_FOUND');
  const line = await publishToTopic(ctx, {
    topicSegment: segment,
    address: honoVisitorAddress(c, ctx.settings.behindProxy),
    params: lightParamSource(c),
    readBody: () => Promise.resolve(Buffer.alloc(0)),
  });
  return jsonLineAnswer(line);
}

/** `PUT`/`POST /` with a JSON body (`{"topic","message","title","priority","tags",…}`, `json-publish.ts`). */
export async function handlePublishJson(ctx: NtfyContext, c: NtfyHonoContext): Promise<Response> {
  checkVisitor(ctx, honoVisitorAddress(c, ctx.settings.behindProxy));
  const params = lightParamSource(c);
  const body = await readBodyCapped(c, params, JSON_BODY_LIMIT_FACTOR * ctx.settings.messageSizeLimitBytes);
  if (body === null) throw new NtfyError('JSON_BODY_TOO_LARGE');
  const request = jsonPublishRequest(body, params);
  const topic = checkTopic(request.topic);
  authorizeWrite(ctx, params, topic);
  const options = readPublishOptions(request.params, publishContext(ctx), { actions: request.actions });
  const messageBytes = Buffer.from(request.message, 'utf8');
  if (messageBytes.length > ctx.settings.messageSizeLimitBytes)
    throw new NtfyError('MESSAGE_TOO_LARGE', `more than ${ctx.settings.messageSizeLimitBytes} bytes`);
  return jsonLineAnswer(messageJsonLine(await publishMessage(ctx, topic, options, messageBytes)));
}
