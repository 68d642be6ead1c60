import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CoalesceEvent, CoalescePolicy, GroupClaim } from '../../../src/store/port-coalesce.ts';
import { coalesceGroupId } from '../../../src/store/port-coalesce.ts';
import type { StorePort } from '../../../src/store/port.ts';
import { SECOND_MS, type ContractContext } from './context.ts';

/**
 * Like/repost coalescing (port-coalesce.ts). Time is driven by the manual clock, which both
 * adapters read for "now"; the only real wait is the dangling-entry test, which needs a group
 * record to reach its physical TTL (Redis expires keys by its own clock) and uses a two-second
 * TTL with a polling wait for it.
 *
 * The manual clock starts at 2026-01-01T00:00:00Z, a multiple of every window used here, so the
 * first bucket starts at the first event.
 */

const OWNER = 'a1'.repeat(32);
const OTHER_OWNER = 'a2'.repeat(32);
const TARGET = `e:${'f1'.repeat(32)}`;
const OTHER_TARGET = `a:34236:${'c1'.repeat(32)}:my-vine`;
const WINDOW_SECS = 60;
const LEASE_SECS = 30;

const POLICY: CoalescePolicy = {
  windowSecs: WINDOW_SECS,
  immediateLimit: 3,
  groupTtlSecs: 3600,
  graceSecs: 600,
  throttleCapacity: 20,
  throttleRefillSecs: 60,
  dailyWindowSecs: 86_400,
  dailyCap: 20,
};

let counter = 0;
/** A distinct 64-hex id per call: actor keys and event ids. */
function hexId(prefix: string): string {
  counter += 1;
  return `${prefix}${counter.toString(16).padStart(64 - prefix.length, '0')}`;
}

function like(overrides: Partial<CoalesceEvent> = {}): CoalesceEvent {
  return {
    type: 'like',
    owner: OWNER,
    target: TARGET,
    actor: hexId('ac'),
    eventId: hexId('ee'),
    eventKind: 7,
    createdAt: 1_767_225_600,
    references: { referencedEventId: 'f1'.repeat(32) },
    ...overrides,
  };
}

function nowSecs(ctx: ContractContext): number {
  return Math.floor(ctx.clock().nowMs() / SECOND_MS);
}

async function ingestMany(store: StorePort, count: number, overrides: Partial<CoalesceEvent> = {}, policy: CoalescePolicy = POLICY) {
  const results = [];
  for (let i = 0; i < count; i++) results.push(await store.ingestCoalesceEvent(like(overrides), policy));
  return results;
}

async function claimOrFail(store: StorePort, leaseSecs = LEASE_SECS): Promise<GroupClaim> {
  const { claim } = await store.claimDueCoalesceGroup(leaseSecs);
  assert.ok(claim, 'a due group is claimed');
  return claim;
}

/** Poll (never a fixed sleep) until `check` holds; for expiry that only real time brings. */
async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export function coalesceContract(ctx: ContractContext): void {
  describe('coalescing: ingest', () => {
    test('the first immediateLimit events of a bucket are immediate, the rest buffered, all in one group', async () => {
      const store = ctx.store();
      const start = nowSecs(ctx);
      const results = await ingestMany(store, 5);
      assert.deepEqual(
        results.map((r) => r.disposition),
        ['immediate', 'immediate', 'immediate', 'buffered', 'buffered'],
      );
      const groupId = coalesceGroupId('like', OWNER, TARGET, Math.floor(start / WINDOW_SECS));
      assert.ok(results.every((r) => r.groupId === groupId && !r.replayed));
      const group = await store.readCoalesceGroup(groupId);
      assert.ok(group);
      assert.equal(group.immediate, 3);
      assert.equal(group.pending, 2);
      assert.equal(group.distinctActors, 2);
      assert.equal(group.type, 'like');
      assert.equal(group.owner, OWNER);
      assert.equal(group.target, TARGET);
      assert.equal(group.eventKind, 7);
      assert.equal(group.dueAtSecs, start + WINDOW_SECS, 'due at the end of the bucket');
      assert.equal(group.expiresAtSecs, start + POLICY.groupTtlSecs);
      assert.equal(group.leaseToken, null);
      assert.deepEqual(group.references, { referencedEventId: 'f1'.repeat(32) });
    });

    test('a buffered group keeps its first buffered actor and event, the newest created_at and the distinct actors', async () => {
      const store = ctx.store();
      await ingestMany(store, 3);
      const first = like({ createdAt: 2000 });
      const again = like({ actor: first.actor, createdAt: 3000 });
      const other = like({ createdAt: 2500 });
      const [r1, r2, r3] = [
        await store.ingestCoalesceEvent(first, POLICY),
        await store.ingestCoalesceEvent(again, POLICY),
        await store.ingestCoalesceEvent(other, POLICY),
      ];
      assert.deepEqual([r1.disposition, r2.disposition, r3.disposition], ['buffered', 'buffered', 'buffered']);
      const group = await store.readCoalesceGroup(r1.groupId);
      assert.ok(group);
      assert.equal(group.pending, 3);
      assert.equal(group.distinctActors, 2, 'the same actor twice counts once');
      assert.equal(group.firstActor, first.actor);
      assert.equal(group.firstEvent, first.eventId);
      assert.equal(group.lastAt, 3000);
    });

    test('a replay returns the original decision and group without counting again', async () => {
      const store = ctx.store();
      const events = [like(), like(), like(), like()];
      const original = [];
      for (const e of events) original.push(await store.ingestCoalesceEvent(e, POLICY));
      for (const [i, e] of events.entries()) {
        const replay = await store.ingestCoalesceEvent(e, POLICY);
        assert.equal(replay.disposition, original[i]?.disposition);
        assert.equal(replay.groupId, original[i]?.groupId);
        assert.equal(replay.replayed, true);
      }
      const group = await store.readCoalesceGroup(original[0]?.groupId ?? '');
      assert.equal(group?.immediate, 3);
      assert.equal(group.pending, 1);
      assert.equal(group.distinctActors, 1);
    });

    test('the same event for another recipient is decided on its own', async () => {
      const store = ctx.store();
      const event = like();
      await store.ingestCoalesceEvent(event, POLICY);
      const other = await store.ingestCoalesceEvent({ ...event, owner: OTHER_OWNER }, POLICY);
      assert.equal(other.replayed, false);
      assert.equal(other.disposition, 'immediate');
      assert.notEqual(other.groupId, (await store.ingestCoalesceEvent(event, POLICY)).groupId);
    });

    test('a new bucket is a new group with fresh immediate slots; a replay keeps the original bucket', async () => {
      const store = ctx.store();
      const policy = { ...POLICY, immediateLimit: 1 };
      const early = like();
      const [first, second] = [await store.ingestCoalesceEvent(early, policy), await store.ingestCoalesceEvent(like(), policy)];
      assert.deepEqual([first.disposition, second.disposition], ['immediate', 'buffered']);
      ctx.clock().advance(WINDOW_SECS * SECOND_MS);
      const next = await store.ingestCoalesceEvent(like(), policy);
      assert.equal(next.disposition, 'immediate');
      assert.notEqual(next.groupId, first.groupId);
      const replay = await store.ingestCoalesceEvent(early, policy);
      assert.deepEqual(replay, { disposition: 'immediate', groupId: first.groupId, replayed: true });
    });

    test('type and target each make their own group', async () => {
      const store = ctx.store();
      const likeOnPost = await store.ingestCoalesceEvent(like(), POLICY);
      const repostOfPost = await store.ingestCoalesceEvent(like({ type: 'repost', eventKind: 16 }), POLICY);
      const likeOnVideo = await store.ingestCoalesceEvent(like({ target: OTHER_TARGET }), POLICY);
      assert.equal(new Set([likeOnPost.groupId, repostOfPost.groupId, likeOnVideo.groupId]).size, 3);
      assert.equal((await store.readCoalesceGroup(repostOfPost.groupId))?.type, 'repost');
    });

    test('zaps (issue 21) group on their own, counting payers as actors', async () => {
      const store = ctx.store();
      const payer = hexId('ac');
      const likeOnPost = await store.ingestCoalesceEvent(like(), POLICY);
      const zaps = [];
      for (let i = 0; i < 2; i++) zaps.push(await store.ingestCoalesceEvent(like({ type: 'zap', eventKind: 9735, actor: payer }), POLICY));
      assert.notEqual(zaps[0]?.groupId, likeOnPost.groupId);
      assert.equal(zaps[0]?.groupId, zaps[1]?.groupId);
      const group = await store.readCoalesceGroup(zaps[0]?.groupId ?? '');
      assert.equal(group?.type, 'zap');
    });

    test('the coordinate reference fields are stored together, and filled in when a later event has them', async () => {
      const store = ctx.store();
      const policy = { ...POLICY, immediateLimit: 1 };
      const first = await store.ingestCoalesceEvent(like({ target: OTHER_TARGET, references: {} }), policy);
      const coordinate = {
        referencedEventId: 'f2'.repeat(32),
        referencedAddress: `34236:${'c1'.repeat(32)}:my-vine`,
        referencedKind: '34236',
        referencedAuthorPubkey: 'c1'.repeat(32),
        referencedDTag: 'my-vine',
      };
      await store.ingestCoalesceEvent(like({ target: OTHER_TARGET, references: coordinate }), policy);
      await store.ingestCoalesceEvent(like({ target: OTHER_TARGET, references: { referencedEventId: 'f3'.repeat(32) } }), policy);
      assert.deepEqual((await store.readCoalesceGroup(first.groupId))?.references, coordinate);
    });

    test('an empty token bucket demotes a would-be immediate into the buffer; a refilled one sends again', async () => {
      const store = ctx.store();
      const policy = { ...POLICY, throttleCapacity: 1, throttleRefillSecs: 3600, windowSecs: 7200 };
      const first = await store.ingestCoalesceEvent(like(), policy);
      const demoted = like();
      const second = await store.ingestCoalesceEvent(demoted, policy);
      assert.equal(first.disposition, 'immediate');
      assert.equal(second.disposition, 'throttled');
      const group = await store.readCoalesceGroup(second.groupId);
      assert.equal(group?.immediate, 1, 'a demoted event takes no immediate slot');
      assert.equal(group.pending, 1);
      assert.deepEqual(await store.ingestCoalesceEvent(demoted, policy), {
        disposition: 'buffered',
        groupId: second.groupId,
        replayed: true,
      });
      ctx.clock().advance(3600 * SECOND_MS);
      const refilled = await store.ingestCoalesceEvent(like(), policy);
      assert.equal(refilled.disposition, 'immediate');
      assert.equal((await store.readCoalesceGroup(refilled.groupId))?.immediate, 2);
    });

    test('the token bucket is per recipient', async () => {
      const store = ctx.store();
      const policy = { ...POLICY, throttleCapacity: 1, throttleRefillSecs: 3600 };
      assert.equal((await store.ingestCoalesceEvent(like(), policy)).disposition, 'immediate');
      assert.equal((await store.ingestCoalesceEvent(like(), policy)).disposition, 'throttled');
      assert.equal((await store.ingestCoalesceEvent(like({ owner: OTHER_OWNER }), policy)).disposition, 'immediate');
    });

    test('at the daily cap immediates buffer until the oldest emission leaves the window', async () => {
      const store = ctx.store();
      const policy = { ...POLICY, dailyCap: 2, dailyWindowSecs: 3600, windowSecs: 7200 };
      const results = await ingestMany(store, 3, {}, policy);
      assert.deepEqual(
        results.map((r) => r.disposition),
        ['immediate', 'immediate', 'throttled'],
      );
      const group = await store.readCoalesceGroup(results[2]?.groupId ?? '');
      assert.equal(group?.immediate, 2);
      assert.equal(group.pending, 1);
      ctx.clock().advance(3601 * SECOND_MS);
      assert.equal((await store.ingestCoalesceEvent(like(), policy)).disposition, 'immediate');
    });

    test('no budget is consulted once the immediate slots are used up', async () => {
      const store = ctx.store();
      const policy = { ...POLICY, immediateLimit: 1, throttleCapacity: 2, throttleRefillSecs: 3600 };
      const results = await ingestMany(store, 4, {}, policy);
      assert.deepEqual(
        results.map((r) => r.disposition),
        ['immediate', 'buffered', 'buffered', 'buffered'],
      );
      assert.equal(
        (await store.ingestCoalesceEvent(like({ target: OTHER_TARGET }), policy)).disposition,
        'immediate',
        'the second token is still there',
      );
    });
  });

  describe('coalescing: recipient tokens', () => {
    const tight = { ...POLICY, throttleCapacity: 2, throttleRefillSecs: 60 };

    test('a summary takes a token once per member; an empty bucket says when the next token comes', async () => {
      const store = ctx.store();
      assert.deepEqual(await store.consumeRecipientToken(OWNER, 'group-a', tight), { status: 'spent' });
      assert.deepEqual(
        await store.consumeRecipientToken(OWNER, 'group-a', tight),
        { status: 'spent' },
        'a recovered flush reuses its reservation',
      );
      assert.deepEqual(await store.consumeRecipientToken(OWNER, 'group-b', tight), { status: 'spent' });
      assert.deepEqual(await store.consumeRecipientToken(OWNER, 'group-c', tight), { status: 'bucket_empty', retryAfterSecs: 60 });
      ctx.clock().advance(30 * SECOND_MS);
      assert.deepEqual(
        await store.consumeRecipientToken(OWNER, 'group-c', tight),
        { status: 'bucket_empty', retryAfterSecs: 30 },
        'half a token refilled',
      );
      ctx.clock().advance(30 * SECOND_MS);
      assert.deepEqual(await store.consumeRecipientToken(OWNER, 'group-c', tight), { status: 'spent' });
      assert.deepEqual(
        await store.consumeRecipientToken(OTHER_OWNER, 'group-c', tight),
        { status: 'spent' },
        'another recipient has its own bucket',
      );
    });

    test('a refund gives back the token and the slot once; a member without a slot gets nothing', async () => {
      const store = ctx.store();
      await store.consumeRecipientToken(OWNER, 'group-a', tight);
      await store.consumeRecipientToken(OWNER, 'group-b', tight);
      await store.refundRecipientToken(OWNER, 'group-b', tight);
      await store.refundRecipientToken(OWNER, 'group-b', tight);
      await store.refundRecipientToken(OWNER, 'never-spent', tight);
      assert.deepEqual(await store.consumeRecipientToken(OWNER, 'group-c', tight), { status: 'spent' }, 'the refunded token');
      assert.deepEqual(
        await store.consumeRecipientToken(OWNER, 'group-d', tight),
        { status: 'bucket_empty', retryAfterSecs: 60 },
        'only one came back',
      );
    });

    test('the emission window caps summaries and immediates together and says when a slot frees', async () => {
      const store = ctx.store();
      const capped = { ...POLICY, dailyCap: 2, dailyWindowSecs: 3600 };
      assert.equal((await store.ingestCoalesceEvent(like(), capped)).disposition, 'immediate');
      ctx.clock().advance(100 * SECOND_MS);
      assert.deepEqual(await store.consumeRecipientToken(OWNER, 'group-a', capped), { status: 'spent' });
      assert.deepEqual(await store.consumeRecipientToken(OWNER, 'group-b', capped), { status: 'daily_capped', retryAfterSecs: 3500 });
      assert.deepEqual(await store.consumeRecipientToken(OWNER, 'group-a', capped), { status: 'spent' }, 'its own slot is still its own');
      ctx.clock().advance(3500 * SECOND_MS);
      assert.deepEqual(await store.consumeRecipientToken(OWNER, 'group-b', capped), { status: 'spent' }, 'the immediate left the window');
    });

    test('a refund frees the emission slot', async () => {
      const store = ctx.store();
      const one = { ...POLICY, dailyCap: 1 };
      await store.consumeRecipientToken(OWNER, 'group-a', one);
      assert.equal((await store.consumeRecipientToken(OWNER, 'group-b', one)).status, 'daily_capped');
      await store.refundRecipientToken(OWNER, 'group-a', one);
      assert.deepEqual(await store.consumeRecipientToken(OWNER, 'group-b', one), { status: 'spent' });
    });
  });

  describe('coalescing: flush outbox', () => {
    test('a buffered group is claimable from its deadline on, under a lease token', async () => {
      const store = ctx.store();
      const start = nowSecs(ctx);
      const [, , , buffered] = await ingestMany(store, 4);
      assert.equal((await store.claimDueCoalesceGroup(LEASE_SECS)).claim, null, 'not before the deadline');
      assert.equal(await store.oldestCoalesceDueAgeSecs(), 0);
      ctx.clock().advance((WINDOW_SECS + 100) * SECOND_MS);
      assert.equal(await store.oldestCoalesceDueAgeSecs(), 100);
      const result = await store.claimDueCoalesceGroup(LEASE_SECS);
      assert.deepEqual({ ...result, claim: null }, { claim: null, expiredDropped: 0, danglingDropped: 0 });
      assert.equal(result.claim?.groupId, buffered?.groupId);
      assert.equal(result.claim?.claimedAtSecs, start + WINDOW_SECS + 100);
      assert.equal((await store.readCoalesceGroup(buffered?.groupId ?? ''))?.leaseToken, result.claim.leaseToken);
      assert.equal((await store.claimDueCoalesceGroup(LEASE_SECS)).claim, null, 'a leased group is not claimed twice');
      assert.equal(await store.oldestCoalesceDueAgeSecs(), 0, 'nothing left due');
    });

    test('an immediate-only group never enters the outbox', async () => {
      const store = ctx.store();
      await ingestMany(store, 3);
      ctx.clock().advance(2 * WINDOW_SECS * SECOND_MS);
      assert.equal((await store.claimDueCoalesceGroup(LEASE_SECS)).claim, null);
    });

    test('groups are claimed in deadline order', async () => {
      const store = ctx.store();
      const policy = { ...POLICY, immediateLimit: 1 };
      const [, early] = await ingestMany(store, 2, { target: OTHER_TARGET }, policy);
      ctx.clock().advance(WINDOW_SECS * SECOND_MS);
      const [, late] = await ingestMany(store, 2, {}, policy);
      ctx.clock().advance(2 * WINDOW_SECS * SECOND_MS);
      assert.equal((await claimOrFail(store)).groupId, early?.groupId);
      assert.equal((await claimOrFail(store)).groupId, late?.groupId);
    });

    test('complete needs the lease token: an impostor is refused and changes nothing', async () => {
      const store = ctx.store();
      await ingestMany(store, 4);
      ctx.clock().advance(WINDOW_SECS * SECOND_MS);
      const claim = await claimOrFail(store);
      assert.equal(await store.completeCoalesceGroup({ ...claim, leaseToken: 'impostor' }), 'not_owner');
      assert.equal(await store.completeCoalesceGroup({ ...claim, leaseToken: 'impostor' }, 5), 'not_owner');
      assert.equal((await store.readCoalesceGroup(claim.groupId))?.pending, 1);
      assert.equal(await store.completeCoalesceGroup(claim), 'completed');
      assert.equal(await store.readCoalesceGroup(claim.groupId), null, 'the group and its actors are gone');
      assert.equal(await store.completeCoalesceGroup(claim), 'missing');
      ctx.clock().advance(LEASE_SECS * 10 * SECOND_MS);
      assert.equal((await store.claimDueCoalesceGroup(LEASE_SECS)).claim, null, 'a completed group never comes back');
    });

    test('a requeued group is due again after the delay, under a new token', async () => {
      const store = ctx.store();
      await ingestMany(store, 4);
      ctx.clock().advance(WINDOW_SECS * SECOND_MS);
      const first = await claimOrFail(store);
      assert.equal(await store.completeCoalesceGroup(first, 5), 'requeued');
      assert.equal((await store.readCoalesceGroup(first.groupId))?.leaseToken, null, 'the lease is released');
      assert.equal((await store.claimDueCoalesceGroup(LEASE_SECS)).claim, null);
      assert.equal(await store.oldestCoalesceDueAgeSecs(), 0);
      ctx.clock().advance(5 * SECOND_MS);
      const second = await claimOrFail(store);
      assert.equal(second.groupId, first.groupId);
      assert.notEqual(second.leaseToken, first.leaseToken);
      assert.equal(await store.completeCoalesceGroup(first), 'not_owner', 'the first flush no longer owns it');
      assert.equal(await store.completeCoalesceGroup(second, 0), 'requeued');
      assert.equal((await claimOrFail(store)).groupId, first.groupId, 'a zero delay gives it back at once');
    });

    test('a requeue that would reach the logical lifetime drops the group instead', async () => {
      const store = ctx.store();
      const policy = { ...POLICY, groupTtlSecs: 2 * WINDOW_SECS };
      await ingestMany(store, 4, {}, policy);
      ctx.clock().advance(WINDOW_SECS * SECOND_MS);
      const claim = await claimOrFail(store);
      assert.equal(await store.completeCoalesceGroup(claim, WINDOW_SECS - 1), 'requeued');
      ctx.clock().advance((WINDOW_SECS - 1) * SECOND_MS);
      const again = await claimOrFail(store);
      assert.equal(await store.completeCoalesceGroup(again, 1), 'expired', 'next >= expires_at');
      assert.equal(await store.readCoalesceGroup(claim.groupId), null);
      ctx.clock().advance(WINDOW_SECS * SECOND_MS);
      assert.equal((await store.claimDueCoalesceGroup(LEASE_SECS)).claim, null);
    });
  });

  describe('coalescing: reconciliation', () => {
    test('an expired lease returns the group to the outbox, and the next claim takes it under a new token', async () => {
      const store = ctx.store();
      await ingestMany(store, 4);
      ctx.clock().advance(WINDOW_SECS * SECOND_MS);
      const crashed = await claimOrFail(store);
      ctx.clock().advance((LEASE_SECS - 1) * SECOND_MS);
      assert.equal((await store.claimDueCoalesceGroup(LEASE_SECS)).claim, null, 'a live lease is respected');
      ctx.clock().advance(SECOND_MS);
      const recovered = await store.claimDueCoalesceGroup(LEASE_SECS);
      assert.equal(recovered.claim?.groupId, crashed.groupId);
      assert.notEqual(recovered.claim.leaseToken, crashed.leaseToken);
      assert.equal(recovered.expiredDropped, 0);
      assert.equal(await store.completeCoalesceGroup(crashed), 'not_owner');
      assert.equal(await store.completeCoalesceGroup(recovered.claim), 'completed');
    });

    test('an expired lease past the logical lifetime drops the group and counts it', async () => {
      const store = ctx.store();
      const policy = { ...POLICY, groupTtlSecs: 2 * WINDOW_SECS };
      await ingestMany(store, 4, {}, policy);
      ctx.clock().advance(WINDOW_SECS * SECOND_MS);
      const crashed = await claimOrFail(store, 2 * WINDOW_SECS);
      ctx.clock().advance(2 * WINDOW_SECS * SECOND_MS);
      const result = await store.claimDueCoalesceGroup(LEASE_SECS);
      assert.deepEqual(result, { claim: null, expiredDropped: 1, danglingDropped: 0 });
      assert.equal(await store.readCoalesceGroup(crashed.groupId), null);
      assert.deepEqual(
        await store.claimDueCoalesceGroup(LEASE_SECS),
        { claim: null, expiredDropped: 0, danglingDropped: 0 },
        'counted once',
      );
    });

    test('a due entry whose group record reached its physical TTL is dropped and counted', async () => {
      const store = ctx.store();
      // Physical TTL = groupTtl + grace = 2 s, the shortest a Redis EXPIRE in seconds allows here.
      const policy = { ...POLICY, windowSecs: 1, groupTtlSecs: 1, graceSecs: 1, immediateLimit: 1 };
      const [, buffered] = await ingestMany(store, 2, {}, policy);
      ctx.clock().advance(3 * SECOND_MS);
      await until(async () => (await store.readCoalesceGroup(buffered?.groupId ?? '')) === null, 5_000, 'the group record to expire');
      assert.deepEqual(await store.claimDueCoalesceGroup(LEASE_SECS), { claim: null, expiredDropped: 0, danglingDropped: 1 });
      assert.deepEqual(await store.claimDueCoalesceGroup(LEASE_SECS), { claim: null, expiredDropped: 0, danglingDropped: 0 });
    });
  });
}
