/**
 * Publishing: `PUT`/`POST /{topic}` (the body is the message), `PUT`/`POST /` (a JSON message,
 * as Apprise and other clients send it), and {@link appendUnifiedPushMessage}, the same append
 * for code in this process (Web Push delivery to an endpoint on this server).
 *
 * Every publish is appended to the topic's durable queue in the store first; the answer is the
 * stored message, whose id is the one every subscriber sees. Nothing else happens on the publish
 * path: the pusher finds the message through the store.
 */
import type { IncomingMessage } from 'node:http';
import type { NtfyMessage } from '../store/port-ntfy.ts';
import type { StorePort } from '../store/port.ts';
import { NTFY_MESSAGE_SIZE_LIMIT_BYTES } from '../config/defaults.ts';
import type { Metrics } from '../observability/metrics.ts';
import { honoVisitorAddress, lightParamSource, nodeBindings, type NtfyContext, type NtfyHonoContext } from './context.ts';
import { NtfyError } from './errors.ts';
import { contentFromBody, parsePriority, readPublishOptions, type ParamSource, type PublishOptions } from './publish-params.ts';
import { checkTopic } from './topics.ts';
import { messageJsonLine } from './wire.ts';

/** A JSON publish body may be twice the message limit (ntfy's rule: room for the other fields). */
const JSON_BODY_LIMIT_FACTOR = 2;

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

async function append(ctx: NtfyContext, topic: string, options: PublishOptions, body: Buffer): Promise<NtfyMessage> {
  const content = contentFromBody(body, options);
  const message = await ctx.store.appendNtfyMessage(topic, content, ctx.settings.cacheDurationMs);
  (options.unifiedPush ? ctx.publishedUnifiedPush : ctx.publishedPlain).inc();
  return message;
}

/**
 * `PUT`/`POST /{topic}` in order: visitor limit, topic, write access, options, body, append.
 * Returns the answer line: the same `{json}\n` the json and ws subscribers get, serialised once.
 */
export async function publishToTopic(
  ctx: NtfyContext,
  request: { topicSegment: string; address: string; params: ParamSource; readBody: (maxBytes: number) => Promise<Buffer | null> },
): Promise<string> {
  checkVisitor(ctx, request.address);
  const topic = checkTopic(request.topicSegment);
  authorizeWrite(ctx, request.params, topic);
  const options = readPublishOptions(request.params);
  const body = await request.readBody(ctx.settings.messageSizeLimitBytes);
  if (body === null) throw new NtfyError('MESSAGE_TOO_LARGE', `more than ${ctx.settings.messageSizeLimitBytes} bytes`);
  return messageJsonLine(await append(ctx, topic, options, body));
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

function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new NtfyError('JSON_INVALID', `${field} must be a string`);
  return value;
}

/** The publish options and message of a JSON publish body. */
function jsonPublish(raw: unknown): { topic: string; options: PublishOptions; message: string } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new NtfyError('JSON_INVALID');
  const body = raw as Record<string, unknown>;
  const topic = optionalString(body, 'topic');
  if (topic === undefined) throw new NtfyError('TOPIC_INVALID');
  const options: PublishOptions = { markdown: body.markdown === true, unifiedPush: false };
  const title = optionalString(body, 'title');
  if (title !== undefined) options.title = title;
  const click = optionalString(body, 'click');
  if (click !== undefined) options.click = click;
  const icon = optionalString(body, 'icon');
  if (icon !== undefined) options.icon = icon;
  if (body.priority !== undefined && body.priority !== null) {
    if (typeof body.priority !== 'number' && typeof body.priority !== 'string')
      throw new NtfyError('JSON_INVALID', 'priority must be a number');
    options.priority = parsePriority(String(body.priority));
  }
  if (body.tags !== undefined && body.tags !== null) {
    if (!Array.isArray(body.tags) || !body.tags.every((t): t is string => typeof t === 'string'))
      throw new NtfyError('JSON_INVALID', 'tags must be strings');
    const tags = body.tags.map((t) => t.trim()).filter((t) => t !== '');
    if (tags.length > 0) options.tags = tags;
  }
  return { topic, options, message: optionalString(body, 'message') ?? '' };
}

/** `PUT`/`POST /` with a JSON body (`{"topic","message","title","priority","tags",…}`). */
export async function handlePublishJson(ctx: NtfyContext, c: NtfyHonoContext): Promise<Response> {
  checkVisitor(ctx, honoVisitorAddress(c, ctx.settings.behindProxy));
  const params = lightParamSource(c);
  const body = await readBodyCapped(c, params, JSON_BODY_LIMIT_FACTOR * ctx.settings.messageSizeLimitBytes);
  if (body === null) throw new NtfyError('JSON_BODY_TOO_LARGE');
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new NtfyError('JSON_INVALID');
  }
  const { topic, options, message } = jsonPublish(parsed);
  checkTopic(topic);
  authorizeWrite(ctx, params, topic);
  const messageBytes = Buffer.from(message, 'utf8');
  if (messageBytes.length > ctx.settings.messageSizeLimitBytes)
    throw new NtfyError('MESSAGE_TOO_LARGE', `more than ${ctx.settings.messageSizeLimitBytes} bytes`);
  return jsonLineAnswer(messageJsonLine(await append(ctx, topic, options, messageBytes)));
}
