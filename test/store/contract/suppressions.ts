import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { suppressionId } from '../../../src/store/port-suppressions.ts';
import { SECOND_MS, type ContractContext } from './context.ts';

const ALICE = 'a1'.repeat(32);
const BOB = 'b2'.repeat(32);

/** The contract of port-suppressions.ts. */
export function suppressionContract(ctx: ContractContext): void {
  describe('suppressions', () => {
    test('a suppression is added once (the second add returns the first), listed oldest first, and per app', async () => {
      const store = ctx.store();
      const first = await store.addSuppression('default', { kind: 'pubkey', value: ALICE });
      assert.equal(first.created, true);
      assert.deepEqual(first.suppression, {
        appId: 'default',
        id: suppressionId({ kind: 'pubkey', value: ALICE }),
        kind: 'pubkey',
        value: ALICE,
        createdAtMs: ctx.clock().nowMs(),
      });
      ctx.clock().advance(SECOND_MS);
      const again = await store.addSuppression('default', { kind: 'pubkey', value: ALICE });
      assert.deepEqual(again, { suppression: first.suppression, created: false });
      await store.addSuppression('default', { kind: 'token', value: 'phone-token' });
      const listed = await store.listSuppressions('default', 10);
      assert.deepEqual(
        listed.map((s) => [s.kind, s.value]),
        [
          ['pubkey', ALICE],
          ['token', 'phone-token'],
        ],
      );
      assert.equal((await store.listSuppressions('default', 1)).length, 1);
      assert.deepEqual(await store.listSuppressions('other', 10), []);
    });

    test('suppressedAmong answers per target in order, per app; removal lifts it', async () => {
      const store = ctx.store();
      const { suppression } = await store.addSuppression('default', { kind: 'pubkey', value: ALICE });
      await store.addSuppression('default', { kind: 'token', value: 'bob-tablet' });
      const targets = [
        { kind: 'pubkey' as const, value: BOB },
        { kind: 'token' as const, value: 'bob-phone' },
        { kind: 'token' as const, value: 'bob-tablet' },
        { kind: 'pubkey' as const, value: ALICE },
        { kind: 'token' as const, value: ALICE },
      ];
      assert.deepEqual(await store.suppressedAmong('default', targets), [false, false, true, true, false]);
      assert.deepEqual(await store.suppressedAmong('other', targets), [false, false, false, false, false]);
      assert.deepEqual(await store.suppressedAmong('default', []), []);
      assert.equal(await store.removeSuppression('default', suppression.id), true);
      assert.equal(await store.removeSuppression('default', suppression.id), false);
      assert.deepEqual(await store.suppressedAmong('default', targets), [false, false, true, false, false]);
    });
  });
}
