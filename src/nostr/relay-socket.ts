/**
 * The WebSocket a relay connection runs on, as much of `ws`'s client as the relay code uses:
 * injected, so tests pass their own and every module that speaks to relays shares one shape.
 */

/** Bytes of a frame as `ws` delivers them. */
export type SocketData = Buffer | ArrayBuffer | Buffer[];

/**
 * The subset of the `ws` client the listener uses. `ws`'s own class satisfies it; tests may pass
 * a subclass. `pause()`/`resume()` stop and restart reading from the TCP socket (backpressure).
 */
export interface RelaySocket {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  pause(): void;
  resume(): void;
  on(event: 'open', listener: () => void): this;
  on(event: 'message', listener: (data: SocketData, isBinary: boolean) => void): this;
  on(event: 'close', listener: (code: number, reason: Buffer) => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
}

/** Options the listener passes when it opens a socket (the `ws` ClientOptions it relies on). */
export interface RelaySocketOptions {
  /** Largest frame accepted; `ws` closes the connection (code 1009) on a bigger one. */
  maxPayload: number;
  /** Milliseconds the opening handshake may take. */
  handshakeTimeout: number;
}

export type RelaySocketConstructor = new (url: string, options: RelaySocketOptions) => RelaySocket;

/** WebSocket readyState OPEN. */
export const SOCKET_OPEN = 1;

/** WebSocket readyState CLOSED. */
export const SOCKET_CLOSED = 3;
