import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { Hono } from 'hono';
import { createEventVerifier } from '../nostr/event.ts';
import { generateSecretKey, publicKeyOf, signEvent } from '../nostr/keys.ts';
import { HTTP_AUTH_KIND } from '../nostr/nip98.ts';
import { createLogger } from '../observability/logger.ts';
import { ManualClock } from '../util/clock.ts';
import { HttpError } from './errors.ts';
import { readBodyBytes } from './json-body.ts';
import { authenticateNip98, type Nip98Auth } from './nip98-auth.ts';

async function appWith(publicUrl: string | undefined, refusals: string[]): Promise<{ app: Hono; clock: ManualClock }> {
  const clock = new ManualClock();
  const seen = new Set<string>();
  const auth: Nip98Auth = {
    verifier: await createEventVerifier(),
    replay: async (id) => !seen.has(id) && Boolean(seen.add(id)),
    clock,
    publicUrl,
    logger: createLogger({ level: 'silent' }),
    onRefused: (code) => refusals.push(code),
  };
  const app = new Hono();
  app.post('/v1/thing', async (c) => {
    const body = await readBodyBytes(c, 1024);
    return c.json({ pubkey: await authenticateNip98(c, auth, body) });
  });
  app.onError((err, c) => (err instanceof HttpError ? c.json(err.toJSON(), err.status as 401) : c.json({ error: 'boom' }, 500)));
  return { app, clock };
}

function authFor(secret: string, url: string, body: string, createdAt: number): string {
  const event = signEvent(
    {
      kind: HTTP_AUTH_KIND,
      created_at: createdAt,
      content: '',
      tags: [
        ['u', url],
        ['method', 'POST'],
        ['payload', createHash('sha256').update(body).digest('hex')],
      ],
    },
    secret,
  );
  return `Nostr ${Buffer.from(JSON.stringify(event)).toString('base64')}`;
}

test('behind a proxy the public URL is the one checked, with path and query as received', async () => {
  const refusals: string[] = [];
  const { app, clock } = await appWith('https://push.example.com/', refusals);
  const secret = generateSecretKey();
  const now = Math.floor(clock.nowMs() / 1000);
  const body = '{"a":1}';
  const good = await app.request('http://10.0.0.5:8000/v1/thing?q=2', {
    method: 'POST',
    body,
    headers: { authorization: authFor(secret, 'https://push.example.com/v1/thing?q=2', body, now) },
  });
  assert.equal(good.status, 200);
  assert.deepEqual(await good.json(), { pubkey: publicKeyOf(secret) });

  const internalUrl = await app.request('http://10.0.0.5:8000/v1/thing?q=2', {
    method: 'POST',
    body,
    headers: { authorization: authFor(secret, 'http://10.0.0.5:8000/v1/thing?q=2', body, now) },
  });
  assert.equal(internalUrl.status, 401);
  const error = (await internalUrl.json()) as { code: string; error: string };
  assert.equal(error.code, 'NIP98_UNAUTHORIZED');
  assert.match(error.error, /u tag/);
  assert.deepEqual(refusals, ['url-mismatch']);
});

test('without a public URL the request URL is checked, and the clock is the injected one', async () => {
  const refusals: string[] = [];
  const { app, clock } = await appWith(undefined, refusals);
  const secret = generateSecretKey();
  const body = 'x';
  const authorization = authFor(secret, 'http://localhost/v1/thing', body, Math.floor(clock.nowMs() / 1000));
  clock.advance(61_000);
  const late = await app.request('http://localhost/v1/thing', { method: 'POST', body, headers: { authorization } });
  assert.equal(late.status, 401);
  assert.deepEqual(refusals, ['stale']);
});
