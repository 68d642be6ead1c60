/**
 * The batched steps of routing one content event on Redis: one read of every recipient's gate
 * state (`readRecipients`: per user one script for their token set, removal intents and
 * preferences, `readRecipientSlot-3`, then the candidates' records per token shard as tokens.ts
 * reads them; in the divine layout one script, `readRecipients-3`), and {@link claimAndEnqueue}
 * claims and queues every delivery that passed. Keys and values are the single-recipient
 * operations' own (`keys.ts`, the queue layout of queues.ts), so both paths read and write the
 * same records.
 *
 * claimAndEnqueue: a claim (`dedup:{eventId}:{recipient}`, in the recipient's slot `{u:…}` in the
 * cluster layout; or a NIP-9a receipt key) and its queue item (in the item's queue shard) are in
 * different slots, so taking them is three one-slot steps, in this order:
 *
 *   1. stage (`stageDeliveries-3`, per queue shard): the item is written under its id with the
 *      claim owner (`pendingOwner`) and put in the shard's `pending` set, in no lane. An id
 *      already queued is left alone; an id already staged keeps its earlier owner and payload,
 *      and that owner is what the next steps use.
 *   2. claim (`takeClaim-1`, per claim key): `SET NX EX` under the staged owner, or find the
 *      claim already held by that owner.
 *   3. commit or discard (`commitDeliveries-6`, per queue shard): claim ours → the staged item
 *      moves to its lane's ready set; claim someone else's → the staged item is removed.
 *
 * Invariant: a claim taken here is never held without its item queued or staged under the
 * claim's owner (staging comes first). A crash (or an error) between the steps leaves a staged
 * item, and the caller's retry (the inbound event's replay) completes it exactly once: step 1
 * returns the earlier owner, step 2 finds the claim held by that owner (or takes it under that
 * owner), step 3 commits the one item. A replay after everything completed stages a new item,
 * finds the claim held by the first owner and discards it: nothing is queued twice, even when
 * the first item was already delivered and acknowledged. Step 3 applies only while the item is
 * still staged under that owner, so a repeated or concurrent call commits an item once, and only
 * the call that committed it answers true. A staged item nobody retries is dropped by step 1 of
 * later calls once its expiry (the claim lifetime) passed.
 *
 * In the divine layout (one Redis, every key on one server) the three steps run as one script,
 * `claimAndEnqueue-6` ({@link claimAndEnqueueInOneStep}): one round trip per queue shard instead
 * of three, and no EVALSHA per claim. Each entry ends as the three steps would leave it (an
 * earlier call's staged item is committed or discarded under its staged owner), and being atomic
 * it never leaves a staged item behind. The cluster layout's steps stay as they are.
 *
 * With `redis.wait_replicas` (`replication.ts`), each step ends with a WAIT on every master it
 * wrote to, so a failover between two steps cannot undo a step the next one builds on: the
 * stage before its claim, the claim before its commit, the commit before the caller moves on.
 */
import type { ClaimedDelivery, EnqueueItem, QueueName, RecipientGateState } from '../port.ts';
import { expirySeconds, prefixed, type RedisContext } from './context.ts';
import { preferenceKindsOf } from './bell-pages.ts';
import { devicesFromRecords, intentsOf, readTokenRecords, type Candidates, type TokenRecord } from './tokens.ts';
import { DEFAULT_LANE } from '../lanes.ts';
import { itemShardKeys, payloadJson, perShard } from './queue-shards.ts';
import type { InboxCountEntry, RecipientsCountedInbox } from '../port-inbox.ts';
import { activeIds, countInboxNotifications, hintChannel } from './inbox.ts';

export async function readRecipients(ctx: RedisContext, pubkeys: readonly string[]): Promise<RecipientGateState[]> {
  if (pubkeys.length === 0) return [];
  if (ctx.keys.layout === 'divine') return readRecipientsInOneStep(ctx, pubkeys);
  // Two rounds of one-slot calls: per user one script for what their slot holds (token set,
  // removal intents, preferences; `readRecipientSlot-3`), all of them concurrently (one write
  // when auto-pipelined); then the candidates' records per token shard.
  const distinct = [...new Set(pubkeys)];
  const slots = await Promise.all(
    distinct.map(
      async (pubkey) =>
        (await ctx.scripts.run(
          'readRecipientSlot',
          [ctx.keys.userTokensKey(pubkey), ctx.keys.userTokensForgettingKey(pubkey), ctx.keys.userPreferencesKey(pubkey)],
          [],
        )) as SlotRecipient,
    ),
  );
  return statesFromSlots(ctx, pubkeys, distinct, slots);
}

/** The cluster layout's second round: each distinct user's slot read, their candidates' records, their gate state per pubkey asked. */
async function statesFromSlots(
  ctx: RedisContext,
  pubkeys: readonly string[],
  distinct: readonly string[],
  slots: readonly SlotRecipient[],
): Promise<RecipientGateState[]> {
  const candidates: Candidates[] = slots.map(([members, flatIntents]) => ({ members, intents: intentsOf(flatIntents) }));
  const records = await readTokenRecords(
    ctx,
    candidates.flatMap(({ members, intents }) => [...members, ...Object.keys(intents)]),
  );
  const devicesOf = await devicesFromRecords(ctx, distinct, candidates, records);
  const preferencesOf = new Map(distinct.map((pubkey, i) => [pubkey, slots[i]?.[2] ?? null]));
  return pubkeys.map((pubkey) => ({
    devices: devicesOf.get(pubkey) ?? [],
    preferenceKinds: preferenceKindsOf(ctx, pubkey, preferencesOf.get(pubkey) ?? null),
  }));
}

/** One user's answer of `readRecipientSlot-3.lua`: members, intents (flat), preferences. */
type SlotRecipient = [string[], string[], string | null];

/** One user's answer of `readAndCountRecipientSlot-n.lua`: the slot read, then one count per entry. */
type SlotRecipientCounted = [string[], string[], string | null, Array<number | null>];

/**
 * readRecipients and countInboxNotifications (port-inbox.ts readRecipientsCountingInbox). In the
 * cluster layout, a user who is read and counted gets one script (`readAndCountRecipientSlot-n`)
 * for both instead of a read script and a count script per entry; then the candidates' records
 * per token shard, as {@link readRecipients} reads them. On one Redis the two one-step scripts go
 * out together (auto-pipelined), each already one call for the whole batch; so do the two calls
 * when an entry's recipient is not among the users read.
 */
export async function readRecipientsCountingInbox(
  ctx: RedisContext,
  pubkeys: readonly string[],
  entries: readonly InboxCountEntry[],
  ttlSecs: number,
): Promise<RecipientsCountedInbox> {
  const distinct = [...new Set(pubkeys)];
  const readUsers = new Set(distinct);
  if (ctx.keys.layout === 'divine' || entries.length === 0 || !entries.every((entry) => readUsers.has(entry.recipient))) {
    const [states, counted] = await Promise.all([readRecipients(ctx, pubkeys), countInboxNotifications(ctx, entries, ttlSecs)]);
    return { states, counted };
  }
  const ttl = expirySeconds('readRecipientsCountingInbox', ttlSecs);
  // Each user's entries with their places in `entries`, for the answers to go back in order.
  const entriesOf = new Map<string, Array<{ entry: InboxCountEntry; index: number }>>();
  entries.forEach((entry, index) => {
    const list = entriesOf.get(entry.recipient);
    if (list) list.push({ entry, index });
    else entriesOf.set(entry.recipient, [{ entry, index }]);
  });
  const ids = await activeIds(ctx);
  const channel = hintChannel(ctx);
  const counted: (number | null)[] = entries.map(() => null);
  const slots = await Promise.all(
    distinct.map(async (pubkey): Promise<SlotRecipient> => {
      const userKeys = [ctx.keys.userTokensKey(pubkey), ctx.keys.userTokensForgettingKey(pubkey), ctx.keys.userPreferencesKey(pubkey)];
      const mine = entriesOf.get(pubkey);
      if (!mine) return (await ctx.scripts.run('readRecipientSlot', userKeys, [])) as SlotRecipient;
      const [members, intents, preferences, counts] = (await ctx.scripts.run(
        'readAndCountRecipientSlot',
        [...userKeys, ctx.keys.inboxKey(pubkey), ...mine.map(({ entry }) => ctx.keys.inboxCountedKey(entry.countKey, pubkey))],
        [ttl, pubkey, channel, ids.length, ...ids, ...mine.map(({ entry }) => entry.type)],
      )) as SlotRecipientCounted;
      mine.forEach(({ index }, k) => {
        const value = counts[k];
        counted[index] = typeof value === 'number' ? value : null;
      });
      return [members, intents, preferences];
    }),
  );
  return { states: await statesFromSlots(ctx, pubkeys, distinct, slots), counted };
}

/** One user's answer of `readRecipients-3.lua`: members, intents (flat), preferences, records (flat triples). */
type OneStepRecipient = [string[], string[], string | null, Array<string | null>];

/**
 * {@link readRecipients} on one Redis: every user's token candidates, preferences and candidate
 * records in one script, then the same keep-or-forget of each token as the two-round read
 * (`devicesFromRecords`), so both layouts answer alike.
 */
async function readRecipientsInOneStep(ctx: RedisContext, pubkeys: readonly string[]): Promise<RecipientGateState[]> {
  const prefix = prefixed(ctx);
  const distinct = [...new Set(pubkeys)];
  const args: string[] = [];
  for (const pubkey of distinct) {
    args.push(
      prefix(ctx.keys.userTokensKey(pubkey)),
      prefix(ctx.keys.userTokensForgettingKey(pubkey)),
      prefix(ctx.keys.userPreferencesKey(pubkey)),
    );
  }
  const shard = ctx.keys.tokenShardKeys(0);
  const replies = (await ctx.scripts.run('readRecipients', [shard.owners, shard.offsets, shard.devices], args)) as OneStepRecipient[];
  const candidates: Candidates[] = [];
  const records = new Map<string, TokenRecord>();
  const preferencesOf = new Map<string, string | null>();
  distinct.forEach((pubkey, i) => {
    const [members, flatIntents, preferences, flatRecords] = replies[i] ?? [[], [], null, []];
    const intents = intentsOf(flatIntents);
    candidates.push({ members, intents });
    preferencesOf.set(pubkey, preferences);
    // The records follow the members, then the intents' tokens (the script's order).
    const tokens = [...members, ...Object.keys(intents)];
    tokens.forEach((token, k) => {
      records.set(token, {
        owner: flatRecords[3 * k] ?? null,
        rawOffset: flatRecords[3 * k + 1] ?? null,
        rawDevice: flatRecords[3 * k + 2] ?? null,
      });
    });
  });
  const devicesOf = await devicesFromRecords(ctx, distinct, candidates, records);
  return pubkeys.map((pubkey) => ({
    devices: devicesOf.get(pubkey) ?? [],
    preferenceKinds: preferenceKindsOf(ctx, pubkey, preferencesOf.get(pubkey) ?? null),
  }));
}

export async function claimAndEnqueueDeliveries<T>(
  ctx: RedisContext,
  queue: QueueName,
  ttlSecs: number,
  entries: ReadonlyArray<ClaimedDelivery<T>>,
): Promise<boolean[]> {
  return claimAndEnqueue(
    ctx,
    queue,
    expirySeconds('claimAndEnqueueDeliveries', ttlSecs),
    entries.map(({ claim, item }) => ({ claimKey: ctx.keys.recipientClaimKey(claim.eventId, claim.recipient), owner: claim.owner, item })),
  );
}

/** One delivery of {@link claimAndEnqueue}: the claim that covers it (key and owner) and its queue item. */
export interface ClaimAndEnqueueEntry<T> {
  claimKey: string;
  owner: string;
  item: EnqueueItem<T>;
}

/** A delivery on its way through the steps. */
interface Staged {
  id: string;
  claimKey: string;
  /** The owner the item is staged under; null when the id was already queued (not staged). */
  stagedOwner: string | null;
  /** The caller's owner: the one to claim under when the item was not staged. */
  owner: string;
}

/**
 * Claim each entry's key and queue its item (available now, in its lane) when the claim is this
 * call's; one boolean per entry: true when the claim was taken (and the item queued, or its id
 * already queued), false when someone else holds it. The three steps and their invariant are in
 * the module comment.
 */
export async function claimAndEnqueue<T>(
  ctx: RedisContext,
  queue: QueueName,
  ttlSecs: number,
  entries: ReadonlyArray<ClaimAndEnqueueEntry<T>>,
): Promise<boolean[]> {
  if (entries.length === 0) return [];
  if (ctx.keys.layout === 'divine') return claimAndEnqueueInOneStep(ctx, queue, ttlSecs, entries);
  const now = ctx.clock.nowMs();
  const stageArgs = entries.map((entry) => ({
    entry,
    values: [
      entry.item.id,
      entry.owner,
      payloadJson('claimAndEnqueue', entry.item.id, entry.item.payload),
      entry.item.lane ?? DEFAULT_LANE,
    ],
  }));
  // Step 1: stage every item (or find it staged or queued), one script per queue shard.
  const owners = await perShard(
    ctx,
    stageArgs,
    ({ entry }) => entry.item.id,
    async (shard, shardEntries) => {
      const keys = ctx.keys.queueKeys(queue, shard);
      return (await ctx.scripts.run(
        'stageDeliveries',
        [keys.items, keys.meta, keys.pending],
        [now, now + ttlSecs * 1000, ...shardEntries.flatMap(({ values }) => values)],
      )) as string[];
    },
  );
  // Each step's writes reach the replicas before the next step, in other slots, depends on them
  // (`replication.ts`): a claim must not outlive its staged item in a failover, nor the caller
  // move on (complete its page, acknowledge its event) past a commit a promoted replica lacks.
  const shardKeysOf = (ids: readonly string[]): string[] => [...new Set(ids.map((id) => itemShardKeys(ctx, queue, id).items))];
  await ctx.replication.afterWrites(() => shardKeysOf(entries.map((entry) => entry.item.id)));
  const staged: Staged[] = entries.map((entry, i) => {
    const owner = owners[i] ?? '';
    return { id: entry.item.id, claimKey: entry.claimKey, owner: entry.owner, stagedOwner: owner === '' ? null : owner };
  });
  // Step 2: every claim, one slot each, concurrently (auto-pipelined).
  const claimed = await Promise.all(
    staged.map(
      async ({ claimKey, owner, stagedOwner }) => (await ctx.scripts.run('takeClaim', [claimKey], [stagedOwner ?? owner, ttlSecs])) === 1,
    ),
  );
  // A claim lost with its master lets a retried page claim and send again: a duplicate, never a
  // loss, but one WAIT per master is cheap next to a send.
  await ctx.replication.afterWrites(() => staged.map((entry) => entry.claimKey));
  // Step 3: commit or discard what was staged, one script per queue shard.
  const toSettle = staged.flatMap((entry, i) => (entry.stagedOwner === null ? [] : [{ ...entry, index: i, commit: claimed[i] === true }]));
  const committed = await perShard(
    ctx,
    toSettle,
    (entry) => entry.id,
    async (shard, shardEntries) => {
      const keys = ctx.keys.queueKeys(queue, shard);
      const replies = (await ctx.scripts.run(
        'commitDeliveries',
        [...keys.readyKeys, keys.items, keys.meta, keys.pending],
        [ctx.clock.nowMs(), ...shardEntries.flatMap((entry) => [entry.id, entry.stagedOwner ?? '', entry.commit ? 'commit' : 'discard'])],
      )) as number[];
      return replies.map((reply) => reply === 1);
    },
  );
  await ctx.replication.afterWrites(() => shardKeysOf(toSettle.map((entry) => entry.id)));
  const results = staged.map((entry, i) => entry.stagedOwner === null && claimed[i] === true);
  toSettle.forEach((entry, k) => {
    results[entry.index] = committed[k] === true;
  });
  return results;
}

/**
 * {@link claimAndEnqueue} on one Redis: the three steps as one script per queue shard (the
 * divine layout has one), so a turn's deliveries cost one round trip. The claim keys travel in
 * ARGV with the client's key prefix, as keys the script cannot declare.
 */
async function claimAndEnqueueInOneStep<T>(
  ctx: RedisContext,
  queue: QueueName,
  ttlSecs: number,
  entries: ReadonlyArray<ClaimAndEnqueueEntry<T>>,
): Promise<boolean[]> {
  const prefix = prefixed(ctx);
  const now = ctx.clock.nowMs();
  const results = await perShard(
    ctx,
    entries,
    (entry) => entry.item.id,
    async (shard, shardEntries) => {
      const keys = ctx.keys.queueKeys(queue, shard);
      const args: Array<string | number> = [now, ttlSecs];
      for (const entry of shardEntries) {
        args.push(
          prefix(entry.claimKey),
          entry.owner,
          entry.item.id,
          payloadJson('claimAndEnqueue', entry.item.id, entry.item.payload),
          entry.item.lane ?? DEFAULT_LANE,
        );
      }
      const replies = (await ctx.scripts.run(
        'claimAndEnqueue',
        [...keys.readyKeys, keys.items, keys.meta, keys.pending],
        args,
      )) as number[];
      return replies.map((reply) => reply === 1);
    },
  );
  // One step on one server, so one acknowledgement covers the claims and the items alike (a
  // no-op unless `redis.wait_replicas` is set).
  await ctx.replication.afterWrites(() => [ctx.keys.queueKeys(queue, 0).items]);
  return results;
}
