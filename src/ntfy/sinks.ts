/**
 * The byte-stream kinds of {@link FrameSink} (`/json`, `/sse`, `/raw`): written straight to
 * Node's response or (`raw-streams.ts`) to the bare socket. (WebSockets: `ws-sink.ts`.) Each
 * sends a `keepalive` event every `keepalive_interval_secs` (45 s; the Android app's read
 * timeout is 77 s).
 *
 * Both are classes with their state in fields rather than closures, and their event listeners
 * are shared functions (`sink-base.ts`): an idle subscription is mostly this object, and tens of
 * thousands of them are held at once.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import type { Clock } from '../store/port.ts';
import type { NtfyMessage } from '../store/port-ntfy.ts';
import type { FrameSink } from './subscriber.ts';
import { destroySocket, onEmitterDrain, onEmitterEnd, SinkBase, tagEmitter } from './sink-base.ts';
import type { TimerHandle } from './scheduler.ts';
import type { TimerList } from './timer-list.ts';
import { CONTENT_TYPES, controlFrame, messageFrame } from './wire.ts';

/**
 * Node builds a response's header block by concatenation and keeps it (`_header`) for as long as
 * the response lives: a rope of some 25 string pieces, about 800 bytes per open stream. Reading
 * a character makes V8 flatten it into one string.
 */
function flattenHeaderText(outgoing: ServerResponse): void {
  const header = (outgoing as unknown as { _header?: unknown })._header;
  if (typeof header === 'string') header.charCodeAt(0);
}

/** Response headers of every subscribe stream. */
export function streamHeaders(transport: 'json' | 'sse' | 'raw'): Record<string, string> {
  return {
    'Content-Type': CONTENT_TYPES[transport],
    'Access-Control-Allow-Origin': '*',
    'Cache-Control': 'no-cache',
    // Reverse proxies (nginx) must not buffer a stream.
    'X-Accel-Buffering': 'no',
  };
}

export interface HttpStreamOptions {
  transport: 'json' | 'sse' | 'raw';
  topicLabel: string;
  keepalives: TimerList<ByteStreamSink>;
  clock: Clock;
}

/**
 * What the two byte-stream sinks share: a writable under the frames, a keepalive frame on a
 * timer, back-pressure read off the writable, and a close that cuts off a peer not reading.
 */
export abstract class ByteStreamSink extends SinkBase {
  private keepaliveTimer: TimerHandle | null = null;

  constructor(
    output: Writable,
    protected readonly transport: 'json' | 'sse' | 'raw',
    private readonly topicLabel: string,
    private readonly clock: Clock,
  ) {
    super(output);
  }

  /** Start the keepalive frames (once the stream's head is written). */
  protected startKeepalive(keepalives: TimerList<ByteStreamSink>): void {
    this.keepaliveTimer = keepalives.start(this);
  }

  protected stopTimers(): void {
    this.keepaliveTimer?.cancel();
  }

  /** @internal The keepalive timer fired. */
  sendKeepalive(): void {
    this.write(controlFrame(this.transport, 'keepalive', this.topicLabel, this.clock.nowMs()));
  }
}

/** A stream on Node's response, with its keepalive timer. Status and headers are written at once. */
export class HttpStreamSink extends ByteStreamSink {
  constructor(
    private readonly outgoing: ServerResponse,
    transport: 'json' | 'sse' | 'raw',
    topicLabel: string,
    clock: Clock,
    keepalives: TimerList<ByteStreamSink>,
  ) {
    super(outgoing, transport, topicLabel, clock);
    outgoing.writeHead(200, streamHeaders(transport));
    flattenHeaderText(outgoing);
    outgoing.socket?.setNoDelay(true);
    tagEmitter(outgoing, this);
    outgoing.on('drain', onEmitterDrain);
    outgoing.once('close', onEmitterEnd);
    outgoing.once('error', onEmitterEnd);
    this.startKeepalive(keepalives);
  }

  write(frame: string): void {
    if (!this.ended) this.outgoing.write(frame);
  }

  protected endOutput(): void {
    this.outgoing.end();
  }
}

/** Start a stream on `outgoing` with its keepalive timer. */
export function openHttpStream(outgoing: ServerResponse, options: HttpStreamOptions): FrameSink {
  return new HttpStreamSink(outgoing, options.transport, options.topicLabel, options.clock, options.keepalives);
}

/** Shared listeners of a raw stream's socket (no closure per connection). */
function ignoreData(): void {}

/**
 * A stream written on the bare socket (`raw-streams.ts`): the status line and headers, then each
 * frame as one HTTP/1.1 chunk in one socket write, and the last chunk on close. The connection
 * serves nothing else, so it says `Connection: close`.
 */
export class RawStreamSink extends ByteStreamSink {
  constructor(
    private readonly socket: Socket,
    transport: 'json' | 'sse' | 'raw',
    topicLabel: string,
    clock: Clock,
    keepalives: TimerList<ByteStreamSink>,
  ) {
    super(socket, transport, topicLabel, clock);
    socket.setNoDelay(true);
    tagEmitter(socket, this);
    // `on`, not `once`: these fire once anyway, and `once` wraps each in a state object and a bound function.
    socket.on('drain', onEmitterDrain);
    socket.on('close', onEmitterEnd);
    // The client has nothing more to say; reading on is how its disconnect (end) is noticed.
    socket.on('data', ignoreData);
    socket.on('end', destroySocket);
    socket.resume();
    const head = [`HTTP/1.1 200 OK`, `Date: ${new Date(clock.nowMs()).toUTCString()}`];
    for (const [name, value] of Object.entries(streamHeaders(transport))) head.push(`${name}: ${value}`);
    head.push('Connection: close', 'Transfer-Encoding: chunked', '', '');
    socket.write(head.join('\r\n'));
    this.startKeepalive(keepalives);
  }

  /** A message as a frame of this stream. */
  frameOf(message: NtfyMessage): string {
    return messageFrame(this.transport, message);
  }

  write(frame: string): void {
    if (!this.ended) this.socket.write(`${Buffer.byteLength(frame).toString(16)}\r\n${frame}\r\n`);
  }

  protected endOutput(): void {
    this.socket.end('0\r\n\r\n');
  }
}
