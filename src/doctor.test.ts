import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { createApiKey } from './platform/api-keys.ts';
import { loadConfig } from './config/load.ts';
import { listensOnLoopbackOnly, runDoctor } from './doctor.ts';
import { openSqliteStore } from './store/sqlite/index.ts';
import type { StorePort } from './store/port.ts';

/** A store whose first `looks` reads of the queue counts fail as a node lost on first contact does. */
async function storeFailingFirst(looks: number, opened: StorePort[]): Promise<() => Promise<StorePort>> {
  let failuresLeft = looks;
  return async () => {
    const store = await openSqliteStore({ path: ':memory:' });
    opened.push(store);
    const queueStats = store.queueStats.bind(store);
    store.queueStats = async (queue) => {
      if (failuresLeft > 0) {
        failuresLeft--;
        throw new Error('Connection is closed.');
      }
      return queueStats(queue);
    };
    return store;
  };
}

describe('doctor looks at the store', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'np-doctor-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const run = async (openStore: () => Promise<StorePort>) => {
    // The relay accepts (probed by a stand-in); port 0 is always free.
    const loaded = loadConfig({
      env: { NOSTR_PUSH__DATA_DIR: dir, NOSTR_PUSH__NOSTR__RELAYS: 'wss://relay.test', NOSTR_PUSH__SERVER__LISTEN_ADDR: '127.0.0.1:0' },
    });
    const lines: string[] = [];
    const status = await runDoctor(loaded, (line) => lines.push(line), { openStore, probeRelay: () => Promise.resolve(null) });
    return { status, out: lines.join('\n') };
  };

  test('a first look lost to a closed connection is looked at again: a warning, not a failure', async () => {
    const opened: StorePort[] = [];
    const { status, out } = await run(await storeFailingFirst(1, opened));
    assert.equal(status, 0, out);
    assert.match(out, /^warn {2}store: a first look failed \(Connection is closed\.\); a second one answered$/m, out);
    assert.match(out, /^ok {4}store .* answers \(inbound queue: 0 ready, 0 leased, 0 dead\)$/m, out);
    assert.equal(opened.length, 2, 'a fresh store for the second look');
    assert.doesNotMatch(out, /^FAIL/m, out);
  });

  test('a store that fails both looks fails doctor, its lines said once', async () => {
    const opened: StorePort[] = [];
    const { status, out } = await run(await storeFailingFirst(2, opened));
    assert.equal(status, 1, out);
    assert.match(out, /^FAIL {2}store .*: Connection is closed\.$/m, out);
    assert.equal((out.match(/^ok {4}store: /gm) ?? []).length, 1, `the topology said once:\n${out}`);
  });

  test('a store that answers at once: no warning about it', async () => {
    const opened: StorePort[] = [];
    const { status, out } = await run(await storeFailingFirst(0, opened));
    assert.equal(status, 0, out);
    assert.equal(opened.length, 1);
    assert.doesNotMatch(out, /first look failed/, out);
  });
});

describe('doctor on NIP-98 behind a proxy', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'np-doctor-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const run = async (env: Record<string, string>) => {
    const loaded = loadConfig({
      env: {
        NOSTR_PUSH__DATA_DIR: dir,
        NOSTR_PUSH__NOSTR__RELAYS: 'ws://127.0.0.1:1',
        NOSTR_PUSH__SERVER__LISTEN_ADDR: '127.0.0.1:0',
        ...env,
      },
    });
    const lines: string[] = [];
    await runDoctor(loaded, (line) => lines.push(line), { openStore: () => openSqliteStore({ path: ':memory:' }) });
    return lines.join('\n');
  };

  test('NIP-98 routes on and server.public_url unset: a failure naming the setting, a warning on loopback only', async () => {
    const out = await run({ NOSTR_PUSH__SERVER__LISTEN_ADDR: '0.0.0.0:0' });
    assert.match(
      out,
      /^FAIL {2}server\.public_url is unset: NIP-98 requests .* set server\.public_url \(NOSTR_PUSH__SERVER__PUBLIC_URL\).*NIP-9a callback URLs cannot be made without it$/m,
      out,
    );
    const loopback = await run({ NOSTR_PUSH__SERVER__LISTEN_ADDR: '127.0.0.1:0' });
    assert.match(loopback, /^warn {2}server\.public_url is unset: .*\(fine while it listens on loopback only\)$/m, loopback);
    assert.doesNotMatch(loopback, /^FAIL .*public_url/m, loopback);
  });

  test('listensOnLoopbackOnly: 127/8, ::1 and localhost are; every other address is not', () => {
    for (const addr of ['127.0.0.1:8000', '127.1.2.3:80', '[::1]:8000', 'localhost:8000'])
      assert.equal(listensOnLoopbackOnly(addr), true, addr);
    for (const addr of ['0.0.0.0:8000', '[::]:8000', '10.0.0.5:8000', 'push.example.com:8000', 'nonsense'])
      assert.equal(listensOnLoopbackOnly(addr), false, addr);
  });

  test('server.public_url set: an ok line with it; no api role: nothing said', async () => {
    const set = await run({ NOSTR_PUSH__SERVER__PUBLIC_URL: 'https://push.example.com' });
    assert.match(set, /^ok {4}NIP-98 requests are checked against server\.public_url https:\/\/push\.example\.com$/m, set);
    const noApi = await run({ NOSTR_PUSH__ROLES: 'engine,delivery' });
    assert.doesNotMatch(noApi, /NIP-98/, noApi);
  });
});

describe('doctor fails what would leave the service deaf or down', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'np-doctor-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const run = async (env: Record<string, string>, probeRelay: (url: string) => Promise<string | null>) => {
    const loaded = loadConfig({
      env: {
        NOSTR_PUSH__DATA_DIR: dir,
        NOSTR_PUSH__NOSTR__RELAYS: 'wss://a.test,wss://b.test',
        NOSTR_PUSH__SERVER__LISTEN_ADDR: '127.0.0.1:0',
        ...env,
      },
    });
    const lines: string[] = [];
    const status = await runDoctor(loaded, (line) => lines.push(line), {
      openStore: () => openSqliteStore({ path: ':memory:' }),
      probeRelay,
    });
    return { status, out: lines.join('\n') };
  };

  test('no relay reachable fails a listener; one of two is a warning', async () => {
    const none = await run({}, () => Promise.resolve('connect ECONNREFUSED'));
    assert.equal(none.status, 1, none.out);
    assert.match(none.out, /^FAIL {2}no relay is reachable: /m);
    const one = await run({}, (url) => Promise.resolve(url === 'wss://a.test' ? null : 'timed out'));
    assert.equal(one.status, 0, one.out);
    assert.match(one.out, /^warn {2}relay wss:\/\/b\.test: timed out$/m);
    const noListener = await run({ NOSTR_PUSH__ROLES: 'api' }, () => Promise.resolve('connect ECONNREFUSED'));
    assert.equal(noListener.status, 0, noListener.out);
    assert.match(noListener.out, /^warn {2}no relay is reachable: /m);
  });

  test('the HTTP port taken fails, in the words serve would use', async () => {
    const taken = createNetServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const out = await run({ NOSTR_PUSH__SERVER__LISTEN_ADDR: `127.0.0.1:${port}` }, () => Promise.resolve(null));
      assert.equal(out.status, 1, out.out);
      assert.match(out.out, new RegExp(`^FAIL {2}cannot listen on 127\\.0\\.0\\.1:${port}: address already in use`, 'm'));
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  test('an APNs key that does not load fails', async () => {
    const out = await run(
      {
        NOSTR_PUSH__APNS__KEY_PATH: join(dir, 'missing.p8'),
        NOSTR_PUSH__APNS__KEY_ID: 'ABCDEFGHIJ',
        NOSTR_PUSH__APNS__TEAM_ID: 'KLMNOPQRST',
        NOSTR_PUSH__APNS__BUNDLE_ID: 'com.example.app',
      },
      () => Promise.resolve(null),
    );
    assert.equal(out.status, 1, out.out);
    assert.match(out.out, /^FAIL {2}apns\.key_path .*missing\.p8 cannot be read: /m);
  });

  test('says whether an admin key exists, and how to make one', async () => {
    const out = await run({}, () => Promise.resolve(null));
    assert.equal(out.status, 0, out.out);
    assert.match(
      out.out,
      /^warn {2}no admin key of app default yet: the next start prints one, or make one now with nostr-push apps keys create default --role admin$/m,
    );
    const store = await openSqliteStore({ path: ':memory:' });
    await createApiKey(store, 'default', 'admin');
    const lines: string[] = [];
    const loaded = loadConfig({ env: { NOSTR_PUSH__DATA_DIR: dir, NOSTR_PUSH__SERVER__LISTEN_ADDR: '127.0.0.1:0' } });
    // doctor closes the store it opened; this one is reopened by nobody after.
    await runDoctor(loaded, (line) => lines.push(line), {
      openStore: () => Promise.resolve(store),
      probeRelay: () => Promise.resolve(null),
    });
    assert.match(lines.join('\n'), /^ok {4}1 admin key\(s\) of app default /m);
  });
});
