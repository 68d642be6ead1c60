import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { finalizeEvent, generateSecretKey, getPublicKey } from 'nostr-tools/pure';
import { createEventVerifier, type EventVerifier } from '../../nostr/event.ts';
import { createLogger } from '../../observability/logger.ts';
import { OutboundPolicy, type Resolver } from '../../net/public-connect.ts';
import { createLnurlProviderLookup, lnurlPayUrl, providerOfLnurlAnswer } from './lnurl-providers.ts';

const PROVIDER = 'ab'.repeat(32);

test('lnurlPayUrl: LUD-16 addresses on public names only, loopback http only when allowed', () => {
  assert.equal(lnurlPayUrl('Alice@Wallet.Example.com', false)?.href, 'https://wallet.example.com/.well-known/lnurlp/alice');
  for (const refused of [
    'alice@127.0.0.1',
    'alice@localhost',
    'alice@wallet.local',
    'alice@intranet',
    'alice@wallet.com:8443',
    'not an address',
    'a@b@c.com',
  ])
    assert.equal(lnurlPayUrl(refused, false), null, refused);
  assert.equal(lnurlPayUrl('alice@127.0.0.1:8080', true)?.href, 'http://127.0.0.1:8080/.well-known/lnurlp/alice');
  assert.equal(lnurlPayUrl('alice@10.0.0.1', true), null, 'only loopback is let through');
});

test('providerOfLnurlAnswer: the nostrPubkey of an endpoint that allows Nostr', () => {
  assert.equal(providerOfLnurlAnswer({ allowsNostr: true, nostrPubkey: PROVIDER, callback: 'https://x' }), PROVIDER);
  assert.equal(providerOfLnurlAnswer({ allowsNostr: false, nostrPubkey: PROVIDER }), null);
  assert.equal(providerOfLnurlAnswer({ allowsNostr: true, nostrPubkey: 'npub1…' }), null);
  assert.equal(providerOfLnurlAnswer(null), null);
});

let server: Server;
let port: number;
let served = 0;
let verifier: EventVerifier;
before(async () => {
  verifier = await createEventVerifier();
  server = createServer((req, res) => {
    served += 1;
    if (req.url === '/.well-known/lnurlp/alice') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ tag: 'payRequest', allowsNostr: true, nostrPubkey: PROVIDER }));
    } else if (req.url === '/.well-known/lnurlp/moved') {
      res.statusCode = 302;
      res.setHeader('location', '/.well-known/lnurlp/alice');
      res.end();
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

test("createLnurlProviderLookup: from the user's newest kind 0 to the endpoint's key, remembered; redirects are not followed", async () => {
  const key = generateSecretKey();
  const user = getPublicKey(key);
  const movedKey = generateSecretKey();
  const profiles = new Map<string, unknown[]>([
    [
      user,
      [
        finalizeEvent({ kind: 0, created_at: 100, tags: [], content: JSON.stringify({ lud16: 'old@nowhere.invalid' }) }, key),
        finalizeEvent({ kind: 0, created_at: 200, tags: [], content: JSON.stringify({ lud16: `alice@127.0.0.1:${port}` }) }, key),
      ],
    ],
    [
      getPublicKey(movedKey),
      [finalizeEvent({ kind: 0, created_at: 1, tags: [], content: JSON.stringify({ lud16: `moved@127.0.0.1:${port}` }) }, movedKey)],
    ],
  ]);
  let nowMs = 0;
  const lookup = createLnurlProviderLookup({
    relays: ['ws://unused'],
    queryRelays: (_relays, filter) => Promise.resolve(profiles.get(filter.authors?.[0] ?? '') ?? []),
    verifier,
    timeoutMs: 2_000,
    allowLoopback: true,
    policy: new OutboundPolicy({ purpose: 'lnurl', rules: { allowLoopback: true, allowPrivate: false } }),
    nowMs: () => nowMs,
    logger: createLogger({ level: 'silent' }),
  });
  assert.equal(await lookup(user), PROVIDER);
  const before = served;
  assert.equal(await lookup(user), PROVIDER);
  assert.equal(served, before, 'remembered');
  assert.equal(await lookup(getPublicKey(movedKey)), null, 'a redirect is no answer');
  assert.equal(await lookup('cd'.repeat(32)), null, 'no kind 0');
  nowMs += 3_600_001;
  assert.equal(await lookup(user), PROVIDER);
  assert.equal(served, before + 2, 'asked again once the memo expired');
});

test('createLnurlProviderLookup: a wallet name resolving to loopback gets no connection and no provider, loopback allowed or not', async () => {
  const key = generateSecretKey();
  const user = getPublicKey(key);
  const refusals: string[] = [];
  const resolver: Resolver = () => Promise.resolve([{ address: '127.0.0.1', family: 4 as const }]);
  const lookup = createLnurlProviderLookup({
    relays: ['ws://unused'],
    queryRelays: () =>
      Promise.resolve([
        finalizeEvent({ kind: 0, created_at: 1, tags: [], content: JSON.stringify({ lud16: 'alice@wallet.example.com' }) }, key),
      ]),
    verifier,
    timeoutMs: 2_000,
    // Loopback allowed, as in the test suites: a public-looking name is still refused.
    allowLoopback: true,
    policy: new OutboundPolicy({
      purpose: 'lnurl',
      rules: { allowLoopback: true, allowPrivate: false },
      resolver,
      onRefused: (r) => refusals.push(`${r.host}:${r.reason}`),
    }),
    nowMs: () => 0,
    logger: createLogger({ level: 'silent' }),
  });
  assert.equal(await lookup(user), null);
  assert.deepEqual(refusals, ['wallet.example.com:loopback'], 'refused at the lookup, before any connection');
});
