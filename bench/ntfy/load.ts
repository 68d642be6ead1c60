/**
 * The two sides of the ntfy load generator: subscriber connections that check every topic's
 * sequence (in order, no gap, no duplicate) and record latency, and one publisher per topic
 * sending 0, 1, 2, … (each POST awaited, so commit order is sequence order), paced to a rate.
 */
import { request } from 'node:http';
import { WebSocket } from 'ws';
import { frameText } from '../../src/nostr/relay-frames.ts';
import { LatencyHistogram } from './histogram.ts';
import { RawHttpPool } from './raw-http.ts';

/** Microseconds on a clock shared by publishers and subscribers (one process). */
export function nowUs(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}

/** What a message body carries: the sequence number, the send time and padding. */
interface Probe {
  s: number;
  u: number;
}

/** Correctness and latency counters of every subscriber together. */
export class Tally {
  delivered = 0;
  gaps = 0;
  reorderedOrDuplicate = 0;
  connectErrors = 0;
  readErrors = 0;
  /** Latency of messages sent from {@link measureFromUs} on. */
  readonly latency = new LatencyHistogram();
  /** Latency of messages sent before it (the warm-up). */
  readonly warmupLatency = new LatencyHistogram();
  /** Send time (µs, {@link nowUs}) from which latency counts as measured. */
  measureFromUs = 0;
  /** Next expected sequence number per topic (one subscriber per topic in this generator). */
  readonly expected = new Map<string, number>();

  see(topic: string, probe: Probe): void {
    const expected = this.expected.get(topic) ?? 0;
    if (probe.s === expected) {
      this.expected.set(topic, expected + 1);
    } else if (probe.s > expected) {
      this.gaps += probe.s - expected;
      this.expected.set(topic, probe.s + 1);
    } else {
      this.reorderedOrDuplicate += 1;
      return;
    }
    this.delivered += 1;
    (probe.u >= this.measureFromUs ? this.latency : this.warmupLatency).record(nowUs() - probe.u);
  }
}

export interface SubscriberOptions {
  baseUrl: string;
  topics: string[];
  transport: 'json' | 'ws';
  tally: Tally;
}

/** One connection for one or more topics; it remembers the last id so it can resume with `since=`. */
export class BenchSubscriber {
  lastId: string | null = null;
  private close: () => void = () => undefined;
  private stopped = false;

  constructor(private readonly options: SubscriberOptions) {}

  /** Connect (with `since`) and resolve on the `open` event. */
  open(since = 'none'): Promise<void> {
    const path = `/${this.options.topics.join(',')}/${this.options.transport}?since=${since}`;
    return this.options.transport === 'ws' ? this.openWs(path) : this.openJson(path);
  }

  /** Drop the connection and resume from the last id, as a reconnecting phone does. */
  async reconnect(): Promise<void> {
    this.close();
    await this.open(this.lastId ?? 'none');
  }

  stop(): void {
    this.stopped = true;
    this.close();
  }

  private onFrame(line: string, resolveOpen: () => void): void {
    if (line === '') return;
    let frame: { event?: string; id?: string; topic?: string; message?: string };
    try {
      frame = JSON.parse(line) as typeof frame;
    } catch {
      this.options.tally.readErrors += 1;
      return;
    }
    if (frame.event === 'open') {
      resolveOpen();
      return;
    }
    if (frame.event !== 'message' || !frame.topic || !frame.message) return;
    this.lastId = frame.id ?? this.lastId;
    try {
      this.options.tally.see(frame.topic, JSON.parse(frame.message) as Probe);
    } catch {
      this.options.tally.readErrors += 1;
    }
  }

  private openJson(path: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const req = request(`${this.options.baseUrl}${path}`, (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          this.options.tally.connectErrors += 1;
          reject(new Error(`subscribe answered ${res.statusCode}`));
          return;
        }
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let nl: number;
          while ((nl = buffer.indexOf('\n')) !== -1) {
            this.onFrame(buffer.slice(0, nl), resolve);
            buffer = buffer.slice(nl + 1);
          }
        });
        res.on('error', () => undefined);
        res.on('close', () => {
          if (!this.stopped && !closedByUs) this.options.tally.readErrors += 1;
        });
      });
      let closedByUs = false;
      this.close = () => {
        closedByUs = true;
        req.destroy();
      };
      req.on('error', (err) => {
        if (closedByUs) return;
        this.options.tally.connectErrors += 1;
        reject(err);
      });
      req.end();
    });
  }

  private openWs(path: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(`${this.options.baseUrl.replace(/^http/, 'ws')}${path}`, { perMessageDeflate: false });
      let closedByUs = false;
      this.close = () => {
        closedByUs = true;
        socket.terminate();
      };
      socket.on('message', (data) => {
        for (const line of frameText(data).split('\n')) this.onFrame(line, resolve);
      });
      socket.on('error', (err) => {
        if (closedByUs) return;
        this.options.tally.connectErrors += 1;
        reject(err);
      });
      socket.on('close', () => {
        if (!this.stopped && !closedByUs) this.options.tally.readErrors += 1;
      });
    });
  }
}

export interface PublisherOptions {
  baseUrl: string;
  topics: string[];
  /** Messages per second over all topics. */
  rate: number;
  durationMs: number;
  paddingBytes: number;
  /** Concurrent HTTP connections. */
  sockets: number;
}

export interface PublishTotals {
  sent: Map<string, number>;
  /** Publishes answered 2xx so far (read it while running to mark a phase). */
  completed: number;
  errors: number;
  /** Publish round trips that took longer than their pacing slot (the generator fell behind). */
  late: number;
}

export function newPublishTotals(): PublishTotals {
  return { sent: new Map(), completed: 0, errors: 0, late: 0 };
}

/** How often the pacing loop looks for due sends. */
const PACING_TICK_MS = 1;

/**
 * One sequential publisher per topic, each paced to `rate / topics` per second, the topics'
 * slots staggered evenly (slot n belongs to topic n mod topics). One pacing loop walks the slots
 * in time order, so thousands of topics cost no timers of their own. A topic whose previous POST
 * is still out sends its next one the moment it returns (never two at once, never a skipped
 * number); such slots are counted as late.
 */
export async function runPublishers(options: PublisherOptions, totals: PublishTotals = newPublishTotals()): Promise<PublishTotals> {
  const pool = new RawHttpPool(options.baseUrl, options.sockets);
  const padding = 'p'.repeat(options.paddingBytes);
  const topicCount = options.topics.length;
  const slotMs = 1000 / options.rate;
  const seq = new Array<number>(topicCount).fill(0);
  const due = new Array<number>(topicCount).fill(0);
  const inFlight = new Array<boolean>(topicCount).fill(false);
  let outstanding = 0;
  let finished: () => void = () => undefined;
  const allDone = new Promise<void>((resolve) => (finished = resolve));

  const send = (t: number): void => {
    inFlight[t] = true;
    outstanding += 1;
    const topic = options.topics[t] as string;
    const body = JSON.stringify({ s: seq[t], u: nowUs(), p: padding });
    const done = (status: number) => {
      inFlight[t] = false;
      outstanding -= 1;
      due[t] = (due[t] as number) - 1;
      if (status >= 200 && status < 300) {
        totals.completed += 1;
        seq[t] = (seq[t] as number) + 1;
        totals.sent.set(topic, seq[t]);
      } else {
        totals.errors += 1;
      }
      if (due[t] > 0) send(t);
      else if (pacingOver && outstanding === 0) finished();
    };
    pool.post(`/${topic}?up=1`, body, done);
  };

  const startMs = performance.now();
  const totalSlots = Math.floor((options.durationMs / 1000) * options.rate);
  let slot = 0;
  let pacingOver = false;
  const tick = (): void => {
    const elapsed = performance.now() - startMs;
    while (slot < totalSlots && slot * slotMs <= elapsed) {
      const t = slot % topicCount;
      due[t] = (due[t] as number) + 1;
      if (inFlight[t]) totals.late += 1;
      else send(t);
      slot += 1;
    }
    if (slot < totalSlots) {
      setTimeout(tick, PACING_TICK_MS);
      return;
    }
    pacingOver = true;
    if (outstanding === 0) finished();
  };
  tick();
  await allDone;
  pool.close();
  return totals;
}

/** Run `fn` over `items` with at most `limit` at once. */
export async function withConcurrency<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}
