/**
 * The listener against real relays (@nostr-relay/* behind test/support/relay.ts), with events
 * published by nostr-tools as an app would.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSecretKey } from '../../src/nostr/keys.ts';
import { LIVE_EVENTS_SUBSCRIPTION_ID, LIVE_RESUME_OVERLAP_SECS } from '../../src/listener/subscriptions.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { MemoryCursorStore, waitUntil } from './fakes.ts';
import { counterValue, note, nowSecs, publish, serviceSecret, startListener } from './harness.ts';

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function relay(options: Parameters<typeof startTestRelay>[0] = {}): Promise<TestRelay> {
  const started = await startTestRelay(options);
  cleanups.push(() => started.stop());
  return started;
}

function liveRequests(testRelay: TestRelay): unknown[][] {
  return testRelay.requests().filter((r) => r[0] === LIVE_EVENTS_SUBSCRIPTION_ID);
}

describe('listener against a real relay', () => {
  test('a published event reaches the sink as live, with its relay', async () => {
    const r = await relay();
    const { listener, sink } = await startListener([r.url]);
    cleanups.push(() => listener.stop());
    const event = note(generateSecretKey(), 'hello');
    await publish(r.url, event);
    await sink.waitForId(event.id);
    const accepted = sink.accepted.find((a) => a.event.id === event.id);
    assert.equal(accepted?.context, 'live');
    assert.equal(accepted.relay, r.url);
    assert.deepEqual(listener.status()[0]?.connected, true);
  });

  test('the same event on two relays reaches the sink once', async () => {
    const [a, b] = [await relay(), await relay()];
    const { listener, sink, metrics } = await startListener([a.url, b.url]);
    cleanups.push(() => listener.stop());
    const event = note(generateSecretKey(), 'twice');
    await Promise.all([publish(a.url, event), publish(b.url, event)]);
    await sink.waitForId(event.id);
    await waitUntil(async () => (await counterValue(metrics.eventsDuplicate)) >= 1, 5_000, 'second copy counted as duplicate');
    assert.equal(sink.ids().filter((id) => id === event.id).length, 1);
  });

  test("the service's own events are skipped", async () => {
    const r = await relay();
    const { listener, sink, metrics } = await startListener([r.url]);
    cleanups.push(() => listener.stop());
    const own = note(serviceSecret, 'from the service');
    const other = note(generateSecretKey(), 'from a user');
    await publish(r.url, own, other);
    await sink.waitForId(other.id);
    await waitUntil(async () => (await counterValue(metrics.eventsReceived)) >= 2, 5_000, 'both events read');
    assert.equal(sink.ids().includes(own.id), false);
  });

  test('the startup replay delivers control events in the window and every notify list, paged backwards', async () => {
    const r = await relay();
    const now = nowSecs();
    const user = generateSecretKey();
    const recent = note(user, 'ciphertext', now - 86_400, 3079);
    const tooOld = note(user, 'ciphertext', now - 8 * 86_400, 3079);
    // 8 lists from 8 keys, older than the live lookback; two pairs share a second across page edges.
    const times = [7_200, 7_300, 7_300, 7_400, 7_500, 7_500, 7_600, 7_700];
    const lists = times.map((ago, i) =>
      note(generateSecretKey(), '', now - ago, 30000, [
        ['d', 'notify'],
        ['p', String(i).repeat(64).slice(0, 64)],
      ]),
    );
    const notANotifyList = note(generateSecretKey(), '', now - 7_000, 30000, [['d', 'friends']]);
    await publish(r.url, recent, tooOld, notANotifyList, ...lists);

    const { listener, sink } = await startListener([r.url], { notifyListHistoryLimit: 3 });
    cleanups.push(() => listener.stop());
    await waitUntil(() => listener.status()[0]?.historicalDone === true, 10_000, 'replay done');

    const delivered = sink.accepted.filter((a) => a.context === 'historical').map((a) => a.event.id);
    assert.deepEqual([...delivered].sort(), [recent.id, ...lists.map((l) => l.id)].sort(), 'each exactly once');
    assert.equal(sink.ids().includes(tooOld.id), false);
    assert.equal(sink.ids().includes(notANotifyList.id), false);
    const pages = r.requests().filter((req) => String(req[0]).startsWith('push-history-lists-'));
    assert.ok(pages.length >= 3, `paged (${pages.length} pages)`);
    assert.ok(pages.slice(1).every((p) => typeof (p[1] as { until?: number }).until === 'number'));
  });

  test('a restart resumes from the stored cursor minus the overlap', async () => {
    const r = await relay();
    const store = new MemoryCursorStore();
    const first = await startListener([r.url], { store });
    const author = generateSecretKey();
    const e1 = note(author, 'before the restart');
    await publish(r.url, e1);
    await first.sink.waitForId(e1.id);
    await first.listener.stop();
    assert.equal(store.cursors.get(r.url), e1.created_at, 'cursor flushed on stop');

    const missed = note(author, 'published while stopped', e1.created_at - 300);
    await publish(r.url, missed);
    const requestsBefore = liveRequests(r).length;
    const second = await startListener([r.url], { store });
    cleanups.push(() => second.listener.stop());
    await second.sink.waitForId(missed.id);
    assert.equal(second.sink.accepted.find((a) => a.event.id === missed.id)?.context, 'live');
    const resumed = liveRequests(r)[requestsBefore];
    assert.equal((resumed?.[1] as { since?: number }).since, e1.created_at - LIVE_RESUME_OVERLAP_SECS);
  });

  test('authenticates to a relay that sends a NIP-42 challenge', async () => {
    const r = await relay({ auth: true });
    const { listener, sink, servicePubkey } = await startListener([r.url]);
    cleanups.push(() => listener.stop());
    await waitUntil(() => r.authenticatedPubkeys().includes(servicePubkey), 5_000, 'relay saw our AUTH');
    await waitUntil(() => listener.status()[0]?.authenticated === true, 5_000, 'status authenticated');
    const event = note(generateSecretKey(), 'after auth');
    await publish(r.url, event);
    await sink.waitForId(event.id);
  });

  test('reconnects after the relay restarts and keeps delivering', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nostr-push-relay-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const dbPath = join(dir, 'relay.sqlite');
    const original = await startTestRelay({ dbPath });
    const { listener, sink } = await startListener([original.url]);
    cleanups.push(() => listener.stop());
    const before = note(generateSecretKey(), 'before');
    await publish(original.url, before);
    await sink.waitForId(before.id);
    await original.stop();
    await waitUntil(() => listener.status()[0]?.connected === false, 5_000, 'disconnect seen');

    const restarted = await relay({ dbPath, port: original.port });
    const afterRestart = note(generateSecretKey(), 'after');
    await publish(restarted.url, afterRestart);
    await sink.waitForId(afterRestart.id);
    assert.ok((listener.status()[0]?.reconnects ?? 0) >= 1);
    assert.equal(sink.ids().filter((id) => id === before.id).length, 1, 'the replayed old event is deduped');
  });

  test('start() resolves while a relay is down and the listener connects once it is up', async () => {
    const probe = await startTestRelay();
    const port = probe.port;
    await probe.stop();
    const { listener, sink } = await startListener([`ws://127.0.0.1:${port}`]);
    cleanups.push(() => listener.stop());
    assert.equal(listener.status()[0]?.connected, false);
    const r = await relay({ port });
    await waitUntil(() => listener.status()[0]?.connected === true, 5_000, 'connected after the relay came up');
    const event = note(generateSecretKey(), 'late relay');
    await publish(r.url, event);
    await sink.waitForId(event.id);
  });
});
