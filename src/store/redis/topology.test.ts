import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { coveredSlots, parseClusterInfo, parseClusterNodes } from './topology.ts';
import { describeTopology, topologyServesEverySlot } from '../port-topology.ts';

// The shape of `CLUSTER NODES` as Redis 7 prints it (ids shortened to keep the lines readable).
const HEALTHY = [
  'a1 127.0.0.1:7001@17001 myself,master - 0 0 1 connected 0-5460',
  'b2 127.0.0.1:7002@17002,node-b master - 0 1700000000000 2 connected 5461-10922',
  'c3 127.0.0.1:7003@17003 master - 0 1700000000000 3 connected 10923-16383',
  'd4 127.0.0.1:7004@17004 slave a1 0 1700000000000 1 connected',
  'e5 127.0.0.1:7005@17005 handshake - 0 0 0 connected',
  '',
].join('\n');

describe('Redis Cluster topology', () => {
  it('reads masters with their slot counts, replicas with their masters, and leaves out nodes in handshake', () => {
    const nodes = parseClusterNodes(HEALTHY);
    assert.deepEqual(
      nodes.map((node) => [node.address, node.role, node.slots, node.masterId ?? null, node.reachable]),
      [
        ['127.0.0.1:7001', 'master', 5461, null, true],
        ['127.0.0.1:7002', 'master', 5462, null, true],
        ['127.0.0.1:7003', 'master', 5461, null, true],
        ['127.0.0.1:7004', 'replica', 0, 'a1', true],
      ],
      'masters first by address, replicas after',
    );
    assert.equal(coveredSlots(nodes), 16_384, 'the three ranges cover every slot');
  });

  it('a failed master leaves its slots uncovered; a single slot and migrating markers are counted right', () => {
    const nodes = parseClusterNodes(
      [
        'a1 127.0.0.1:7001@17001 myself,master - 0 0 1 connected 0-5460 [5461->-b2]',
        'b2 127.0.0.1:7002@17002 master,fail - 0 0 2 disconnected 5461-10922',
        'c3 127.0.0.1:7003@17003 master - 0 0 3 connected 10923-16382 16383',
      ].join('\n'),
    );
    assert.equal(nodes.find((node) => node.id === 'b2')?.reachable, false, 'fail flag means unreachable');
    assert.equal(coveredSlots(nodes), 16_384 - 5462, 'b2’s range is uncovered; 16383 alone counts one');
    const topology = { kind: 'redis-cluster' as const, layout: 'cluster', state: 'fail', slotsCovered: coveredSlots(nodes), nodes };
    assert.equal(topologyServesEverySlot(topology), false, 'uncovered slots are not whole');
    assert.equal(
      describeTopology(topology),
      'Redis Cluster, cluster key layout: 3 masters, 0 replicas (1 unreachable), 10922/16384 slots covered, state fail',
    );
  });

  it('CLUSTER INFO lines become fields', () => {
    assert.deepEqual(parseClusterInfo('cluster_state:ok\r\ncluster_slots_assigned:16384\r\n'), {
      cluster_state: 'ok',
      cluster_slots_assigned: '16384',
    });
  });

  it('SQLite and one Redis are always whole', () => {
    assert.ok(topologyServesEverySlot({ kind: 'sqlite' }), 'sqlite');
    assert.ok(topologyServesEverySlot({ kind: 'redis', layout: 'divine' }), 'single redis');
    assert.equal(describeTopology({ kind: 'redis', layout: 'divine' }), 'one Redis server, divine key layout');
  });
});
