import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Metrics } from '../observability/metrics.ts';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { ManualClock } from '../util/clock.ts';
import { NtfyError } from './errors.ts';
import { appendUnifiedPushMessage } from './publish.ts';

const TTL_MS = 60_000;

test('appendUnifiedPushMessage stores the bytes as an ?up=1 publish would, and wakes subscribers', async () => {
  const store = await openSqliteStore({ path: ':memory:', clock: new ManualClock() });
  const metrics = new Metrics();
  try {
    const woken: string[] = [];
    store.onNtfyAppend((event) => woken.push(event.message.topic));
    const binary = Uint8Array.from([0xff, 0x00, 0x10, 0x80]);
    const stored = await appendUnifiedPushMessage(store, 'upLocalTopic12', binary, TTL_MS, metrics);
    assert.deepEqual([stored.message, stored.encoding], [Buffer.from(binary).toString('base64'), 'base64']);
    const text = await appendUnifiedPushMessage(store, 'upLocalTopic12', Buffer.from(' plain text '), TTL_MS);
    assert.deepEqual([text.message, text.encoding], [' plain text ', undefined]);
    assert.deepEqual(woken, ['upLocalTopic12', 'upLocalTopic12']);
    assert.equal((await metrics.ntfyPublished.get()).values.find((v) => v.labels.mode === 'local')?.value, 1);
    await assert.rejects(
      appendUnifiedPushMessage(store, 'bad topic', binary, TTL_MS),
      (err: unknown) => err instanceof NtfyError && err.code === 40009,
    );
    await assert.rejects(
      appendUnifiedPushMessage(store, 'upLocalTopic12', new Uint8Array(4097), TTL_MS),
      (err: unknown) => err instanceof NtfyError && err.code === 41304,
    );
  } finally {
    await store.close();
  }
});
