/**
 * What both ends of an HTTP/2 connection (RFC 9113) do alike, over one socket: the frames in and
 * out, HPACK in both directions, SETTINGS and their acknowledgement, PING, flow control
 * (receive windows topped up as data is consumed, sends held back until the peer's windows allow
 * them), header blocks across CONTINUATION frames, and every frame queued in one event-loop turn
 * leaving in one socket write.
 *
 * The client (`connection.ts`) and the loopback FCM fake's server (`test/support/h2-server.ts`)
 * extend it with what differs: who opens streams, what a header block on a stream means, GOAWAY.
 * A protocol violation by the peer throws {@link Http2ConnectionError} out of a handler; the
 * endpoint answers GOAWAY with its code and hands the failure to {@link onConnectionError}.
 */
import type { Socket } from 'node:net';
import {
  DEFAULT_INITIAL_WINDOW_SIZE,
  DEFAULT_MAX_FRAME_SIZE,
  ErrorCode,
  Flag,
  FRAME_HEADER_OCTETS,
  FrameReader,
  FrameType,
  Http2ConnectionError,
  MAX_WINDOW_SIZE,
  SETTINGS_ACK,
  Setting,
  decodeSettings,
  encodeFrame,
  encodeGoaway,
  encodeRstStream,
  encodeSettings,
  encodeWindowUpdate,
  unpaddedPayload,
  writeFrameHeader,
  type Frame,
} from './frames.ts';
import { HpackDecoder, HpackEncoder, HpackError, type FieldIndexing } from './hpack.ts';

/** Bound on one header block across CONTINUATION frames. */
export const MAX_HEADER_BLOCK_OCTETS = 256 * 1024;

export type HeaderField = readonly [name: string, value: string, indexing?: FieldIndexing];
/** Decoded header fields: lowercase names, pseudo-headers included; a repeated field is an array. */
export type HeaderMap = Record<string, string | string[]>;

/** The flow-control state every stream has, whichever end opened it. */
export interface EndpointStream {
  id: number;
  /** What the peer still lets us send on this stream. */
  sendWindow: number;
  /** Octets received since we last topped the peer's window for this stream up. */
  receiveConsumed: number;
  /** Body not yet sent for want of window. */
  unsent: Buffer | null;
}

export interface EndpointSettings {
  /** Our SETTINGS_INITIAL_WINDOW_SIZE: what the peer may send on a stream before we top it up. */
  streamReceiveWindow: number;
  /** The connection window we open at the start and keep topped up. */
  connectionReceiveWindow: number;
  /** Our SETTINGS_MAX_HEADER_LIST_SIZE, enforced on every decoded block. */
  maxHeaderListOctets: number;
  /** Further SETTINGS of ours (a server's MAX_CONCURRENT_STREAMS, a client's ENABLE_PUSH 0). */
  extraSettings: ReadonlyArray<readonly [number, number]>;
}

export abstract class Http2Endpoint<S extends EndpointStream> {
  protected readonly streams = new Map<number, S>();
  protected peerMaxStreams = Number.POSITIVE_INFINITY;
  protected peerInitialWindow = DEFAULT_INITIAL_WINDOW_SIZE;
  protected peerMaxFrameSize = DEFAULT_MAX_FRAME_SIZE;
  /** True once the peer's first SETTINGS arrived. */
  protected peerSettingsReceived = false;
  /** Set once the connection is finished; nothing more is sent or handled. */
  protected destroyed = false;
  /** Bumped by every socket write: a frame queued in generation g has left once generation > g. */
  protected generation = 0;
  protected flushScheduled = false;
  private readonly reader = new FrameReader(DEFAULT_MAX_FRAME_SIZE);
  private readonly encoder = new HpackEncoder();
  private readonly decoder: HpackDecoder;
  /** Streams waiting for send window, oldest first. */
  private blocked: S[] = [];
  private connectionSendWindow = DEFAULT_INITIAL_WINDOW_SIZE;
  private connectionReceiveConsumed = 0;
  /** A header block arriving in CONTINUATION frames: its stream, END_STREAM flag and parts. */
  private continuation: { streamId: number; endStream: boolean; parts: Buffer[]; octets: number } | null = null;
  private outbox: Buffer[] = [];

  protected constructor(
    protected readonly socket: Socket,
    private readonly settings: EndpointSettings,
  ) {
    this.decoder = new HpackDecoder(undefined, settings.maxHeaderListOctets);
  }

  /** Queue our SETTINGS and open the connection window (after a client's preface, if any). */
  protected queueOpening(): void {
    const { streamReceiveWindow, connectionReceiveWindow, maxHeaderListOctets, extraSettings } = this.settings;
    this.queue(
      encodeSettings([
        [Setting.INITIAL_WINDOW_SIZE, streamReceiveWindow],
        [Setting.MAX_HEADER_LIST_SIZE, maxHeaderListOctets],
        ...extraSettings,
      ]),
    );
    if (connectionReceiveWindow > DEFAULT_INITIAL_WINDOW_SIZE)
      this.queue(encodeWindowUpdate(0, connectionReceiveWindow - DEFAULT_INITIAL_WINDOW_SIZE));
  }

  // --- what the two ends do differently ---

  /** A complete header block for `streamId` (decoded; the decoder stays in step either way). */
  protected abstract onHeaderBlock(streamId: number, fields: HeaderMap, endStream: boolean): void;
  /** DATA on an open stream (padding removed). */
  protected abstract onStreamData(stream: S, data: Buffer, endStream: boolean): void;
  protected abstract onStreamReset(stream: S, code: number): void;
  protected abstract onGoaway(lastStreamId: number, code: number): void;
  /** The peer's SETTINGS were applied (and acknowledged); `first` for its first ones. */
  protected abstract onPeerSettings(first: boolean): void;
  /** Whether `streamId` names a stream that was never opened (a frame on it is a connection error). */
  protected abstract isIdleStream(streamId: number): boolean;
  /** The connection failed (peer violation, socket error or close); the endpoint is already destroyed. */
  protected abstract onConnectionError(message: string): void;
  /** The last octet of a body given to {@link queueBody} was queued (a server ends its stream here). */
  protected onBodyQueued(_stream: S): void {}

  // --- sending ---

  protected queue(frame: Buffer): void {
    if (this.destroyed) return;
    this.outbox.push(frame);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** One write for everything queued this turn. */
  protected flush(): void {
    this.flushScheduled = false;
    if (this.destroyed || this.outbox.length === 0) return;
    const frames = this.outbox;
    this.outbox = [];
    this.generation++;
    this.socket.write(frames.length === 1 ? (frames[0] as Buffer) : Buffer.concat(frames));
  }

  /** HEADERS (and CONTINUATION when the block exceeds the peer's frame size) for `fields`. */
  protected queueHeaders(id: number, fields: readonly HeaderField[], endStream: boolean): void {
    const block = this.encoder.encode(fields);
    const endFlag = endStream ? Flag.END_STREAM : 0;
    if (block.length <= this.peerMaxFrameSize) {
      const frame = Buffer.allocUnsafe(FRAME_HEADER_OCTETS + block.length);
      writeFrameHeader(frame, 0, block.length, FrameType.HEADERS, Flag.END_HEADERS | endFlag, id);
      block.copy(frame, FRAME_HEADER_OCTETS);
      this.queue(frame);
      return;
    }
    for (let at = 0; at < block.length; at += this.peerMaxFrameSize) {
      const part = block.subarray(at, at + this.peerMaxFrameSize);
      const last = at + this.peerMaxFrameSize >= block.length;
      const type = at === 0 ? FrameType.HEADERS : FrameType.CONTINUATION;
      this.queue(encodeFrame(type, (at === 0 ? endFlag : 0) | (last ? Flag.END_HEADERS : 0), id, part));
    }
  }

  /** Sends `body` on `stream` with END_STREAM, as fast as the windows allow. */
  protected queueBody(stream: S, body: Buffer): void {
    stream.unsent = body;
    this.sendData(stream);
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- sendData() clears unsent when the windows let the whole body out; tsc keeps the assignment above.
    if (stream.unsent) this.blocked.push(stream);
    else this.onBodyQueued(stream);
  }

  protected queueReset(id: number, code: number): void {
    this.queue(encodeRstStream(id, code));
  }

  protected queueGoaway(lastStreamId: number, code: number, debug = ''): void {
    this.queue(encodeGoaway(lastStreamId, code, debug));
  }

  /** A new stream's flow-control state, at the peer's current initial window. */
  protected streamState(id: number): EndpointStream {
    return { id, sendWindow: this.peerInitialWindow, receiveConsumed: 0, unsent: null };
  }

  private sendData(stream: S): void {
    let unsent = stream.unsent;
    while (unsent !== null) {
      const room = Math.min(this.connectionSendWindow, stream.sendWindow, this.peerMaxFrameSize);
      if (room <= 0) break;
      const size = Math.min(room, unsent.length);
      const last = size === unsent.length;
      const frame = Buffer.allocUnsafe(FRAME_HEADER_OCTETS + size);
      writeFrameHeader(frame, 0, size, FrameType.DATA, last ? Flag.END_STREAM : 0, stream.id);
      unsent.copy(frame, FRAME_HEADER_OCTETS, 0, size);
      this.queue(frame);
      this.connectionSendWindow -= size;
      stream.sendWindow -= size;
      unsent = last ? null : unsent.subarray(size);
    }
    stream.unsent = unsent;
  }

  private resumeBlocked(): void {
    if (this.blocked.length === 0) return;
    const still: S[] = [];
    for (const stream of this.blocked) {
      if (!this.streams.has(stream.id)) continue;
      this.sendData(stream);
      if (stream.unsent) still.push(stream);
      else this.onBodyQueued(stream);
    }
    this.blocked = still;
  }

  // --- receiving ---

  protected receive(chunk: Buffer): void {
    try {
      this.reader.push(chunk, (frame) => this.handleFrame(frame));
    } catch (err) {
      if (err instanceof Http2ConnectionError) this.protocolFailure(err);
      else if (err instanceof HpackError) this.protocolFailure(new Http2ConnectionError(ErrorCode.COMPRESSION_ERROR, err.message));
      else throw err;
    }
  }

  /** Says GOAWAY with the violation's code, then fails the connection. */
  protected protocolFailure(error: Http2ConnectionError): void {
    this.queueGoaway(0, error.code, error.message);
    this.flush();
    this.destroyed = true;
    this.onConnectionError(`HTTP/2 protocol error from the peer: ${error.message}`);
  }

  private handleFrame(frame: Frame): void {
    if (this.destroyed) return;
    if (this.continuation && (frame.type !== FrameType.CONTINUATION || frame.streamId !== this.continuation.streamId)) {
      throw new Http2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'expected CONTINUATION of a header block');
    }
    switch (frame.type) {
      case FrameType.DATA:
        return this.onData(frame);
      case FrameType.HEADERS:
        return this.onHeaders(frame);
      case FrameType.CONTINUATION:
        return this.onContinuation(frame);
      case FrameType.RST_STREAM:
        return this.onRstStream(frame);
      case FrameType.SETTINGS:
        return this.onSettings(frame);
      case FrameType.PING:
        return this.onPing(frame);
      case FrameType.GOAWAY:
        return this.onGoawayFrame(frame);
      case FrameType.WINDOW_UPDATE:
        return this.onWindowUpdate(frame);
      case FrameType.PUSH_PROMISE:
        // Clients never push, and this endpoint never lets a server (SETTINGS_ENABLE_PUSH 0).
        throw new Http2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'PUSH_PROMISE although push is disabled');
      case FrameType.PRIORITY:
        if (frame.payload.length !== 5) throw new Http2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'PRIORITY of the wrong length');
        return;
      default:
        return; // Unknown frame types are ignored (§4.1, §5.5).
    }
  }

  /** The open stream a frame is for; undefined for one already finished. */
  protected streamFor(frame: Frame): S | undefined {
    if (frame.streamId === 0) throw new Http2ConnectionError(ErrorCode.PROTOCOL_ERROR, `frame type ${frame.type} on stream 0`);
    if (this.isIdleStream(frame.streamId))
      throw new Http2ConnectionError(ErrorCode.PROTOCOL_ERROR, `frame type ${frame.type} on idle stream ${frame.streamId}`);
    return this.streams.get(frame.streamId);
  }

  private onData(frame: Frame): void {
    const stream = this.streamFor(frame);
    // Flow control counts the whole payload, padding included, whatever became of the stream.
    this.connectionReceiveConsumed += frame.payload.length;
    if (this.connectionReceiveConsumed >= this.settings.connectionReceiveWindow / 2) {
      this.queue(encodeWindowUpdate(0, this.connectionReceiveConsumed));
      this.connectionReceiveConsumed = 0;
    }
    if (!stream) return;
    const endStream = (frame.flags & Flag.END_STREAM) !== 0;
    if (!endStream) {
      stream.receiveConsumed += frame.payload.length;
      if (stream.receiveConsumed >= this.settings.streamReceiveWindow / 2) {
        this.queue(encodeWindowUpdate(stream.id, stream.receiveConsumed));
        stream.receiveConsumed = 0;
      }
    }
    this.onStreamData(stream, unpaddedPayload(frame), endStream);
  }

  private onHeaders(frame: Frame): void {
    if (frame.streamId === 0) throw new Http2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'HEADERS on stream 0');
    const fragment = unpaddedPayload(frame);
    const endStream = (frame.flags & Flag.END_STREAM) !== 0;
    if (frame.flags & Flag.END_HEADERS) return this.headerBlock(frame.streamId, fragment, endStream);
    this.continuation = { streamId: frame.streamId, endStream, parts: [fragment], octets: fragment.length };
  }

  private onContinuation(frame: Frame): void {
    const pending = this.continuation;
    if (!pending) throw new Http2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'CONTINUATION without a header block');
    pending.parts.push(frame.payload);
    pending.octets += frame.payload.length;
    if (pending.octets > MAX_HEADER_BLOCK_OCTETS)
      throw new Http2ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, `header block over ${MAX_HEADER_BLOCK_OCTETS} octets`);
    if ((frame.flags & Flag.END_HEADERS) === 0) return;
    this.continuation = null;
    this.headerBlock(pending.streamId, Buffer.concat(pending.parts), pending.endStream);
  }

  private headerBlock(streamId: number, block: Buffer, endStream: boolean): void {
    // Decoded even for a finished stream: the decoder's table must stay in step with the peer's.
    const fields: HeaderMap = {};
    this.decoder.decode(block, (name, value) => {
      const previous = fields[name];
      if (previous === undefined) fields[name] = value;
      else if (Array.isArray(previous)) previous.push(value);
      else fields[name] = [previous, value];
    });
    this.onHeaderBlock(streamId, fields, endStream);
  }

  private onRstStream(frame: Frame): void {
    if (frame.payload.length !== 4) throw new Http2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'RST_STREAM of the wrong length');
    const stream = this.streamFor(frame);
    if (stream) this.onStreamReset(stream, frame.payload.readUInt32BE(0));
  }

  private onSettings(frame: Frame): void {
    const entries = decodeSettings(frame);
    if (frame.flags & Flag.ACK) return;
    for (const [id, value] of entries) {
      if (id === Setting.HEADER_TABLE_SIZE) this.encoder.setPeerMaxTableSize(value);
      else if (id === Setting.MAX_CONCURRENT_STREAMS) this.peerMaxStreams = value;
      else if (id === Setting.MAX_FRAME_SIZE) this.peerMaxFrameSize = value;
      else if (id === Setting.INITIAL_WINDOW_SIZE) {
        const delta = value - this.peerInitialWindow;
        this.peerInitialWindow = value;
        for (const stream of this.streams.values()) {
          stream.sendWindow += delta;
          if (stream.sendWindow > MAX_WINDOW_SIZE)
            throw new Http2ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'a stream window grew past 2^31-1');
        }
      }
    }
    this.queue(SETTINGS_ACK);
    const first = !this.peerSettingsReceived;
    this.peerSettingsReceived = true;
    this.resumeBlocked();
    this.onPeerSettings(first);
  }

  private onPing(frame: Frame): void {
    if (frame.streamId !== 0) throw new Http2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'PING on a stream');
    if (frame.payload.length !== 8) throw new Http2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'PING of the wrong length');
    if ((frame.flags & Flag.ACK) === 0) this.queue(encodeFrame(FrameType.PING, Flag.ACK, 0, frame.payload));
  }

  private onGoawayFrame(frame: Frame): void {
    if (frame.streamId !== 0) throw new Http2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'GOAWAY on a stream');
    if (frame.payload.length < 8) throw new Http2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'GOAWAY too short');
    this.onGoaway(frame.payload.readUInt32BE(0) & MAX_WINDOW_SIZE, frame.payload.readUInt32BE(4));
  }

  private onWindowUpdate(frame: Frame): void {
    if (frame.payload.length !== 4) throw new Http2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'WINDOW_UPDATE of the wrong length');
    const increment = frame.payload.readUInt32BE(0) & MAX_WINDOW_SIZE;
    if (frame.streamId === 0) {
      if (increment === 0) throw new Http2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'WINDOW_UPDATE of 0 for the connection');
      this.connectionSendWindow += increment;
      if (this.connectionSendWindow > MAX_WINDOW_SIZE)
        throw new Http2ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'connection window past 2^31-1');
    } else {
      const stream = this.streamFor(frame);
      if (!stream) return;
      if (increment === 0 || stream.sendWindow + increment > MAX_WINDOW_SIZE) {
        this.queueReset(stream.id, increment === 0 ? ErrorCode.PROTOCOL_ERROR : ErrorCode.FLOW_CONTROL_ERROR);
        this.onStreamReset(stream, increment === 0 ? ErrorCode.PROTOCOL_ERROR : ErrorCode.FLOW_CONTROL_ERROR);
        return;
      }
      stream.sendWindow += increment;
    }
    this.resumeBlocked();
  }
}
