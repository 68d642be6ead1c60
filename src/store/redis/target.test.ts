import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultKeyLayout, describeRedisTarget, isClusterUrl, parseClusterNode, parseRedisTarget } from './target.ts';

describe('Redis store URLs', () => {
  it('a redis:// URL is one server with the divine layout by default', () => {
    const target = parseRedisTarget('redis://:secret@127.0.0.1:6380/2');
    assert.deepEqual(target, { kind: 'single', url: 'redis://:secret@127.0.0.1:6380/2' }, 'single target keeps the URL');
    assert.equal(defaultKeyLayout(target), 'divine', 'a single Redis defaults to the divine layout');
    assert.equal(describeRedisTarget(target), 'redis://127.0.0.1:6380/2', 'credentials never described');
  });

  it('a redis+cluster:// URL lists seed nodes, credentials and TLS, and defaults to the cluster layout', () => {
    const target = parseRedisTarget('rediss+cluster://app:p%40ss@10.0.0.1:7000,[::1]:7001', ['redis-3.internal:7002']);
    assert.deepEqual(
      target,
      {
        kind: 'cluster',
        tls: true,
        username: 'app',
        password: 'p@ss',
        nodes: [
          { host: '10.0.0.1', port: 7000 },
          { host: '::1', port: 7001 },
          { host: 'redis-3.internal', port: 7002 },
        ],
      },
      'every seed from the URL then redis.cluster_nodes',
    );
    assert.equal(defaultKeyLayout(target), 'cluster', 'a cluster defaults to the cluster layout');
    assert.equal(describeRedisTarget(target), 'rediss+cluster://10.0.0.1:7000,::1:7001,redis-3.internal:7002', 'no credentials');
    assert.ok(isClusterUrl('redis+cluster://h:1'), 'redis+cluster is a cluster URL');
    assert.ok(!isClusterUrl('redis://h:1'), 'redis is not');
  });

  it('a password alone (no user) is the password', () => {
    const target = parseRedisTarget('redis+cluster://only-password@h:7000');
    assert.ok(target.kind === 'cluster' && target.password === 'only-password' && target.username === undefined, JSON.stringify(target));
  });

  it('bad seeds and misplaced cluster nodes are refused with the reason', () => {
    assert.throws(() => parseClusterNode('no-port'), /"no-port" is not host:port/);
    assert.throws(() => parseClusterNode('h:70000'), /is not host:port/);
    assert.throws(() => parseRedisTarget('redis+cluster://'), /at least one host:port/);
    assert.throws(() => parseRedisTarget('redis://h:6379', ['h2:7000']), /redis\.cluster_nodes needs a redis\+cluster:\/\/ store URL/);
  });
});
