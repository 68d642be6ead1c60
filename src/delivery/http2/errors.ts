/** Why an HTTP/2 request produced no response; shared by the connection and the pool. */
export type Http2FailureReason =
  'connect_failed' | 'connect_timeout' | 'request_timeout' | 'deadline' | 'aborted' | 'stream_error' | 'refused' | 'pool_closed';

/**
 * The one error an HTTP/2 request fails with. `refused` means the server never processed the
 * request (REFUSED_STREAM, a stream above a GOAWAY's last stream id, or frames that never left
 * this process), so it is safe to send again; every other reason may hide a processed request.
 */
export class Http2RequestError extends Error {
  override readonly name = 'Http2RequestError';
  constructor(
    readonly reason: Http2FailureReason,
    message: string,
  ) {
    super(message);
  }
}
