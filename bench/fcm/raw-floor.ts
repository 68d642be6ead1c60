// Experiment: the floor of a bare node:http2 client against the fake (not committed).
import http2 from 'node:http2';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFcmFakeProcess } from '../support/fcm-fake-client.ts';
import { readFileSync } from 'node:fs';
const dir = mkdtempSync(join(tmpdir(), 'np-raw-'));
const fake = await startFcmFakeProcess(20, dir);
const creds = JSON.parse(readFileSync(fake.credentialsPath, 'utf8'));
// get a token via the real oauth path
const { AccessTokenSource, readServiceAccountFile } = await import('../../src/delivery/fcm/oauth.ts');
const src = new AccessTokenSource({ account: readServiceAccountFile(fake.credentialsPath), clock: { nowMs: () => Date.now() }, requestTimeoutMs: 5000 });
const auth = await src.get(); if (!auth.ok) throw new Error('no token');
const sessions = [0,1,2,3].map(() => http2.connect(fake.baseUrl));
const N = 30000; let next = 0;
const body = (i: number) => JSON.stringify({ message: { token: `t-${i}`, data: { type: 'like', eventId: `e${i}`, title: 'New like', body: 'alice liked your post' } } });
const t0 = performance.now(); const c0 = process.cpuUsage();
await Promise.all(Array.from({ length: 300 }, async (_, w) => {
  const s = sessions[w % 4]!;
  while (next < N) { const i = next++;
    await new Promise<void>((res, rej) => { const st = s.request({ ':method': 'POST', ':path': '/v1/projects/fake-project/messages:send', authorization: `Bearer ${auth.accessToken}`, 'content-type': 'application/json' });
      st.on('response', () => {}); st.on('data', () => {}); st.on('end', () => res()); st.on('error', rej); st.end(body(i)); });
  }
}));
const el = performance.now() - t0; const c = process.cpuUsage(c0);
console.log(`raw: ${(N / (el / 1000)).toFixed(0)}/s, ${((c.user + c.system) / N).toFixed(0)} µs CPU per request`);
for (const s of sessions) s.close(); src.close(); await fake.stop();
