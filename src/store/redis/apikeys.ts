/** API keys on Redis (port-apikeys.ts); the layout is in `keys.ts`. */
import type { ApiKeyRecord, ApiKeyRole, NewApiKey } from '../port-apikeys.ts';
import type { RedisContext } from './context.ts';

export async function createApiKey(ctx: RedisContext, key: NewApiKey): Promise<boolean> {
  const created = await ctx.scripts.run(
    'createApiKey',
    [ctx.keys.apiKeyKey(key.id), ctx.keys.apiKeyHashesKey, ctx.keys.apiKeysKey],
    [key.id, key.appId, key.role, key.hash, key.prefix, ctx.clock.nowMs()],
  );
  return Number(created) === 1;
}

function toRecord(id: string, fields: Record<string, string>): ApiKeyRecord | null {
  const { appId, role, hash, prefix, createdAtMs, revokedAtMs, lastUsedAtMs } = fields;
  if (appId === undefined || hash === undefined || prefix === undefined || createdAtMs === undefined) return null;
  if (role !== 'send' && role !== 'admin') return null;
  return {
    id,
    appId,
    role: role satisfies ApiKeyRole,
    hash,
    prefix,
    createdAtMs: Number(createdAtMs),
    revokedAtMs: revokedAtMs === undefined ? null : Number(revokedAtMs),
    lastUsedAtMs: lastUsedAtMs === undefined ? null : Number(lastUsedAtMs),
  };
}

export async function findApiKeyByHash(ctx: RedisContext, hash: string): Promise<ApiKeyRecord | null> {
  const id = await ctx.redis.hget(ctx.keys.apiKeyHashesKey, hash);
  if (id === null) return null;
  const record = toRecord(id, await ctx.redis.hgetall(ctx.keys.apiKeyKey(id)));
  if (!record) {
    ctx.logger.warn({ keyId: id }, 'API key record is missing or damaged; refusing the key');
    return null;
  }
  return record.revokedAtMs === null && record.hash === hash ? record : null;
}

export async function listApiKeys(ctx: RedisContext, appId: string | null): Promise<ApiKeyRecord[]> {
  const ids = await ctx.redis.zrange(ctx.keys.apiKeysKey, 0, -1);
  const pipeline = ctx.redis.pipeline();
  for (const id of ids) pipeline.hgetall(ctx.keys.apiKeyKey(id));
  const replies = (await pipeline.exec()) ?? [];
  const records: ApiKeyRecord[] = [];
  ids.forEach((id, i) => {
    const [error, fields] = replies[i] ?? [null, {}];
    if (error) throw error;
    const record = toRecord(id, fields as Record<string, string>);
    if (record && (appId === null || record.appId === appId)) records.push(record);
  });
  return records;
}

export async function revokeApiKey(ctx: RedisContext, id: string): Promise<boolean> {
  return Number(await ctx.scripts.run('revokeApiKey', [ctx.keys.apiKeyKey(id)], [ctx.clock.nowMs()])) === 1;
}

export async function touchApiKeyUse(ctx: RedisContext, id: string, atMs: number): Promise<boolean> {
  return Number(await ctx.scripts.run('touchApiKeyUse', [ctx.keys.apiKeyKey(id)], [Math.trunc(atMs)])) === 1;
}
