import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { createRelayQuery, type RelayFilter } from './relay-query.ts';
import type { RelaySocketOptions } from '../nostr/relay-socket.ts';

type Script = (socket: FakeSocket, frame: unknown[]) => void;

/** Scripted relays by URL: what each answers to our REQ. A URL without a script never opens. */
const scripts = new Map<string, Script>();

class FakeSocket extends EventEmitter {
  static readonly opened: FakeSocket[] = [];
  readyState = 0;
  readonly sent: unknown[][] = [];
  closedWith: 'close' | 'terminate' | null = null;

  constructor(
    readonly url: string,
    readonly options: RelaySocketOptions,
  ) {
    super();
    if (url.startsWith('bad:')) throw new SyntaxError('invalid url');
    FakeSocket.opened.push(this);
    if (scripts.has(url)) {
      queueMicrotask(() => {
        this.readyState = 1;
        this.emit('open');
      });
    }
  }

  send(data: string): void {
    const frame = JSON.parse(data) as unknown[];
    this.sent.push(frame);
    if (frame[0] === 'REQ') queueMicrotask(() => scripts.get(this.url)?.(this, frame));
  }

  reply(frame: unknown[]): void {
    this.emit('message', Buffer.from(JSON.stringify(frame)), false);
  }

  close(): void {
    this.closedWith = 'close';
    this.readyState = 3;
  }

  terminate(): void {
    this.closedWith = 'terminate';
    this.readyState = 3;
  }

  pause(): void {}
  resume(): void {}
}

const FILTER: RelayFilter = { kinds: [0], authors: ['a'.repeat(64)], limit: 1 };
const query = createRelayQuery({ WebSocketImpl: FakeSocket, maxEventsPerRelay: 3 });

afterEach(() => {
  scripts.clear();
  FakeSocket.opened.length = 0;
});

describe('createRelayQuery', () => {
  test('sends one REQ with the filter and collects events until EOSE, then CLOSEs', async () => {
    scripts.set('ws://one', (socket, [, subId]) => {
      socket.reply(['EVENT', subId, { id: 'e1' }]);
      socket.reply(['EVENT', 'someone-else', { id: 'ignored' }]);
      socket.reply(['NOTICE', 'hello']);
      socket.reply(['EOSE', subId]);
      socket.reply(['EVENT', subId, { id: 'after-eose' }]);
    });
    const events = await query(['ws://one'], FILTER, 5_000);
    assert.deepEqual(events, [{ id: 'e1' }]);
    const socket = FakeSocket.opened[0];
    assert.ok(socket);
    assert.deepEqual(socket.sent[0]?.slice(2), [FILTER]);
    assert.deepEqual(socket.sent[1], ['CLOSE', socket.sent[0][1]]);
    assert.equal(socket.closedWith, 'close');
    assert.equal(socket.options.handshakeTimeout, 5_000);
  });

  test('asks every relay once and merges their answers', async () => {
    scripts.set('ws://one', (socket, [, subId]) => {
      socket.reply(['EVENT', subId, { id: 'from-one' }]);
      socket.reply(['EOSE', subId]);
    });
    scripts.set('ws://two', (socket, [, subId]) => {
      socket.reply(['EVENT', subId, { id: 'from-two' }]);
      socket.reply(['EOSE', subId]);
    });
    const events = await query(['ws://one', 'ws://two', 'ws://one'], FILTER, 5_000);
    assert.deepEqual(events, [{ id: 'from-one' }, { id: 'from-two' }]);
    assert.equal(FakeSocket.opened.length, 2);
  });

  test('a silent relay is cut off at the deadline, keeping what the others sent', async () => {
    scripts.set('ws://fast', (socket, [, subId]) => {
      socket.reply(['EVENT', subId, { id: 'fast' }]);
      socket.reply(['EOSE', subId]);
    });
    scripts.set('ws://mute', () => {});
    const events = await query(['ws://fast', 'ws://mute', 'ws://never-opens'], FILTER, 30);
    assert.deepEqual(events, [{ id: 'fast' }]);
    const mute = FakeSocket.opened.find((s) => s.url === 'ws://mute');
    const neverOpened = FakeSocket.opened.find((s) => s.url === 'ws://never-opens');
    assert.equal(mute?.closedWith, 'close');
    assert.equal(neverOpened?.closedWith, 'terminate');
  });

  test('events received before a timeout are kept', async () => {
    scripts.set('ws://slow', (socket, [, subId]) => socket.reply(['EVENT', subId, { id: 'partial' }]));
    assert.deepEqual(await query(['ws://slow'], FILTER, 30), [{ id: 'partial' }]);
  });

  test('CLOSED, a socket error and a closed socket end that relay', async () => {
    scripts.set('ws://closed', (socket, [, subId]) => socket.reply(['CLOSED', subId, 'auth-required: no']));
    scripts.set('ws://error', (socket) => socket.emit('error', new Error('boom')));
    scripts.set('ws://hangup', (socket, [, subId]) => {
      socket.reply(['EVENT', subId, { id: 'before-hangup' }]);
      socket.emit('close', 1006, Buffer.alloc(0));
    });
    const started = Date.now();
    const events = await query(['ws://closed', 'ws://error', 'ws://hangup'], FILTER, 60_000);
    assert.deepEqual(events, [{ id: 'before-hangup' }]);
    assert.ok(Date.now() - started < 5_000, 'did not wait for the deadline');
  });

  test('a relay that ignores the limit is cut off at the per-relay cap', async () => {
    scripts.set('ws://flood', (socket, [, subId]) => {
      for (let i = 0; i < 100; i++) socket.reply(['EVENT', subId, { id: String(i) }]);
    });
    const events = await query(['ws://flood'], FILTER, 60_000);
    assert.equal(events.length, 3);
  });

  test('garbage frames are ignored', async () => {
    scripts.set('ws://junk', (socket, [, subId]) => {
      socket.emit('message', Buffer.from('not json'), false);
      socket.reply([42]);
      socket.reply(['EVENT', subId]);
      socket.reply(['EOSE', subId]);
    });
    assert.deepEqual(await query(['ws://junk'], FILTER, 60_000), []);
  });

  test('an unopenable URL and an empty relay list give nothing', async () => {
    assert.deepEqual(await query(['bad:url'], FILTER, 60_000), []);
    assert.deepEqual(await query([], FILTER, 60_000), []);
  });
});
