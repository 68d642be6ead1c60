import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { NostrEvent } from '../nostr/event.ts';
import { silentLogger } from '../../test/listener/fakes.ts';
import { replayHistory, type FetchEnd, type HistoryChannel } from './historical.ts';
import type { EventIntake } from './intake.ts';
import type { RelayFilter } from './subscriptions.ts';

function list(n: number, createdAt: number): NostrEvent {
  return {
    id: n.toString(16).padStart(64, '0'),
    pubkey: 'p'.repeat(64),
    created_at: createdAt,
    kind: 30000,
    tags: [['d', 'notify']],
    content: '',
    sig: 's'.repeat(128),
  };
}

/** A relay in memory: newest first, ties by lowest id, `until` inclusive, `limit` applied. */
class MemoryChannel implements HistoryChannel {
  readonly requests: Array<{ id: string; filter: RelayFilter }> = [];
  readonly delivered: string[] = [];
  constructor(
    private readonly lists: NostrEvent[],
    private readonly behaviour: { ignoreUntil?: boolean; endOn?: (request: number) => FetchEnd | null } = {},
  ) {}

  async fetch(id: string, filter: RelayFilter, onEvent: (intake: EventIntake) => void): Promise<FetchEnd> {
    this.requests.push({ id, filter });
    const scripted = this.behaviour.endOn?.(this.requests.length);
    if (scripted) return scripted;
    if (!filter.kinds?.includes(30000)) return { end: 'eose' };
    const until = this.behaviour.ignoreUntil ? undefined : filter.until;
    const page = this.lists
      .filter((e) => until === undefined || e.created_at <= until)
      .sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1))
      .slice(0, filter.limit);
    for (const event of page) {
      this.delivered.push(event.id);
      onEvent({ outcome: 'accept', event });
    }
    return { end: 'eose' };
  }
}

const options = { relay: 'wss://r', nowSecs: 1_000_000, processWindowDays: 7, notifyListHistoryLimit: 3, logger: silentLogger() };

describe('replayHistory', () => {
  test('replays control events once, then pages notify lists backwards until a short page', async () => {
    // Ties at page boundaries: the inclusive `until` refetches them and the seen set absorbs them.
    const times = [900, 800, 800, 800, 700, 600, 600, 500];
    const lists = times.map((t, i) => list(i + 1, t));
    const channel = new MemoryChannel(lists);
    assert.equal(await replayHistory(channel, options), 'complete');
    assert.deepEqual(channel.requests[0], {
      id: 'push-history-control',
      filter: { kinds: [3079, 3080, 3083], since: 1_000_000 - 7 * 86_400 },
    });
    const pages = channel.requests.slice(1);
    assert.equal(pages[0]?.filter.until, undefined);
    assert.equal(pages[0]?.filter.limit, 3);
    assert.equal(pages[1]?.filter.until, 800);
    assert.ok(pages.every((p) => p.filter.since === undefined));
    assert.deepEqual(new Set(channel.delivered), new Set(lists.map((e) => e.id)));
    assert.equal(new Set(pages.map((p) => p.id)).size, pages.length, 'each page has its own subscription id');
  });

  test('a full page of one second steps one second back instead of stopping', async () => {
    const lists = [list(1, 900), list(2, 800), list(3, 800), list(4, 800), list(5, 800), list(6, 700)];
    const channel = new MemoryChannel(lists);
    assert.equal(await replayHistory(channel, options), 'complete');
    const delivered = new Set(channel.delivered);
    // Lists 2..4 fill the page at 800, list 5 (the fourth in that second) cannot be reached; 700 is.
    assert.ok(delivered.has(list(6, 700).id));
    assert.ok(channel.requests.some((r) => r.filter.until === 799));
  });

  test('stops on a full page with nothing new (a relay ignoring until)', async () => {
    const lists = [1, 2, 3, 4, 5].map((n) => list(n, 1_000 - n));
    const channel = new MemoryChannel(lists, { ignoreUntil: true });
    assert.equal(await replayHistory(channel, options), 'complete');
    // control, page 1, page 2 (no progress, one second: step back), page 3 (no progress: stop)
    assert.equal(channel.requests.length, 4);
  });

  test('a page timeout ends the replay with what it has', async () => {
    const lists = [1, 2, 3, 4].map((n) => list(n, 1_000 - n));
    const channel = new MemoryChannel(lists, { endOn: (n) => (n === 3 ? { end: 'timeout' } : null) });
    assert.equal(await replayHistory(channel, options), 'complete');
    assert.equal(channel.requests.length, 3);
  });

  test('a failed control fetch still replays the notify lists', async () => {
    const channel = new MemoryChannel([list(1, 10)], { endOn: (n) => (n === 1 ? { end: 'closed', reason: 'error: no' } : null) });
    assert.equal(await replayHistory(channel, options), 'complete');
    assert.deepEqual(channel.delivered, [list(1, 10).id]);
  });

  test('a lost connection reports disconnected so the replay runs again next time', async () => {
    const channel = new MemoryChannel([list(1, 10)], { endOn: (n) => (n === 2 ? { end: 'disconnected' } : null) });
    assert.equal(await replayHistory(channel, options), 'disconnected');
  });
});
