import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { replicaRefusalFromEnv, TEST_REPLICA_REFUSAL_ENV } from './replication.ts';

describe('replica refusal injection (tests only)', () => {
  test('unset: none; a fraction: refuses that share of acknowledgements', () => {
    assert.equal(replicaRefusalFromEnv({ NODE_ENV: 'test' }), undefined);
    const draws = [0.1, 0.3, 0.2];
    const refuse = replicaRefusalFromEnv({ NODE_ENV: 'test', [TEST_REPLICA_REFUSAL_ENV]: '0.25' }, () => draws.shift() ?? 1);
    assert.ok(refuse);
    assert.deepEqual([refuse(), refuse(), refuse()], [true, false, true]);
  });

  test('refused outside NODE_ENV=test, and when it is not a fraction', () => {
    assert.throws(
      () => replicaRefusalFromEnv({ NODE_ENV: 'production', [TEST_REPLICA_REFUSAL_ENV]: '0.5' }),
      /only honoured with NODE_ENV=test/,
    );
    assert.throws(() => replicaRefusalFromEnv({ NODE_ENV: 'test', [TEST_REPLICA_REFUSAL_ENV]: '2' }), /fraction/);
  });
});
