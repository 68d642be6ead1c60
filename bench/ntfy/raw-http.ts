/**
 * A minimal HTTP/1.1 keep-alive client for the publishers: one request at a time per socket,
 * the request written as one string, the answer read by status line and Content-Length.
 *
 * Why not `http.request`: Node's client builds a ClientRequest, an IncomingMessage, header
 * objects and several events per request, which at thousands of publishes a second costs the
 * load generator about as much CPU as the server spends answering. Generator and server share
 * the benchmark machine's two cores, so that cost showed up as server latency. This client does
 * what the benchmark needs and no more: it still sends real HTTP over real sockets, and every
 * answer's status is checked.
 */
import { connect, type Socket } from 'node:net';

const HEADER_END = '\r\n\r\n';
const CONTENT_LENGTH = /\r\ncontent-length:\s*(\d+)/i;

/** Called with the HTTP status, or 0 when the request failed without an answer. */
type Done = (status: number) => void;

interface QueuedRequest {
  text: string;
  done: Done;
}

/** One keep-alive connection; `send` only while {@link busy} is false. */
class RawConnection {
  busy = false;
  private socket: Socket | null = null;
  private received = '';
  private done: Done | null = null;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly onIdle: (connection: RawConnection) => void,
  ) {}

  send(text: string, done: Done): void {
    this.busy = true;
    this.done = done;
    this.received = '';
    (this.socket ??= this.open()).write(text, 'latin1');
  }

  close(): void {
    this.socket?.destroy();
    this.socket = null;
  }

  private open(): Socket {
    const socket = connect({ host: this.host, port: this.port, noDelay: true });
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => this.onData(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (this.socket === socket) this.socket = null;
      this.finish(0);
    });
    return socket;
  }

  private onData(chunk: string): void {
    this.received += chunk;
    const headerEnd = this.received.indexOf(HEADER_END);
    if (headerEnd < 0) return;
    const length = CONTENT_LENGTH.exec(this.received.slice(0, headerEnd + 2));
    if (!length) {
      // Every answer of the server under test has a Content-Length; anything else is a failure.
      this.socket?.destroy();
      return;
    }
    if (this.received.length < headerEnd + HEADER_END.length + Number(length[1])) return;
    this.finish(Number(this.received.slice(9, 12)));
  }

  private finish(status: number): void {
    const done = this.done;
    if (!done) return;
    this.done = null;
    this.busy = false;
    this.received = '';
    done(status);
    this.onIdle(this);
  }
}

/** A fixed pool of keep-alive connections with a queue, like an `http.Agent` with `maxSockets`. */
export class RawHttpPool {
  private readonly idle: RawConnection[] = [];
  private readonly all: RawConnection[] = [];
  private readonly queue: QueuedRequest[] = [];
  private queueHead = 0;
  private readonly hostHeader: string;

  constructor(baseUrl: string, sockets: number) {
    const url = new URL(baseUrl);
    this.hostHeader = url.host;
    for (let i = 0; i < sockets; i++) {
      const connection = new RawConnection(url.hostname, Number(url.port || 80), (c) => this.next(c));
      this.all.push(connection);
      this.idle.push(connection);
    }
  }

  /** POST `body` (ASCII) to `path`. */
  post(path: string, body: string, done: Done): void {
    const text = `POST ${path} HTTP/1.1\r\nHost: ${this.hostHeader}\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const connection = this.idle.pop();
    if (connection) connection.send(text, done);
    else this.queue.push({ text, done });
  }

  close(): void {
    for (const connection of this.all) connection.close();
  }

  private next(connection: RawConnection): void {
    if (this.queueHead < this.queue.length) {
      const request = this.queue[this.queueHead] as QueuedRequest;
      this.queueHead += 1;
      if (this.queueHead === this.queue.length) {
        this.queue.length = 0;
        this.queueHead = 0;
      }
      connection.send(request.text, request.done);
      return;
    }
    this.idle.push(connection);
  }
}
