import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { Agent } from 'undici';
import { WebSocketServer } from 'ws';
import { createLogger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import {
  hostsResolver,
  isOutboundRefusal,
  openPolicyWebSocket,
  OutboundPolicy,
  OutboundRefusedError,
  parseHostsOverride,
  resolverFromEnvironment,
  systemResolver,
  TEST_HOSTS_ENV,
  type OutboundRefusal,
  type Resolver,
} from './public-connect.ts';
import { OUTBOUND_REFUSED_MESSAGE, outboundRefusalReporter } from './refusals.ts';

/** The hostile answers of the issue: a public-looking name resolving to each of them. */
const HOSTILE: Array<[string, string]> = [
  ['127.0.0.1', 'loopback'],
  ['10.0.0.1', 'private'],
  ['::1', 'loopback'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['64:ff9b::7f00:1', 'loopback'],
];

function capture(): { reporter: (r: OutboundRefusal) => void; metrics: Metrics; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const metrics = new Metrics();
  return { reporter: outboundRefusalReporter(metrics, createLogger({ level: 'info', destination: sink })), metrics, lines };
}

/** A resolver answering every name with `addresses`, counting its calls. */
function stub(...addresses: string[]): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolver = (hostname: string) => {
    calls.push(hostname);
    return Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) })));
  };
  return Object.assign(resolver, { calls });
}

let http: Server;
let httpPort: number;
let httpConnections = 0;
let wss: WebSocketServer;
let wsPort: number;
let wsConnections = 0;

before(async () => {
  http = createServer((_req, res) => res.end('ok'));
  http.on('connection', () => (httpConnections += 1));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  httpPort = (http.address() as AddressInfo).port;
  wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  wss.on('connection', () => (wsConnections += 1));
  await new Promise<void>((resolve) => wss.once('listening', resolve));
  wsPort = (wss.address() as AddressInfo).port;
});
after(async () => {
  await new Promise<void>((resolve) => http.close(() => resolve()));
  await new Promise<void>((resolve) => wss.close(() => resolve()));
});

describe('OutboundPolicy.resolve', () => {
  for (const [address, reason] of HOSTILE) {
    test(`a public-looking name resolving to ${address} is refused (${reason}), counted and logged`, async () => {
      const { reporter, metrics, lines } = capture();
      const policy = new OutboundPolicy({ purpose: 'nip9a_relay', resolver: stub(address), onRefused: reporter });
      const err = await policy.resolve('relay.example.com').then(
        () => assert.fail('resolved'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof OutboundRefusedError);
      assert.equal(err.refusal.reason, reason);
      assert.equal(err.refusal.address, address);
      assert.match(err.message, new RegExp(`^relay\\.example\\.com resolves to ${address.replace(/\./g, '\\.')}, which is`));
      assert.match(await metrics.render(), new RegExp(`push_outbound_refused_total\\{purpose="nip9a_relay",reason="${reason}"\\} 1`));
      const line = lines.find((l) => l.msg === OUTBOUND_REFUSED_MESSAGE);
      assert.ok(line, 'a refusal line is logged');
      assert.equal(line.level, 40, 'a warning');
      assert.deepEqual([line.purpose, line.host, line.address, line.reason], ['nip9a_relay', 'relay.example.com', address, reason]);
    });
  }

  test('one refused address among public ones refuses the whole name', async () => {
    const policy = new OutboundPolicy({ purpose: 'webpush', resolver: stub('8.8.8.8', '10.0.0.1') });
    await assert.rejects(policy.resolve('push.example.com'), (e: unknown) => isOutboundRefusal(e) && e.refusal.address === '10.0.0.1');
  });

  test('public answers pass in order; IP literals are judged without asking the resolver', async () => {
    const resolver = stub('8.8.8.8', '2606:4700::1111');
    const policy = new OutboundPolicy({ purpose: 'lnurl', resolver });
    assert.deepEqual(await policy.resolve('wallet.example.com'), [
      { address: '8.8.8.8', family: 4 },
      { address: '2606:4700::1111', family: 6 },
    ]);
    assert.deepEqual(await policy.resolve('1.1.1.1'), [{ address: '1.1.1.1', family: 4 }]);
    await assert.rejects(policy.resolve('[::1]'), OutboundRefusedError);
    assert.deepEqual(resolver.calls, ['wallet.example.com']);
  });

  test('allowLoopback admits a loopback host, never a public name resolving to loopback, never 10/8', async () => {
    const policy = new OutboundPolicy({
      purpose: 'nip9a_callback',
      rules: { allowLoopback: true, allowPrivate: false },
      resolver: stub('127.0.0.1'),
    });
    assert.deepEqual(await policy.resolve('localhost'), [{ address: '127.0.0.1', family: 4 }]);
    assert.equal(policy.checkLiteral('127.0.0.1'), null);
    await assert.rejects(policy.resolve('hook.example.com'), OutboundRefusedError);
    assert.ok(policy.checkLiteral('10.0.0.1') instanceof OutboundRefusedError);
  });

  test('a name with no address is a resolver error, not a refusal', async () => {
    const policy = new OutboundPolicy({ purpose: 'lnurl', resolver: stub() });
    await assert.rejects(
      policy.resolve('empty.example.com'),
      (e: NodeJS.ErrnoException) => e.code === 'ENOTFOUND' && !isOutboundRefusal(e),
    );
  });
});

describe('connections use the checked addresses only', () => {
  test('node:http with the policy lookup: refused before any connection; admitted, it connects to the resolved address after one resolution', async () => {
    const hostile = stub('127.0.0.1');
    const refusing = new OutboundPolicy({ purpose: 'webpush', resolver: hostile });
    const before = httpConnections;
    const err = await new Promise<Error>((resolve) => {
      const req = httpRequest({ host: 'push.example.com', port: httpPort, path: '/', lookup: refusing.lookup }, () =>
        resolve(new Error('answered')),
      );
      req.on('error', resolve);
      req.end();
    });
    assert.ok(isOutboundRefusal(err), err.message);
    assert.equal(httpConnections, before, 'the listener saw nothing');

    // The same name admitted (an operator's allowPrivate): the socket goes where the policy resolved it.
    const resolver = stub('127.0.0.1');
    const admitting = new OutboundPolicy({ purpose: 'webpush', rules: { allowLoopback: false, allowPrivate: true }, resolver });
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({ host: 'push.example.com', port: httpPort, path: '/', lookup: admitting.lookup }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(status, 200);
    assert.deepEqual(resolver.calls, ['push.example.com'], 'one resolution, by the policy');
  });

  test('undici with the policy lookup as its connect option: refused without a connection', async () => {
    const policy = new OutboundPolicy({ purpose: 'nip9a_callback', resolver: stub('::ffff:127.0.0.1') });
    const agent = new Agent({ connect: { lookup: policy.lookup } });
    const before = httpConnections;
    try {
      await assert.rejects(
        agent.request({ origin: `http://hook.example.com:${httpPort}`, path: '/', method: 'POST', body: '{}' }),
        (e: unknown) => isOutboundRefusal(e),
      );
      assert.equal(httpConnections, before);
    } finally {
      await agent.close();
    }
  });

  for (const [address] of HOSTILE) {
    test(`openPolicyWebSocket: a name resolving to ${address} gets an error event and no connection`, async () => {
      const { reporter, metrics } = capture();
      const policy = new OutboundPolicy({ purpose: 'user_relay', resolver: stub(address), onRefused: reporter });
      const before = wsConnections;
      const socket = openPolicyWebSocket(`ws://relay.example.com:${wsPort}/`, policy);
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      const err = await new Promise<Error>((resolve) => socket.once('error', resolve));
      await closed;
      assert.ok(isOutboundRefusal(err), err.message);
      assert.equal(wsConnections, before, 'the loopback listener saw nothing');
      assert.match(await metrics.render(), /push_outbound_refused_total\{purpose="user_relay",reason="(loopback|private)"\} 1/);
    });
  }

  test('openPolicyWebSocket: a refused IP literal throws before anything is opened; an admitted name connects through the policy', async () => {
    const policy = new OutboundPolicy({ purpose: 'nip9a_relay', resolver: stub('127.0.0.1') });
    assert.throws(() => openPolicyWebSocket(`ws://127.0.0.1:${wsPort}/`, policy), OutboundRefusedError);
    assert.throws(() => openPolicyWebSocket(`ws://[::1]:${wsPort}/`, policy), OutboundRefusedError);

    const resolver = stub('127.0.0.1');
    const admitting = new OutboundPolicy({ purpose: 'nip9a_relay', rules: { allowLoopback: false, allowPrivate: true }, resolver });
    const before = wsConnections;
    const socket = openPolicyWebSocket(`ws://relay.example.com:${wsPort}/`, admitting);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    socket.close();
    assert.equal(wsConnections, before + 1);
    assert.deepEqual(resolver.calls, ['relay.example.com']);
  });
});

describe('resolvers', () => {
  test('the hosts override parses name=ip|ip lists and refuses anything else', () => {
    const hosts = parseHostsOverride('evil.example.com=127.0.0.1, v6.example.com=::1|10.0.0.1');
    assert.deepEqual(hosts.get('v6.example.com'), [
      { address: '::1', family: 6 },
      { address: '10.0.0.1', family: 4 },
    ]);
    assert.throws(() => parseHostsOverride('evil.example.com=not-an-ip'), /name=ip/);
  });

  test('listed names come from the table (case and trailing dot ignored); others go to the fallback', async () => {
    const fallback = stub('8.8.8.8');
    const resolver = hostsResolver(parseHostsOverride('evil.example.com=127.0.0.1'), fallback);
    assert.deepEqual(await resolver('Evil.Example.com.'), [{ address: '127.0.0.1', family: 4 }]);
    assert.deepEqual(await resolver('other.example.com'), [{ address: '8.8.8.8', family: 4 }]);
    assert.deepEqual(fallback.calls, ['other.example.com']);
  });

  test(`${TEST_HOSTS_ENV} is honoured only under NODE_ENV=test`, async () => {
    const override = { [TEST_HOSTS_ENV]: 'evil.example.com=127.0.0.1' };
    assert.equal(resolverFromEnvironment({ ...override, NODE_ENV: 'production' }), systemResolver);
    assert.equal(resolverFromEnvironment({ NODE_ENV: 'test' }), systemResolver);
    assert.deepEqual(await resolverFromEnvironment({ ...override, NODE_ENV: 'test' })('evil.example.com'), [
      { address: '127.0.0.1', family: 4 },
    ]);
  });
});
