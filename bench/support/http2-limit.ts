/**
 * The HTTP/2 limit of this machine, measured beside a benchmark in the same run: how many
 * requests a second one `node:http2` client session pushes through to a `node:http2` server in
 * another process, with 100 streams in flight, each a 203-byte JSON POST (an FCM message's size).
 * It is the ceiling a push service's sends meet on the machine at that moment, so a fan-out's
 * pushes per second divided by it says how much of the machine's HTTP/2 capacity reaches the
 * providers, independently of how fast the machine was that minute (issue 39's target: 0.6).
 */
import { fork } from 'node:child_process';
import { connect } from 'node:http2';

const STREAMS_IN_FLIGHT = 100;
/** 203 bytes: the size of an FCM v1 message of the fan-out benchmark. */
const BODY = JSON.stringify({ message: { token: 'probe-token-0000000000', data: { type: 'newPost', eventId: 'e'.repeat(64) } } }).padEnd(
  203,
  ' ',
);

/** Requests per second through one session over `durationMs` (after a short warm-up). */
export async function http2LimitPerSec(durationMs = 3000): Promise<number> {
  const server = fork(new URL('./http2-limit-server.mjs', import.meta.url), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve) => server.once('message', (m: { port: number }) => resolve(m.port)));
  const session = connect(`http://127.0.0.1:${port}`);
  try {
    const post = (): Promise<void> =>
      new Promise((resolve, reject) => {
        const stream = session.request({
          ':method': 'POST',
          ':path': '/v1/projects/probe/messages:send',
          'content-type': 'application/json',
        });
        stream.on('error', reject);
        stream.resume();
        stream.on('end', () => resolve());
        stream.end(BODY);
      });
    const run = async (ms: number): Promise<number> => {
      let done = 0;
      const until = performance.now() + ms;
      const lane = async (): Promise<void> => {
        while (performance.now() < until) {
          await post();
          done++;
        }
      };
      const started = performance.now();
      await Promise.all(Array.from({ length: STREAMS_IN_FLIGHT }, lane));
      return done / ((performance.now() - started) / 1000);
    };
    await run(500);
    return await run(durationMs);
  } finally {
    session.close();
    await new Promise<void>((resolve) => {
      server.once('exit', () => resolve());
      server.send('stop');
    });
  }
}
