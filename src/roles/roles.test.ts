import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/load.ts';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { ManualClock } from '../util/clock.ts';
import { createLogger } from '../observability/logger.ts';
import { startService } from '../service.ts';
import { generateSecretKey } from '../nostr/keys.ts';

const DAY_MS = 86_400_000;

describe('the janitor role', () => {
  test('sweeps stale tokens once at start and counts them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'np-janitor-'));
    const path = join(dir, 'np.sqlite');
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const seed = await openSqliteStore({ path, clock });
    await seed.registerToken('a1'.repeat(32), { token: 'old-phone', transport: 'fcm' });
    clock.advance(80 * DAY_MS);
    await seed.registerToken('a1'.repeat(32), { token: 'new-phone', transport: 'fcm' });
    await seed.close();

    clock.advance(11 * DAY_MS);
    const { config } = loadConfig({
      env: {
        NOSTR_PUSH__STORE__URL: `sqlite:${path}`,
        NOSTR_PUSH__DATA_DIR: dir,
        NOSTR_PUSH__ROLES: 'janitor',
        NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: generateSecretKey(),
      },
    });
    const service = await startService(config, { clock, logger: createLogger({ level: 'silent' }) });
    try {
      // The sweep is done when the janitor counted it (its write is committed by then).
      const swept = /push_tokens_pruned_total\{reason="stale"\} 1/;
      for (let i = 0; i < 200 && !swept.test(await service.metrics.render()); i++) await new Promise((r) => setTimeout(r, 10));
      assert.match(await service.metrics.render(), swept);
      assert.equal(await service.store.tokenOwner('old-phone'), null, 'the 91-day-old token is swept');
      assert.equal(await service.store.tokenOwner('new-phone'), 'a1'.repeat(32), 'the 11-day-old token stays');
    } finally {
      await service.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
