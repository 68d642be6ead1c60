/**
 * bench/fcm/node-http2-floor: the floor of a bare `node:http2` client against the FCM fake (its
 * own process, 20 ms answers): 30,000 sends, 300 in flight over 4 sessions, nothing but the
 * request, the body and the answer. What our own HTTP/2 client (bench/fcm/run.ts) is compared
 * with in docs/benchmarks.md.
 *
 *   node --import tsx bench/fcm/node-http2-floor.ts
 */
import http2 from 'node:http2';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AccessTokenSource, readServiceAccountFile } from '../../src/delivery/fcm/oauth.ts';
import { startFcmFakeProcess } from '../support/fcm-fake-client.ts';

const SENDS = 30_000;
const IN_FLIGHT = 300;
const SESSIONS = 4;

const dir = mkdtempSync(join(tmpdir(), 'np-http2-floor-'));
const fake = await startFcmFakeProcess(20, dir);
// A real access token from the fake's OAuth endpoint, as the transport would get one.
const tokens = new AccessTokenSource({
  account: readServiceAccountFile(fake.credentialsPath),
  clock: { nowMs: () => Date.now() },
  requestTimeoutMs: 5000,
});
const auth = await tokens.get();
if (!auth.ok) throw new Error('the fake gave no access token');

const sessions = Array.from({ length: SESSIONS }, () => http2.connect(fake.baseUrl));
const body = (i: number) =>
  JSON.stringify({
    message: { token: `t-${i}`, data: { type: 'like', eventId: `e${i}`, title: 'New like', body: 'alice liked your post' } },
  });
const headers = {
  ':method': 'POST',
  ':path': '/v1/projects/fake-project/messages:send',
  authorization: `Bearer ${auth.accessToken}`,
  'content-type': 'application/json',
};

function send(session: http2.ClientHttp2Session, i: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = session.request(headers);
    stream.on('data', () => {});
    stream.on('end', () => resolve());
    stream.on('error', reject);
    stream.end(body(i));
  });
}

let next = 0;
const startedMs = performance.now();
const cpuBefore = process.cpuUsage();
await Promise.all(
  Array.from({ length: IN_FLIGHT }, async (_, lane) => {
    const session = sessions[lane % SESSIONS] as http2.ClientHttp2Session;
    while (next < SENDS) await send(session, next++);
  }),
);
const elapsedMs = performance.now() - startedMs;
const cpu = process.cpuUsage(cpuBefore);
console.log(
  `node:http2 floor: ${SENDS} sends at ${IN_FLIGHT} in flight: ${(SENDS / (elapsedMs / 1000)).toFixed(0)} sends/s, ${((cpu.user + cpu.system) / SENDS).toFixed(0)} µs CPU per send`,
);

for (const session of sessions) session.close();
tokens.close();
await fake.stop();
rmSync(dir, { recursive: true, force: true });
