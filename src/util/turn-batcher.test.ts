import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TurnBatcher } from './turn-batcher.ts';

describe('TurnBatcher', () => {
  test('calls made in one turn run as one batch; each caller gets its own result', async () => {
    const batches: number[][] = [];
    const batcher = new TurnBatcher<number, string>(async (inputs) => {
      batches.push(inputs);
      return inputs.map((n) => `#${n}`);
    });
    const results = await Promise.all([1, 2, 3].map((n) => batcher.add(n)));
    assert.deepEqual(results, ['#1', '#2', '#3']);
    assert.deepEqual(batches, [[1, 2, 3]]);
    assert.equal(await batcher.add(4), '#4');
    assert.deepEqual(batches, [[1, 2, 3], [4]], 'a later turn is a new batch');
  });

  test('a batch is written as soon as it holds maxBatch calls', async () => {
    const batches: number[][] = [];
    const batcher = new TurnBatcher<number, number>(
      async (inputs) => {
        batches.push(inputs);
        return inputs;
      },
      { maxBatch: 2 },
    );
    await Promise.all([1, 2, 3, 4, 5].map((n) => batcher.add(n)));
    assert.deepEqual(batches, [[1, 2], [3, 4], [5]]);
  });

  test('with oneInFlight, calls made while a batch is out wait for it and then go out together', async () => {
    const batches: number[][] = [];
    const answers: Array<() => void> = [];
    const batcher = new TurnBatcher<number, number>(
      async (inputs) => {
        batches.push(inputs);
        await new Promise<void>((resolve) => answers.push(resolve));
        return inputs;
      },
      { oneInFlight: true, maxBatch: 3 },
    );
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    /** Answer the batch out, once it is out (a few turns at most). */
    const answerNext = async () => {
      for (let i = 0; i < 10 && answers.length === 0; i++) await turn();
      answers.shift()?.();
    };
    const first = batcher.add(1);
    await turn();
    assert.deepEqual(batches, [[1]]);
    const later: Array<Promise<number>> = [];
    for (let i = 0; i < 3; i++) {
      later.push(batcher.add(10 + 2 * i), batcher.add(11 + 2 * i));
      await turn();
    }
    assert.deepEqual(batches, [[1]], 'nothing more is sent while the first batch is out');
    await answerNext();
    assert.equal(await first, 1);
    await answerNext();
    await answerNext();
    assert.deepEqual(await Promise.all(later), [10, 11, 12, 13, 14, 15]);
    assert.deepEqual(batches, [[1], [10, 11, 12], [13, 14, 15]], 'the waiting calls, maxBatch at a time, one batch out at a time');
  });

  test('a failed batch fails every caller in it, and the next batch is unaffected', async () => {
    let fail = true;
    const batcher = new TurnBatcher<number, number>(async (inputs) => {
      if (fail) throw new Error('store down');
      return inputs;
    });
    const outcomes = await Promise.allSettled([batcher.add(1), batcher.add(2)]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['rejected', 'rejected'],
    );
    fail = false;
    assert.equal(await batcher.add(3), 3);
  });

  test('a batch that answers with the wrong number of results fails its callers instead of misassigning', async () => {
    const batcher = new TurnBatcher<number, number>(async () => [1]);
    const outcomes = await Promise.allSettled([batcher.add(1), batcher.add(2)]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['rejected', 'rejected'],
    );
  });

  test('a batch function that throws synchronously fails its callers', async () => {
    const batcher = new TurnBatcher<number, number>(() => {
      throw new Error('sync throw');
    });
    await assert.rejects(batcher.add(1), /sync throw/);
  });
});
