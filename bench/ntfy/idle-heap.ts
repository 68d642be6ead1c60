/**
 * Where an idle subscription's memory goes: the server binary under the inspector, 10,000 idle
 * subscriptions opened as `run.ts --mode idle` opens them, and one of two reports per subscription:
 *
 * - `--alloc`: everything allocated while they open (V8's sampling heap profiler, objects
 *   collected since included), by allocating function: the garbage a burst leaves behind;
 * - `--retained` (default): a heap snapshot once they are open, by object kind, and by what holds
 *   each kind: the state an idle subscription keeps.
 *
 *   node --import tsx bench/ntfy/idle-heap.ts [--store redis|sqlite] [--transport json|ws] [--alloc] [--subs N]
 *
 * Build first (`npm run build`): a stale dist/ makes the binary run the source through tsx. The
 * inspector and the profiler cost the server memory and time of their own: compare reports with
 * each other, not with `run.ts` figures. Redis runs also print the commands redis-server ran.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { WebSocket } from 'ws';
import { frameText } from '../../src/nostr/relay-frames.ts';
import { startRedisServer } from '../../test/support/redis-server.ts';
import { freePort, ntfyServiceEnv, startServiceProcess } from '../../test/support/service-process.ts';
import { BenchSubscriber, Tally, withConcurrency } from './load.ts';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'redis' },
    transport: { type: 'string', default: 'json' },
    alloc: { type: 'boolean', default: false },
    subs: { type: 'string', default: '10000' },
    top: { type: 'string', default: '30' },
  },
});
const store = values.store === 'sqlite' ? 'sqlite' : 'redis';
const transport = values.transport === 'ws' ? 'ws' : 'json';
const SUBS = Number(values.subs);
const TOP = Number(values.top);
const perSub = (bytes: number) => `${(bytes / SUBS).toFixed(0).padStart(6)} B`;

/** A minimal Chrome DevTools Protocol client over the inspector's WebSocket. */
class Inspector {
  private nextId = 1;
  private readonly pending = new Map<number, (result: unknown) => void>();
  readonly snapshotChunks: string[] = [];

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const message = JSON.parse(frameText(data)) as {
        id?: number;
        result?: unknown;
        error?: { message: string };
        method?: string;
        params?: { chunk?: string };
      };
      if (message.method === 'HeapProfiler.addHeapSnapshotChunk') this.snapshotChunks.push(message.params?.chunk ?? '');
      if (message.id === undefined) return;
      if (message.error) console.error(`inspector: ${message.error.message}`);
      this.pending.get(message.id)?.(message.result);
      this.pending.delete(message.id);
    });
  }

  static async open(port: number): Promise<Inspector> {
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
    const socket = new WebSocket(targets[0]?.webSocketDebuggerUrl ?? '');
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    return new Inspector(socket);
  }

  call(method: string, params: object = {}): Promise<unknown> {
    return new Promise((resolve) => {
      const id = this.nextId++;
      this.pending.set(id, resolve);
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  close(): void {
    this.socket.close();
  }
}

/** Sum `size` under `key`. */
function tally(into: Map<string, number>, key: string, size: number): void {
  into.set(key, (into.get(key) ?? 0) + size);
}

function printTop(title: string, sizes: Map<string, number>): void {
  console.log(`--- ${title}`);
  for (const [key, size] of [...sizes].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${perSub(size)}  ${key}`);
}

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

function allocationReport(head: SamplingNode): void {
  const self = new Map<string, number>();
  let total = 0;
  const walk = (node: SamplingNode) => {
    const where = node.callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(dist|src)\//, '$1/');
    tally(self, `${node.callFrame.functionName || '(anonymous)'} ${where}:${node.callFrame.lineNumber + 1}`, node.selfSize);
    total += node.selfSize;
    for (const child of node.children) walk(child);
  };
  walk(head);
  console.log(`allocated while opening: ${perSub(total)} per subscription (${(total / 1048576).toFixed(0)} MiB)`);
  printTop('allocated per subscription, by function', self);
}

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

function retainedReport(snapshot: HeapSnapshot): void {
  const {
    node_fields: fields,
    node_types: [nodeTypes],
    edge_fields: edgeFields,
    edge_types: [edgeTypes],
  } = snapshot.snapshot.meta;
  const width = fields.length;
  const [typeAt, nameAt, sizeAt, edgesAt] = ['type', 'name', 'self_size', 'edge_count'].map((f) => fields.indexOf(f)) as [
    number,
    number,
    number,
    number,
  ];
  const count = snapshot.nodes.length / width;
  const kind = (node: number) => {
    const type = nodeTypes[snapshot.nodes[node * width + typeAt] as number] ?? '?';
    return type.includes('string')
      ? type
      : `${type} ${(snapshot.strings[snapshot.nodes[node * width + nameAt] as number] ?? '').slice(0, 40)}`;
  };
  // Each node's first strong retainer, enough to tell what holds a kind of object.
  const holder = new Int32Array(count).fill(-1);
  const via = new Array<string>(count);
  let edge = 0;
  for (let node = 0; node < count; node++) {
    for (let i = 0; i < (snapshot.nodes[node * width + edgesAt] as number); i++, edge += edgeFields.length) {
      const type = edgeTypes[snapshot.edges[edge] as number] ?? '';
      const target = (snapshot.edges[edge + 2] as number) / width;
      if (type === 'weak' || holder[target] !== -1) continue;
      holder[target] = node;
      const name = snapshot.edges[edge + 1] as number;
      via[target] = type === 'element' || type === 'hidden' ? `[${name}]` : `.${snapshot.strings[name]}`;
    }
  }
  const byKind = new Map<string, number>();
  const byHolder = new Map<string, number>();
  let total = 0;
  for (let node = 0; node < count; node++) {
    const size = snapshot.nodes[node * width + sizeAt] as number;
    total += size;
    tally(byKind, kind(node), size);
    const owner = holder[node] as number;
    tally(byHolder, `${kind(node)}  ←  ${owner < 0 ? '(root)' : `${kind(owner)}${via[node]}`}`, size);
  }
  console.log(
    `heap after collection: ${perSub(total)} per subscription (${(total / 1048576).toFixed(0)} MiB, the idle process's own included)`,
  );
  printTop('retained per subscription, by kind', byKind);
  printTop('retained per subscription, by kind and holder', byHolder);
}

const dataDir = mkdtempSync(join(tmpdir(), 'idle-heap-'));
const redis = store === 'redis' ? await startRedisServer() : undefined;
const port = await freePort();
const inspectPort = await freePort();
const service = await startServiceProcess({
  env: { ...ntfyServiceEnv({ dataDir, port, redisUrl: redis?.url }), NODE_OPTIONS: `--inspect=127.0.0.1:${inspectPort}` },
});
const inspector = await Inspector.open(inspectPort);
const baseUrl = `http://127.0.0.1:${port}`;
const subscribers = Array.from(
  { length: SUBS },
  (_, i) => new BenchSubscriber({ baseUrl, topics: [`idle${String(i).padStart(6, '0')}`], transport, tally: new Tally() }),
);
try {
  await inspector.call('HeapProfiler.enable');
  if (values.alloc)
    await inspector.call('HeapProfiler.startSampling', {
      samplingInterval: 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  // As run.ts opens them: 400 at a time.
  await withConcurrency(subscribers, 400, (s) => s.open().catch(() => undefined));
  console.log(`[${store}] ${SUBS} idle ${transport} subscriptions open`);
  if (values.alloc) {
    const { profile } = (await inspector.call('HeapProfiler.stopSampling')) as { profile: { head: SamplingNode } };
    allocationReport(profile.head);
  } else {
    await inspector.call('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    retainedReport(JSON.parse(inspector.snapshotChunks.join('')) as HeapSnapshot);
  }
  if (redis) {
    const client = new Redis(redis.url);
    const stats = await client.info('commandstats');
    client.disconnect();
    console.log(
      `--- redis-server commands: ${[...stats.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)].map((m) => `${m[1]} ${m[2]}`).join(', ')}`,
    );
  }
} finally {
  for (const subscriber of subscribers) subscriber.stop();
  inspector.close();
  await service.stop();
  await redis?.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
