/**
 * The far side of bench/nip9a/gateway.ts, in its own process so its work is not billed to the
 * gateway: 50 bare relays (WebSocket servers that answer a REQ by remembering its subscription
 * id and then send the pre-signed events they are given, paced) and the loopback callback
 * receiver. Send time and receipt time are read on this one clock, so the latency is from the
 * relay writing an event to the gateway's POST arriving.
 *
 * Protocol with the parent (IPC): → `{type:'ready', relayPorts, receiverPort}`; ← `{type:'frames',
 * phase, frames: string[][] (event JSON per relay)}` → `{type:'stored', phase}` (before any load,
 * so the megabytes of frames cross the pipe outside the measured window); ← `{type:'load', phase,
 * rate, expected}`; → `{type:'done', ...}` (with this process's CPU seconds from the first send, so
 * a run shows what the far side took of the 2 cores, and the wall time of the last POST).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { frameText } from '../../src/nostr/relay-frames.ts';

const RELAYS = Number(process.argv[2] ?? '50');
const TICK_MS = 10;
/** Once every event was sent, the run ends when every expected POST arrived or none came for this long. */
const QUIET_MS = 15_000;

interface RelayState {
  server: WebSocketServer;
  socket: WebSocket | null;
  subscription: string | null;
}

const relays: RelayState[] = [];
for (let i = 0; i < RELAYS; i += 1) {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  const state: RelayState = { server, socket: null, subscription: null };
  server.on('connection', (socket) => {
    state.socket = socket;
    socket.on('message', (data) => {
      const frame = JSON.parse(frameText(data)) as unknown[];
      if (frame[0] === 'REQ' && typeof frame[1] === 'string') {
        state.subscription ??= frame[1];
        socket.send(JSON.stringify(['EOSE', frame[1]]));
      }
    });
  });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  relays.push(state);
}

const sentAt = new Map<string, number>();
const latencies: number[] = [];
const delivered: string[] = [];
let posts = 0;
let lastPostAt = 0;
/** This process's CPU at the last POST: a phase's figure ends there, not after the wait for POSTs dropped upstream. */
let cpuAtLastPost = process.cpuUsage();
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (c: Buffer) => chunks.push(c));
  request.on('end', () => {
    const now = Date.now();
    const { id } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string };
    posts += 1;
    lastPostAt = now;
    cpuAtLastPost = process.cpuUsage();
    const sent = sentAt.get(id);
    if (sent !== undefined) latencies.push(now - sent);
    delivered.push(`${(request.url ?? '').slice('/cb/'.length)}:${id}`);
    response.writeHead(200);
    response.end();
  });
});
receiver.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));

process.send?.({
  type: 'ready',
  relayPorts: relays.map((r) => (r.server.address() as AddressInfo).port),
  receiverPort: (receiver.address() as AddressInfo).port,
});

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0);
}

const phases = new Map<string, string[][]>();
process.on('message', (message: { type: string; phase: string; frames?: string[][]; rate: number; expected: number }) => {
  if (message.type === 'frames') {
    phases.set(message.phase, message.frames ?? []);
    process.send?.({ type: 'stored', phase: message.phase });
    return;
  }
  if (message.type !== 'load') return;
  const frames = phases.get(message.phase) ?? [];
  // A phase starts afresh (the parent waited for every POST of the one before).
  posts = 0;
  lastPostAt = 0;
  latencies.length = 0;
  delivered.length = 0;
  sentAt.clear();
  void (async () => {
    while (relays.some((r) => r.subscription === null)) await new Promise((resolve) => setTimeout(resolve, 50));
    const queue: Array<[number, string]> = [];
    const longest = Math.max(...frames.map((f) => f.length));
    for (let k = 0; k < longest; k += 1)
      frames.forEach((ofRelay, relay) => ofRelay[k] !== undefined && queue.push([relay, ofRelay[k] as string]));
    const startedAt = Date.now();
    const cpuAtStart = process.cpuUsage();
    let next = 0;
    while (next < queue.length) {
      const due = Math.min(queue.length, Math.floor(((Date.now() - startedAt) / 1000) * message.rate) + 1);
      for (; next < due; next += 1) {
        const [relay, json] = queue[next] as [number, string];
        const state = relays[relay] as RelayState;
        sentAt.set((JSON.parse(json) as { id: string }).id, Date.now());
        state.socket?.send(`["EVENT",${JSON.stringify(state.subscription)},${json}]`);
      }
      await new Promise((resolve) => setTimeout(resolve, TICK_MS));
    }
    const sendSecs = (Date.now() - startedAt) / 1000;
    const sentDoneAt = Date.now();
    while (posts < message.expected && Date.now() - Math.max(lastPostAt, sentDoneAt) < QUIET_MS)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const sorted = latencies.sort((a, b) => a - b);
    const cpuMicros = cpuAtLastPost.user + cpuAtLastPost.system - cpuAtStart.user - cpuAtStart.system;
    process.send?.({
      cpuSecs: cpuMicros / 1e6,
      wallSecs: (Math.max(lastPostAt, sentDoneAt) - startedAt) / 1000,
      type: 'done',
      sent: queue.length,
      sendSecs,
      posts,
      postSecs: (lastPostAt - startedAt) / 1000,
      lastPostAt,
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      max: sorted[sorted.length - 1] ?? 0,
      delivered,
    });
  })();
});
