/**
 * Interop of the HTTP/2 pool over TLS with ALPN `h2`, on both clients (`delivery.http2_client`),
 * beyond our own fakes:
 * - against `node:http2`'s server announcing large SETTINGS (a 2^31-1 stream window, 16 MiB
 *   frames, a 0-octet HPACK table our encoder must shrink to), then changing them mid-session;
 * - against a raw TLS server writing its frames itself, for what `node:http2` will not do: 1-byte
 *   WINDOW_UPDATEs (a stream window of 1), response headers split over CONTINUATION frames, and
 *   dynamic table size updates (to 0 and back, then a shrink that evicts) the client must follow.
 * The certificate is made at test time with the `openssl` command.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http2, { type ServerHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls, { type TLSSocket } from 'node:tls';
import {
  CLIENT_PREFACE,
  encodeFrame,
  encodeSettings,
  encodeWindowUpdate,
  Flag,
  FrameReader,
  FrameType,
  SETTINGS_ACK,
  Setting,
} from './frames.ts';
import { HpackDecoder, HpackEncoder } from './hpack.ts';
import { HTTP2_CLIENT_KINDS, Http2Pool } from './pool.ts';

/** A self-signed P-256 certificate for 127.0.0.1 and localhost. */
function selfSignedCertificate(dir: string): { key: Buffer; cert: Buffer } {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
}

const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

let dir: string;
let certificate: { key: Buffer; cert: Buffer };
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'np-h2-interop-'));
  certificate = selfSignedCertificate(dir);
});
after(() => rmSync(dir, { recursive: true, force: true }));

for (const client of HTTP2_CLIENT_KINDS) {
  describe(`HTTP/2 pool against node:http2 over TLS with ALPN (client: ${client})`, () => {
    let server: http2.Http2SecureServer;
    let baseUrl: string;
    const sessions = new Set<ServerHttp2Session>();

    before(async () => {
      server = http2.createSecureServer({
        ...certificate,
        settings: {
          headerTableSize: 0,
          initialWindowSize: 2 ** 31 - 1,
          maxFrameSize: 2 ** 24 - 1,
          maxConcurrentStreams: 2 ** 31 - 1,
          maxHeaderListSize: 2 ** 20,
        },
      });
      server.on('session', (session) => {
        sessions.add(session);
        session.on('close', () => sessions.delete(session));
      });
      server.on('stream', (stream, headers) => {
        const parts: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => parts.push(chunk));
        stream.on('end', () => {
          stream.respond({
            ':status': 200,
            'x-body-sha256': sha256(Buffer.concat(parts)),
            'x-big-sha256': sha256(String(headers['x-big'])),
          });
          stream.end(String(headers[':path']));
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      baseUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(async () => {
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    test('large SETTINGS, then SETTINGS changed mid-session: large bodies and headers arrive intact', async () => {
      const pool = new Http2Pool({ baseUrl, client, tls: { ca: certificate.cert }, maxSessions: 1 });
      try {
        const send = async (i: number) => {
          const body = Buffer.alloc(96 * 1024 + i, i % 251);
          const big = `v${i}-`.repeat(2000);
          const response = await pool.request({ method: 'POST', path: `/big/${i}`, body, headers: [['x-big', big, 'without']] });
          assert.equal(response.status, 200);
          assert.equal(response.bodyText, `/big/${i}`);
          assert.equal(response.headers['x-body-sha256'], sha256(body));
          assert.equal(response.headers['x-big-sha256'], sha256(big));
        };
        await Promise.all([0, 1, 2, 3].map(send));
        // Now a tiny stream window, the default frame size and an HPACK table again, on the live session.
        assert.equal(sessions.size, 1);
        await Promise.all(
          [...sessions].map(
            (session) =>
              new Promise<void>((resolve, reject) =>
                session.settings({ initialWindowSize: 100, maxFrameSize: 16_384, headerTableSize: 4096 }, (err) =>
                  err ? reject(err) : resolve(),
                ),
              ),
          ),
        );
        await Promise.all([4, 5, 6, 7].map(send));
        assert.equal(pool.sessionsOpened, 1, 'one session throughout');
      } finally {
        await pool.close();
      }
    });
  });

  describe(`HTTP/2 pool against a raw TLS server: 1-byte WINDOW_UPDATEs, CONTINUATION, table size updates (client: ${client})`, () => {
    let server: tls.Server;
    let baseUrl: string;
    const sockets = new Set<TLSSocket>();
    const received: Array<{ path: string; body: Buffer }> = [];

    /** The response header blocks, in order on one connection: table emptied and restored, then shrunk. */
    function responseBlock(encoder: HpackEncoder, index: number): Buffer {
      const fields: Array<[string, string]> = [
        [':status', '200'],
        ['content-type', 'application/json'],
        ['x-interop', 'a value long enough to be worth indexing'],
        ['x-response', String(index)],
      ];
      if (index === 0) {
        // Two size updates before the first field (RFC 7541 §4.2): to 0, evicting everything, then back to 4096.
        return Buffer.concat([Buffer.from([0x20, 0x3f, 0xe1, 0x1f]), encoder.encode(fields)]);
      }
      // A shrink that evicts the older entries; the encoder says so at the start of the block.
      if (index === 2) encoder.setPeerMaxTableSize(128);
      return encoder.encode(fields);
    }

    /**
     * `block` as a HEADERS frame and five CONTINUATION frames. Not more: nghttp2 (under
     * `node:http2`) refuses a header block in more than 8 CONTINUATION frames since its
     * CONTINUATION-flood fix (1.61), and this server speaks to both clients.
     */
    function splitHeaders(streamId: number, block: Buffer): Buffer {
      const frames: Buffer[] = [];
      const size = Math.ceil(block.length / 6);
      for (let at = 0, n = 0; at < block.length; n++, at += size) {
        const last = at + size >= block.length;
        frames.push(
          encodeFrame(
            n === 0 ? FrameType.HEADERS : FrameType.CONTINUATION,
            last ? Flag.END_HEADERS : 0,
            streamId,
            block.subarray(at, at + size),
          ),
        );
      }
      return Buffer.concat(frames);
    }

    before(async () => {
      server = tls.createServer({ ...certificate, ALPNProtocols: ['h2'] }, (socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => undefined);
        const reader = new FrameReader();
        const decoder = new HpackDecoder();
        const encoder = new HpackEncoder();
        const streams = new Map<number, { path: string; body: Buffer[] }>();
        let prefaceLeft = CLIENT_PREFACE.length;
        let responses = 0;
        // A stream window of 1: every DATA octet waits for a 1-octet WINDOW_UPDATE.
        socket.write(encodeSettings([[Setting.INITIAL_WINDOW_SIZE, 1]]));
        socket.on('data', (chunk: Buffer) => {
          const skipped = Math.min(prefaceLeft, chunk.length);
          prefaceLeft -= skipped;
          reader.push(chunk.subarray(skipped), (frame) => {
            if (frame.type === FrameType.SETTINGS && (frame.flags & Flag.ACK) === 0) socket.write(SETTINGS_ACK);
            if (frame.type === FrameType.HEADERS) {
              let path = '';
              decoder.decode(frame.payload, (name, value) => {
                if (name === ':path') path = value;
              });
              streams.set(frame.streamId, { path, body: [] });
            }
            if (frame.type === FrameType.DATA) {
              const stream = streams.get(frame.streamId);
              stream?.body.push(Buffer.from(frame.payload));
              if (frame.payload.length > 0 && (frame.flags & Flag.END_STREAM) === 0) {
                // One octet at a time, on the stream and on the connection.
                for (let i = 0; i < frame.payload.length; i++) {
                  socket.write(encodeWindowUpdate(frame.streamId, 1));
                  socket.write(encodeWindowUpdate(0, 1));
                }
              }
            }
            if ((frame.type === FrameType.HEADERS || frame.type === FrameType.DATA) && frame.flags & Flag.END_STREAM) {
              const stream = streams.get(frame.streamId);
              if (!stream) return;
              const body = Buffer.concat(stream.body);
              received.push({ path: stream.path, body });
              socket.write(splitHeaders(frame.streamId, responseBlock(encoder, responses++)));
              socket.write(encodeFrame(FrameType.DATA, 0, frame.streamId, Buffer.from(`${stream.path} `)));
              socket.write(encodeFrame(FrameType.DATA, Flag.END_STREAM, frame.streamId, Buffer.from(sha256(body))));
            }
          });
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      baseUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    test('three requests in turn on one connection: bodies sent an octet at a time, every response read whole', async () => {
      received.length = 0;
      const pool = new Http2Pool({ baseUrl, client, tls: { ca: certificate.cert }, maxSessions: 1 });
      try {
        for (let i = 0; i < 3; i++) {
          const body = `{"request":${i},"padding":"${'p'.repeat(40)}"}`;
          const response = await pool.request({
            method: 'POST',
            path: `/one-octet/${i}`,
            body,
            headers: [['content-type', 'application/json']],
          });
          assert.equal(response.status, 200);
          assert.equal(response.headers['x-interop'], 'a value long enough to be worth indexing');
          assert.equal(response.headers['x-response'], String(i));
          assert.equal(response.bodyText, `/one-octet/${i} ${sha256(body)}`);
          assert.equal(received[i]?.body.toString(), body);
        }
        assert.equal(pool.sessionsOpened, 1);
      } finally {
        await pool.close();
      }
    });
  });
}
