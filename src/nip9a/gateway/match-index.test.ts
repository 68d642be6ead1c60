import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { NostrEvent } from '../../nostr/event.ts';
import type { Nip9aFilter, Nip9aRegistration } from '../registration.ts';
import { MatchIndex } from './match-index.ts';
import { mergeFilters, MAX_FILTER_VALUES } from './relay-watch.ts';

const hex = (n: number): string => n.toString(16).padStart(64, '0');

function reg(d: string, filters: Nip9aFilter[], ignores: Nip9aFilter[] = []): Nip9aRegistration {
  return {
    event: { id: hex(0), pubkey: hex(1), created_at: 100, kind: 30390, tags: [], content: '', sig: '' },
    pubkey: hex(1),
    d,
    relays: ['wss://r.example.com/'],
    filters,
    ignores,
    callback: 'https://push.example.org/cb',
    includeEvent: false,
  };
}

function event(partial: Partial<NostrEvent>): NostrEvent {
  return { id: hex(99), pubkey: hex(50), created_at: 200, kind: 1, tags: [], content: '', sig: '', ...partial };
}

/** The reference: every registration checked in full. */
function scan(regs: Nip9aRegistration[], e: NostrEvent, index: MatchIndex): string[] {
  return regs.filter((r) => index.match(e).includes(r)).map((r) => r.d);
}

describe('NIP-9a match index', () => {
  test('finds registrations by id, tag value, author, kind and match-all filters, each once', () => {
    const index = new MatchIndex();
    const regs = [
      reg('by-tag', [{ kinds: [1], tags: { p: [hex(7)] } }]),
      reg('by-author', [{ authors: [hex(50)] }]),
      reg('by-kind', [{ kinds: [1, 7] }]),
      reg('by-id', [{ ids: [hex(99)] }]),
      reg('all', [{}]),
      reg('two-filters', [{ kinds: [1] }, { authors: [hex(50)] }]),
      reg('other-tag', [{ tags: { p: [hex(8)] } }]),
      reg('ignored', [{ kinds: [1] }], [{ tags: { t: ['x'] } }]),
    ];
    regs.forEach((r) => index.put(r.d, r));
    const matched = index
      .match(
        event({
          tags: [
            ['p', hex(7)],
            ['t', 'x'],
          ],
        }),
      )
      .map((r) => r.d)
      .sort();
    assert.deepEqual(matched, ['all', 'by-author', 'by-id', 'by-kind', 'by-tag', 'two-filters']);
    assert.deepEqual(scan(regs, event({ kind: 9, id: hex(98), pubkey: hex(51) }), index), ['all']);
  });

  test("an event carrying several of a filter's tag values, or a registration sharing a bucket with another, is matched once each", () => {
    const index = new MatchIndex();
    const both = reg('both-p', [{ tags: { p: [hex(7), hex(8), hex(7)] } }]);
    const also = reg('also-p', [{ tags: { p: [hex(8)] } }, { kinds: [1] }]);
    index.put('both-p', both);
    index.put('also-p', also);
    const e = event({
      tags: [
        ['p', hex(7)],
        ['p', hex(8)],
      ],
    });
    assert.deepEqual(
      index
        .match(e)
        .map((r) => r.d)
        .sort(),
      ['also-p', 'both-p'],
      'each registration once',
    );
    index.remove('both-p');
    assert.deepEqual(
      index.match(e).map((r) => r.d),
      ['also-p'],
      "the other registration's filing under p:8 survives the removal",
    );
  });

  test('replacing and removing a registration takes its filters out', () => {
    const index = new MatchIndex();
    index.put('a', reg('a', [{ kinds: [1] }]));
    index.put('a', reg('a', [{ kinds: [2] }]));
    assert.deepEqual(index.match(event({ kind: 1 })), []);
    assert.equal(index.match(event({ kind: 2 })).length, 1);
    assert.equal(index.remove('a'), true);
    assert.deepEqual(index.match(event({ kind: 2 })), []);
    assert.equal(index.size, 0);
  });

  test('filters of one shape merge into one wire filter, chunked', () => {
    const filters: Nip9aFilter[] = Array.from({ length: MAX_FILTER_VALUES + 10 }, (_, i) => ({ kinds: [1, 1111], tags: { p: [hex(i)] } }));
    filters.push({ kinds: [7], tags: { p: [hex(1)] } }, { authors: [hex(3)] });
    const wire = mergeFilters(filters, 500);
    assert.equal(wire.length, 4);
    assert.deepEqual(wire[0], { kinds: [1, 1111], '#p': filters.slice(0, MAX_FILTER_VALUES).map((f) => f.tags?.p?.[0]), since: 500 });
    assert.equal((wire[1]?.['#p'] as string[]).length, 10);
    assert.deepEqual(wire[3], { authors: [hex(3)], since: 500 });
  });
});
