/**
 * Loads the Lua scripts of the Redis adapter and registers them with ioredis.
 *
 * Conventions (checked here at startup, so a broken script fails the boot, not a request):
 * - one script per file in `lua/`, named `<camelCaseName>-<numberOfKeys>.lua`; the key count is
 *   read from the file name so it cannot drift from the call sites, and every call is checked
 *   against it. `<camelCaseName>-n.lua` takes one key or more, as many as the call declares: for
 *   a cluster-layout script whose keys are one slot's but whose number follows its batch (the
 *   delivery log's per-recipient views of one log shard), which must still declare every key;
 * - each file opens with a `--[[ ]]` header documenting `KEYS[1]`…`KEYS[n]` (exactly n, or
 *   `KEYS: none`), its
 *   `ARGV[n]` lines (or `ARGV: none`) and an `Output:` section;
 * - shared helpers live in `lua/includes/<name>.lua` and are pulled in with a line
 *   `--- @include "<name>"`, inlined once per script (includes do not nest);
 * - a script is called by the SHA1 of its body (`EVALSHA`), so two versions of nostr-push sharing
 *   one Redis never run each other's bodies; every script is loaded when the store opens, and a
 *   server that lost its script cache (restart, `SCRIPT FLUSH`) gets the body again on the first
 *   NOSCRIPT.
 *
 * Why not ioredis' `defineCommand`: inside a pipeline (and so under auto-pipelining) it sends the
 * whole body with `EVAL` on every call, which costs the client the write and the server a SHA1 of
 * every body per call.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChainableCommander, Cluster, Redis } from 'ioredis';
import calculateKeySlot from 'cluster-key-slot';

/** Every script the adapter calls; the loader refuses to start when one is missing. */
export const SCRIPT_NAMES = [
  'registerTokenRecord',
  'removeTokenRecord',
  'sweepStaleTokens',
  'readTokenRecords',
  'readRecipients',
  'forgetUserTokens',
  'settleForgottenTokens',
  'releaseClaim',
  'advanceRelayCursor',
  'putUserRelayList',
  'enqueue',
  'enqueueLeased',
  'peekDue',
  'lease',
  'settle',
  'stageDeliveries',
  'takeClaim',
  'commitDeliveries',
  'claimAndEnqueue',
  'replayDead',
  'deleteDead',
  'listDead',
  'listDeadPage',
  'appendNtfyMessage',
  'expireNtfyTopic',
  'readNtfyTopics',
  'allocateNtfyId',
  'completeNtfyAppend',
  'readNtfyWatermark',
  'trimNtfyTopic',
  'scheduleNtfyMessage',
  'claimNtfyDue',
  'deliverNtfyScheduled',
  'commitNtfyScheduled',
  'coalesceIngest',
  'coalesceQueue',
  'coalesceToken',
  'coalesceRefund',
  'coalesceRecoverLeases',
  'coalesceRecoverGroup',
  'coalesceTakeDue',
  'coalesceLeaseGroup',
  'coalesceSettleLease',
  'coalesceComplete',
  'coalesceRelease',
  'beginNotifyListReplacement',
  'finishNotifyListReplacement',
  'enqueueFanoutJob',
  'readWatcherPage',
  'claimFanoutJob',
  'completeFanoutJob',
  'retryFanoutJob',
  'extendClaim',
  'recordBellOutcome',
  'claimVapidKeys',
  'createApiKey',
  'revokeApiKey',
  'touchApiKeyUse',
  'createSend',
  'claimSend',
  'advanceSend',
  'cancelSend',
  'claimIdempotencyKey',
  'leaseDue',
  'countInbox',
  'countInboxMany',
  'appendDeliveryLog',
  'appendDeliveryLogShard',
  'readRecipientSlot',
  'readAndCountRecipientSlot',
  'readBellWatcher',
  'readBellWatchers',
  'recordBellOutcomes',
  'markInboxViewed',
  'widenAlertWords',
  'touchInboxUser',
  'forgetIdleInboxUser',
  'dropIdleEntry',
  'takeClientQuota',
  'watchAlertWord',
  'publishAnnouncement',
  'nip9aPut',
  'nip9aDelete',
  'nip9aRecordOutcomes',
  'nip9aRegistrationVersions',
  'writeMetricSample',
  'takeThrottleSlot',
  'rateLimitIncrMany',
  'createCampaign',
  'claimCampaign',
  'advanceCampaign',
  'countCampaign',
  'holdForDigest',
  'completeDigest',
  'claimDigest',
] as const;

export type ScriptName = (typeof SCRIPT_NAMES)[number];

/**
 * Scripts only the divine layout calls: on one Redis every key is on the same server, so work the
 * cluster layout does in one-slot steps runs in one script: appending to, expiring and reading
 * ntfy topics (`ntfy-cluster.ts` in the cluster), reading a turn's recipients and claiming and
 * queueing their deliveries (`deliveries.ts`; readRecipientSlot per user and readTokenRecords
 * per token shard, and stageDeliveries, takeClaim, commitDeliveries in the cluster), counting a
 * batch of inbox entries (`inbox.ts`; countInbox per entry in the cluster), and appending to the
 * delivery log (`delivery-log.ts`; appendDeliveryLogShard per log shard in the cluster), and reading
 * and recording a fan-out page's watchers (`bell-pages.ts`; readBellWatcher and recordBellOutcome
 * per watcher in the cluster). Their keys span slots, which is why the cluster layout never calls them.
 */
export const DIVINE_LAYOUT_ONLY_SCRIPTS: readonly ScriptName[] = [
  'appendNtfyMessage',
  'scheduleNtfyMessage',
  'deliverNtfyScheduled',
  'expireNtfyTopic',
  'readNtfyTopics',
  'claimAndEnqueue',
  'readRecipients',
  'countInboxMany',
  'appendDeliveryLog',
  'readBellWatchers',
  'recordBellOutcomes',
];

export const LUA_DIR = fileURLToPath(new URL('./lua/', import.meta.url));

const SCRIPT_FILE_PATTERN = /^([a-z][A-Za-z0-9]*)-(\d+|n)\.lua$/;
const INCLUDE_PATTERN = /^--- @include "([A-Za-z0-9_-]+)"\s*$/gm;
const ANY_INCLUDE_LINE = /^--- @include /m;

export type ScriptArg = string | number;

export interface ScriptDefinition {
  /** camelCase name from the file name, e.g. `registerTokenRecord`. */
  name: string;
  /** Key count from the file name; for a `-n.lua` script, the least it takes (1). */
  numberOfKeys: number;
  /** A `-n.lua` script: any number of keys from {@link numberOfKeys} on, as each call declares them. */
  variadicKeys: boolean;
  /** Script body with includes inlined. */
  lua: string;
  /** SHA1 of {@link lua}, hex: what EVALSHA calls it by. */
  sha: string;
  file: string;
}

export class ScriptLoaderError extends Error {
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`${file}: ${detail}`);
    this.name = 'ScriptLoaderError';
  }
}

/**
 * `registerTokenRecord-4.lua` → `{ name: 'registerTokenRecord', numberOfKeys: 4, variadicKeys: false }`,
 * `appendDeliveryLogShard-n.lua` → `{ …, numberOfKeys: 1, variadicKeys: true }`; null for other names.
 */
export function parseScriptFileName(file: string): { name: string; numberOfKeys: number; variadicKeys: boolean } | null {
  const match = SCRIPT_FILE_PATTERN.exec(file);
  if (!match?.[1] || !match[2]) return null;
  if (match[2] === 'n') return { name: match[1], numberOfKeys: 1, variadicKeys: true };
  return { name: match[1], numberOfKeys: Number(match[2]), variadicKeys: false };
}

/**
 * What a script's header fails to document: an empty list when it has a `--[[ ]]` header with
 * exactly `KEYS[1]`…`KEYS[numberOfKeys]`, at least one `ARGV[n]` line or `ARGV: none`, and `Output:`.
 * A variadic script (`-n.lua`) documents `KEYS[1]` and its further keys by a symbolic index
 * (`KEYS[3i + 1]`, `KEYS[k]`), since their number follows the call.
 */
export function findHeaderProblems(lua: string, numberOfKeys: number, variadicKeys = false): string[] {
  const header = /^\s*--\[\[([\s\S]*?)\]\]/.exec(lua)?.[1];
  if (header === undefined) return ['no --[[ ]] header at the top of the file'];
  const problems: string[] = [];
  for (let i = 1; i <= numberOfKeys; i++) {
    if (!new RegExp(`^\\s*KEYS\\[${i}\\]\\s`, 'm').test(header)) problems.push(`KEYS[${i}] is not documented`);
  }
  if (numberOfKeys === 0 && !/^\s*KEYS: none/m.test(header)) problems.push('no "KEYS: none" line for a script without keys');
  if (variadicKeys) {
    if (!/^\s*KEYS\[[^\]]*[a-z][^\]]*\]/m.test(header))
      problems.push('a -n.lua script documents its further keys by a symbolic index (KEYS[k])');
  } else if (new RegExp(`KEYS\\[${numberOfKeys + 1}\\]`).test(header)) {
    problems.push(`KEYS[${numberOfKeys + 1}] is documented but the file name says ${numberOfKeys} keys`);
  }
  if (!/^\s*(ARGV\[\d+\]\s|ARGV: none)/m.test(header)) problems.push('no ARGV[n] line (or "ARGV: none")');
  if (!/^\s*Output:/m.test(header)) problems.push('no Output: section');
  return problems;
}

function inlineIncludes(file: string, lua: string, includesDir: string): string {
  const seen = new Set<string>();
  return lua.replace(INCLUDE_PATTERN, (_line, include: string) => {
    if (seen.has(include)) return '';
    seen.add(include);
    let body: string;
    try {
      body = readFileSync(join(includesDir, `${include}.lua`), 'utf8');
    } catch {
      throw new ScriptLoaderError(file, `include "${include}" not found in ${includesDir}`);
    }
    if (ANY_INCLUDE_LINE.test(body)) throw new ScriptLoaderError(file, `include "${include}" includes another file; includes do not nest`);
    return body;
  });
}

/** Read and check every script in `dir`. Throws {@link ScriptLoaderError} on the first bad file. */
export function loadScriptDefinitions(dir: string = LUA_DIR): ScriptDefinition[] {
  const definitions: ScriptDefinition[] = [];
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith('.lua')) continue;
    const parsed = parseScriptFileName(file);
    if (!parsed) throw new ScriptLoaderError(file, 'name must be <camelCaseName>-<numberOfKeys>.lua');
    const source = readFileSync(join(dir, file), 'utf8');
    const problems = findHeaderProblems(source, parsed.numberOfKeys, parsed.variadicKeys);
    if (problems.length > 0) throw new ScriptLoaderError(file, `header: ${problems.join('; ')}`);
    const lua = inlineIncludes(file, source, join(dir, 'includes'));
    definitions.push({ ...parsed, lua, sha: createHash('sha1').update(lua).digest('hex'), file });
  }
  return definitions;
}

/** Redis' answer when EVALSHA names a script its cache does not hold. */
function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}

/** A script call's keys then arguments, as the strings Redis receives. */
function commandArguments(keys: readonly string[], args: readonly ScriptArg[]): string[] {
  const argv = keys.slice();
  for (const arg of args) argv.push(typeof arg === 'number' ? String(arg) : arg);
  return argv;
}

/**
 * Refuse a call whose declared keys hash to more than one slot, before it is sent: a cluster
 * would answer CROSSSLOT, and the message here names the script and the keys (without the
 * client's key prefix, which never holds a hash tag, so the slots are the same).
 */
export function assertOneSlot(definition: ScriptDefinition, keys: readonly string[]): void {
  if (keys.length < 2) return;
  const slot = calculateKeySlot(keys[0] as string);
  for (const key of keys) {
    if (calculateKeySlot(key) !== slot) {
      throw new ScriptLoaderError(definition.file, `keys in more than one cluster slot: ${keys.join(' ')}`);
    }
  }
}

/** Told of every script call, with the keys it declares (without the client's key prefix). */
export type ScriptCallObserver = (name: ScriptName, keys: readonly string[]) => void;

/** The adapter's typed entry point to its scripts on one ioredis client. */
export class RedisScripts {
  private readonly byName = new Map<string, ScriptDefinition>();

  constructor(
    private readonly redis: Redis,
    definitions: ScriptDefinition[] = loadScriptDefinitions(),
    /** Set on a Redis Cluster: scripts are loaded on every master, and every call's keys checked for one slot. */
    private readonly cluster: Cluster | null = null,
    private readonly observer?: ScriptCallObserver,
  ) {
    for (const definition of definitions) this.byName.set(definition.name, definition);
    const missing = SCRIPT_NAMES.filter((name) => !this.byName.has(name));
    if (missing.length > 0) throw new ScriptLoaderError(LUA_DIR, `missing scripts: ${missing.join(', ')}`);
  }

  /** Put every script in the server's cache (at open, so calls never pay for the body). */
  async loadAll(): Promise<void> {
    // A cluster routes SCRIPT LOAD to one node; each master keeps its own cache. A master that
    // joins later (a promoted replica) gets a body on its first NOSCRIPT, as after a restart.
    // A master that is down now is skipped: it gets the bodies the same way when it is back.
    if (this.cluster) {
      const masters = this.cluster.nodes('master');
      const loaded = await Promise.allSettled(masters.map((master) => this.loadOn(master)));
      const failure = loaded.find((result) => result.status === 'rejected');
      if (failure && loaded.every((result) => result.status === 'rejected')) throw failure.reason;
      return;
    }
    await this.loadOn(this.redis);
  }

  private async loadOn(server: Redis): Promise<void> {
    await Promise.all([...this.byName.values()].map((definition) => server.script('LOAD', definition.lua)));
  }

  /** Put one script in the server's cache; needed before {@link addTo}, which cannot resend a body. */
  async load(name: ScriptName): Promise<void> {
    await this.redis.script('LOAD', this.lookup(name).lua);
  }

  /** The SHA1 a script is called by. */
  sha(name: ScriptName): string {
    return this.lookup(name).sha;
  }

  run(name: ScriptName, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown> {
    const definition = this.definition(name, keys.length);
    this.observer?.(name, keys);
    if (this.cluster) assertOneSlot(definition, keys);
    // One array, not spread arguments: a call spreading some 150,000 values (a read of every
    // topic the pusher holds) overflows the stack. ioredis flattens it into the command.
    const argv = commandArguments(keys, args);
    return this.redis.evalsha(definition.sha, keys.length, argv).catch((err: unknown) => {
      // The server forgot the script (restarted, flushed): EVAL runs it and caches it again.
      if (isNoScript(err)) return this.redis.eval(definition.lua, keys.length, argv);
      throw err;
    });
  }

  /**
   * Queue a script call on a MULTI or pipeline of the same client. The script must be in the
   * server's cache ({@link load} it first): a MULTI cannot recover from NOSCRIPT.
   */
  addTo(chain: ChainableCommander, name: ScriptName, keys: readonly string[], args: readonly ScriptArg[]): ChainableCommander {
    const definition = this.definition(name, keys.length);
    this.observer?.(name, keys);
    if (this.cluster) assertOneSlot(definition, keys);
    return chain.evalsha(definition.sha, keys.length, ...keys, ...args);
  }

  private lookup(name: ScriptName): ScriptDefinition {
    const definition = this.byName.get(name);
    if (!definition) throw new ScriptLoaderError(name, 'unknown script');
    return definition;
  }

  private definition(name: ScriptName, keyCount: number): ScriptDefinition {
    const definition = this.lookup(name);
    if (definition.variadicKeys ? keyCount < definition.numberOfKeys : keyCount !== definition.numberOfKeys) {
      throw new ScriptLoaderError(definition.file, `called with ${keyCount} keys, declares ${definition.numberOfKeys}`);
    }
    return definition;
  }
}
