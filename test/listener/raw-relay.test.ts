/**
 * The listener against a scripted relay (test/support/relay.ts `startRawRelay`): misbehaviour a
 * real relay never shows, frame by frame.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateSecretKey } from '../../src/nostr/keys.ts';
import { MAX_RELAY_FRAME_BYTES } from '../../src/nostr/relay-frames.ts';
import {
  LIVE_EVENTS_SUBSCRIPTION_ID,
  LIVE_NOTIFY_LISTS_SUBSCRIPTION_ID,
  LIVE_RESUME_OVERLAP_SECS,
} from '../../src/listener/subscriptions.ts';
import { isReqFor, startRawRelay, type RawRelay, type RawRelayConnection, type RawRelayHandler } from '../support/relay.ts';
import { counterValue, note, nowSecs, startListener } from './harness.ts';

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function rawRelay(handler: RawRelayHandler): Promise<RawRelay> {
  const relay = await startRawRelay(handler);
  cleanups.push(() => relay.stop());
  return relay;
}

/** Answers the startup replay with empty pages and hands live REQs to `onLive`. */
function withEmptyHistory(onLive: (connection: RawRelayConnection, frame: unknown[]) => void): RawRelayHandler {
  return (connection, frame) => {
    if (!isReqFor(frame)) return;
    if (String(frame[1]).startsWith('push-history')) connection.send(['EOSE', frame[1]]);
    else onLive(connection, frame);
  };
}

function liveReqCount(connection: RawRelayConnection): number {
  return connection.received.filter((f) => isReqFor(f, LIVE_EVENTS_SUBSCRIPTION_ID)).length;
}

describe('listener against a misbehaving relay', () => {
  test('garbage frames and invalid events are counted and dropped; a valid event after them arrives', async () => {
    const author = generateSecretKey();
    const valid = note(author, 'valid');
    const signed = note(author, 'tampered');
    const badSig = { ...signed, sig: (signed.sig[0] === 'a' ? 'b' : 'a') + signed.sig.slice(1) };
    const expired = note(author, 'expired', nowSecs() - 60, 1, [['expiration', String(nowSecs() - 10)]]);
    const manyTags = { ...note(author, 'tags'), tags: Array.from({ length: 10_000 }, (_, i) => ['t', String(i)]) };
    const sub = LIVE_EVENTS_SUBSCRIPTION_ID;

    const relay = await rawRelay(
      withEmptyHistory((connection, frame) => {
        if (frame[1] !== sub) return;
        connection.send('this is not json');
        connection.send('["EVENT"]');
        connection.send('[1,2,3]');
        connection.send('{"type":"EVENT"}');
        connection.send(['EOSE', 5]);
        connection.send(['EVENT', sub, 'not an event']);
        connection.send(['EVENT', sub, { id: 5 }]);
        connection.send(['EVENT', sub, manyTags]);
        connection.send(['EVENT', sub, badSig]);
        connection.send(['EVENT', sub, expired]);
        connection.send(['EVENT', 'not-our-subscription', note(author, 'stray')]);
        connection.send(['NOTICE', 'hello from a scripted relay']);
        connection.socket.send(Buffer.from([0, 1, 2]), { binary: true });
        connection.send(['EVENT', sub, valid]);
      }),
    );
    const { listener, sink, metrics } = await startListener([relay.url]);
    cleanups.push(() => listener.stop());
    await sink.waitForId(valid.id);
    assert.deepEqual(sink.ids(), [valid.id]);

    const protocol = (reason: string) => counterValue(metrics.relayProtocolErrors, { reason });
    assert.equal(await protocol('not_json'), 1);
    assert.equal(await protocol('bad_event'), 1);
    assert.equal(await protocol('not_array'), 2);
    assert.equal(await protocol('bad_eose'), 1);
    assert.equal(await protocol('binary_frame'), 1);
    assert.equal(await protocol('unknown_subscription'), 1);
    const invalid = (reason: string) => counterValue(metrics.eventsInvalid, { reason });
    assert.equal(await invalid('not-object'), 1);
    assert.equal(await invalid('bad-id'), 1);
    assert.equal(await invalid('too-many-tags'), 1);
    assert.equal(await invalid('bad-signature'), 1);
    assert.equal(await invalid('expired'), 1);
    assert.equal(listener.status()[0]?.reconnects, 0, 'the connection carried on');
  });

  test('a frame over the size limit is counted, the connection is rebuilt, and events flow again', async () => {
    const valid = note(generateSecretKey(), 'after the huge frame');
    const relay = await rawRelay(
      withEmptyHistory((connection, frame) => {
        if (frame[1] !== LIVE_EVENTS_SUBSCRIPTION_ID) return;
        if (relay.connections.indexOf(connection) === 0) connection.send(`["NOTICE","${'x'.repeat(MAX_RELAY_FRAME_BYTES)}"]`);
        else connection.send(['EVENT', LIVE_EVENTS_SUBSCRIPTION_ID, valid]);
      }),
    );
    const { listener, sink, metrics } = await startListener([relay.url]);
    cleanups.push(() => listener.stop());
    await sink.waitForId(valid.id);
    assert.equal(await counterValue(metrics.relayProtocolErrors, { reason: 'frame_too_large' }), 1);
    assert.ok(relay.connections.length >= 2);
  });

  test('a CLOSED storm: one resubscription, then the relay is reconnected with backoff; the listener survives', async () => {
    let storm = true;
    const valid = note(generateSecretKey(), 'after the storm');
    const relay = await rawRelay(
      withEmptyHistory((connection, frame) => {
        if (storm) connection.send(['CLOSED', frame[1], 'error: shutting down subscriptions']);
        else if (frame[1] === LIVE_EVENTS_SUBSCRIPTION_ID) connection.send(['EVENT', LIVE_EVENTS_SUBSCRIPTION_ID, valid]);
      }),
    );
    const { listener, sink, metrics } = await startListener([relay.url]);
    cleanups.push(() => listener.stop());
    let settled = false;
    listener.done.then(
      () => (settled = true),
      () => (settled = true),
    );

    const first = await relay.waitForConnection(1);
    await first.waitForReq(LIVE_EVENTS_SUBSCRIPTION_ID, 0);
    await relay.waitForConnection(2);
    assert.equal(liveReqCount(first), 2, 'the first connection saw the initial REQ and one resubscription');
    assert.ok((await counterValue(metrics.relayRecoveries, { trigger: 'closed', action: 'resubscribe' })) >= 1);
    assert.ok((await counterValue(metrics.relayRecoveries, { trigger: 'closed', action: 'reconnect' })) >= 1);

    storm = false;
    await sink.waitForId(valid.id);
    assert.equal(settled, false, 'the listener is still running');
    assert.ok((listener.status()[0]?.reconnects ?? 0) >= 1);
  });

  test('silence: the live REQs are sent again, then the connection is rebuilt', async () => {
    const relay = await rawRelay(withEmptyHistory((connection, frame) => connection.send(['EOSE', frame[1]])));
    const { listener, metrics } = await startListener([relay.url], { eventSilenceTimeoutSecs: 0.2 });
    cleanups.push(() => listener.stop());

    const first = await relay.waitForConnection(1);
    const initial = await first.waitForReq(LIVE_EVENTS_SUBSCRIPTION_ID);
    const again = await first.waitFor((f) => isReqFor(f, LIVE_EVENTS_SUBSCRIPTION_ID) && f !== initial);
    assert.ok(isReqFor(again));
    await first.waitFor((f) => isReqFor(f, LIVE_NOTIFY_LISTS_SUBSCRIPTION_ID) && first.received.indexOf(f) > first.received.indexOf(again));
    const since = (again[2] as { since: number }).since;
    assert.ok(Math.abs(since - (nowSecs() - 3_600)) <= 5, 'no cursor yet: one hour back');

    await relay.waitForConnection(2);
    assert.equal(await counterValue(metrics.relayRecoveries, { trigger: 'silence', action: 'resubscribe' }), 1);
    assert.equal(await counterValue(metrics.relayRecoveries, { trigger: 'silence', action: 'reconnect' }), 1);
  });

  test('reconnects after the relay drops the connection, resuming from the cursor', async () => {
    const author = generateSecretKey();
    const beforeDrop = note(author, 'before the drop', nowSecs() - 30);
    const afterDrop = note(author, 'after the drop');
    const relay = await rawRelay(
      withEmptyHistory((connection, frame) => {
        if (frame[1] !== LIVE_EVENTS_SUBSCRIPTION_ID) return;
        const index = relay.connections.indexOf(connection);
        connection.send(['EVENT', LIVE_EVENTS_SUBSCRIPTION_ID, index === 0 ? beforeDrop : afterDrop]);
      }),
    );
    const { listener, sink } = await startListener([relay.url]);
    cleanups.push(() => listener.stop());
    await sink.waitForId(beforeDrop.id);
    (await relay.waitForConnection(1)).close();

    const second = await relay.waitForConnection(2);
    const resumed = await second.waitForReq(LIVE_EVENTS_SUBSCRIPTION_ID);
    assert.equal((resumed[2] as { since: number }).since, beforeDrop.created_at - LIVE_RESUME_OVERLAP_SECS);
    await sink.waitForId(afterDrop.id);
    const status = listener.status()[0];
    assert.equal(status?.reconnects, 1);
    // The console's reconnect history: the dropped connection, when and why.
    assert.equal(status.disconnects?.length, 1);
    const [dropped] = status.disconnects ?? [];
    assert.ok(dropped && Math.abs(dropped.atMs - Date.now()) < 60_000, 'when');
    assert.equal(dropped.error, status.lastError, 'why: the error that ended it');
    assert.ok(dropped.error, 'an error is named');
  });

  test('auth-required: authenticates, then re-sends the replay and live REQs the relay refused', async () => {
    const valid = note(generateSecretKey(), 'for authenticated readers');
    const authed = new Set<RawRelayConnection>();
    const relay = await rawRelay((connection, frame) => {
      if (!Array.isArray(frame)) return;
      if (frame[0] === 'AUTH') {
        const event = frame[1] as { id: string; kind: number; tags: string[][] };
        const ok = event.kind === 22242 && event.tags.some((t) => t[0] === 'challenge' && t[1] === 'chal-1');
        if (ok) authed.add(connection);
        connection.send(['OK', event.id, ok, ok ? '' : 'invalid: bad challenge']);
        return;
      }
      if (!isReqFor(frame)) return;
      if (!authed.has(connection)) {
        if (connection.received.filter((f) => isReqFor(f)).length === 1) connection.send(['AUTH', 'chal-1']);
        connection.send(['CLOSED', frame[1], 'auth-required: this relay is for members']);
        return;
      }
      connection.send(['EOSE', frame[1]]);
      if (frame[1] === LIVE_EVENTS_SUBSCRIPTION_ID) connection.send(['EVENT', LIVE_EVENTS_SUBSCRIPTION_ID, valid]);
    });
    const { listener, sink, metrics } = await startListener([relay.url]);
    cleanups.push(() => listener.stop());
    await sink.waitForId(valid.id);
    assert.equal(listener.status()[0]?.authenticated, true);
    assert.equal(listener.status()[0]?.historicalDone, true);
    assert.equal(await counterValue(metrics.relayAuth, { outcome: 'accepted' }), 1);
    assert.equal(await counterValue(metrics.relayRecoveries), 0, 'auth-required is not a CLOSED recovery');
    assert.equal(relay.connections.length, 1);
  });
});
