/**
 * ntfy's wire formats: the message JSON (field order of ntfy's `types.go` `message` struct,
 * empty fields left out as its `omitempty` does) and the framing of each subscribe transport.
 *
 * | transport | message frame                     | open / keepalive                         |
 * |-----------|-----------------------------------|------------------------------------------|
 * | `json`    | `{json}\n`                        | `{json}\n`                               |
 * | `sse`     | `data: {json}\n\n`                | `event: open\ndata: {json}\n\n`          |
 * | `raw`     | message text, `\n` → space, `\n`  | an empty line                            |
 * | `ws`      | text frame `{json}\n`             | `open` as a frame; keepalives are pings  |
 *
 * `open` and `keepalive` carry the topic list as requested (`a,b`); a message carries its own
 * single topic, which the Android app matches exactly against its subscriptions.
 */
import { randomInt } from 'node:crypto';
import type { NtfyAction, NtfyAttachment, NtfyMessage } from '../store/port-ntfy.ts';
import { NTFY_ID_ALPHABET, NTFY_ID_LENGTH } from '../store/ntfy-ids.ts';

export type Transport = 'json' | 'sse' | 'raw' | 'ws';
export const TRANSPORTS: readonly Transport[] = ['json', 'sse', 'raw', 'ws'];

export type ControlEvent = 'open' | 'keepalive';

/** The ntfy message object, as publish answers and subscribers receive it. */
export interface WireMessage {
  id: string;
  /** Left out when it is the id itself, as ntfy does. */
  sequence_id?: string;
  time: number;
  /** Left out for a message that was never stored (`Cache: no`). */
  expires?: number;
  event: 'message' | 'poll_request' | ControlEvent;
  topic: string;
  title?: string;
  message?: string;
  priority?: number;
  tags?: string[];
  click?: string;
  icon?: string;
  actions?: NtfyAction[];
  attachment?: NtfyAttachment;
  poll_id?: string;
  content_type?: string;
  encoding?: string;
}

export const CONTENT_TYPES: Readonly<Record<Exclude<Transport, 'ws'>, string>> = {
  // "Android/Volley client needs charset!" (ntfy)
  json: 'application/x-ndjson; charset=utf-8',
  sse: 'text/event-stream; charset=utf-8',
  raw: 'text/plain; charset=utf-8',
};

export function toWireMessage(message: NtfyMessage): WireMessage {
  // Filled in ntfy's field order (its `message` struct), which is the order JSON.stringify keeps.
  const wire = { id: message.id } as WireMessage;
  if (message.sequenceId !== undefined && message.sequenceId !== message.id) wire.sequence_id = message.sequenceId;
  wire.time = Math.floor(message.timeMs / 1000);
  if (message.expiresMs > 0) wire.expires = Math.floor(message.expiresMs / 1000);
  wire.event = message.pollId !== undefined ? 'poll_request' : 'message';
  wire.topic = message.topic;
  if (message.title !== undefined) wire.title = message.title;
  wire.message = message.message;
  if (message.priority !== undefined) wire.priority = message.priority;
  if (message.tags !== undefined && message.tags.length > 0) wire.tags = message.tags;
  if (message.click !== undefined) wire.click = message.click;
  if (message.icon !== undefined) wire.icon = message.icon;
  if (message.actions !== undefined && message.actions.length > 0) wire.actions = message.actions;
  if (message.attachment !== undefined) wire.attachment = message.attachment;
  if (message.pollId !== undefined) wire.poll_id = message.pollId;
  if (message.contentType !== undefined) wire.content_type = message.contentType;
  if (message.encoding !== undefined) wire.encoding = message.encoding;
  return wire;
}

/** A random 12-character id for `open`/`keepalive` events (they are never stored or resumed from). */
export function randomEventId(): string {
  let id = '';
  for (let i = 0; i < NTFY_ID_LENGTH; i++) id += NTFY_ID_ALPHABET.charAt(randomInt(NTFY_ID_ALPHABET.length));
  return id;
}

export function controlEventJson(event: ControlEvent, topicLabel: string, nowMs: number): string {
  const wire: WireMessage = { id: randomEventId(), time: Math.floor(nowMs / 1000), event, topic: topicLabel };
  return JSON.stringify(wire);
}

/** `{json}\n` of a message: the `json` and `ws` frame, and ntfy's publish answer. */
export function messageJsonLine(message: NtfyMessage): string {
  return `${JSON.stringify(toWireMessage(message))}\n`;
}

/** An SSE frame: `message` events as bare data, others (`poll_request`) named, as ntfy frames them. */
function sseFrame(message: NtfyMessage, line: string): string {
  const data = `data: ${line.slice(0, -1)}\n\n`;
  return message.pollId === undefined ? data : `event: poll_request\n${data}`;
}

/** One message as a frame of `transport`; `raw` gives only `message` events their text. */
export function messageFrame(transport: Transport, message: NtfyMessage): string {
  if (transport === 'raw') return message.pollId === undefined ? `${message.message.replace(/\n/g, ' ')}\n` : '\n';
  const line = messageJsonLine(message);
  return transport === 'sse' ? sseFrame(message, line) : line;
}

/**
 * The frames of one message for all the subscribers it is offered to, each format built on first
 * use: a message reaching many subscribers of its topic is serialised once per format, not once
 * per subscriber.
 */
export class MessageFrames {
  private json: string | null = null;
  private sse: string | null = null;
  private raw: string | null = null;

  constructor(readonly message: NtfyMessage) {}

  frame(transport: Transport): string {
    if (transport === 'json' || transport === 'ws') return (this.json ??= messageJsonLine(this.message));
    if (transport === 'raw') return (this.raw ??= messageFrame('raw', this.message));
    return (this.sse ??= sseFrame(this.message, this.frame('json')));
  }
}

/** An `open` or `keepalive` event as a frame of `transport`. */
export function controlFrame(transport: Transport, event: ControlEvent, topicLabel: string, nowMs: number): string {
  if (transport === 'raw') return '\n';
  const json = controlEventJson(event, topicLabel, nowMs);
  return transport === 'sse' ? `event: ${event}\ndata: ${json}\n\n` : `${json}\n`;
}
