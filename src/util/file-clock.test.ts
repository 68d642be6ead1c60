import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createLogger } from '../observability/logger.ts';
import { FileClock, TEST_CLOCK_FILE_ENV, testClockFromEnvironment } from './file-clock.ts';

const logger = createLogger({ level: 'silent' });

function replace(path: string, text: string): void {
  writeFileSync(`${path}.next`, text);
  renameSync(`${path}.next`, path);
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('a file clock reads the time in its file and follows each atomic rewrite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'np-file-clock-'));
  const path = join(dir, 'now');
  writeFileSync(path, '1000');
  const clock = new FileClock(path, logger);
  try {
    assert.equal(clock.nowMs(), 1000);
    replace(path, '61000\n');
    await until(() => clock.nowMs() === 61000, 'the rewrite');
    // A file that does not hold a time is ignored; the last good time stays.
    replace(path, 'soon');
    replace(path, '62000');
    await until(() => clock.nowMs() === 62000, 'the next good time');
  } finally {
    clock.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the environment variable is refused outside NODE_ENV=test, and a bad file stops the start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'np-file-clock-'));
  const path = join(dir, 'now');
  try {
    writeFileSync(path, 'not a time');
    assert.equal(testClockFromEnvironment({}, logger), undefined);
    assert.throws(
      () => testClockFromEnvironment({ [TEST_CLOCK_FILE_ENV]: path, NODE_ENV: 'production' }, logger),
      /only honoured with NODE_ENV=test/,
    );
    assert.throws(() => testClockFromEnvironment({ [TEST_CLOCK_FILE_ENV]: path, NODE_ENV: 'test' }, logger), /does not hold a unix time/);
    writeFileSync(path, '5');
    const clock = testClockFromEnvironment({ [TEST_CLOCK_FILE_ENV]: path, NODE_ENV: 'test' }, logger);
    assert.equal(clock?.nowMs(), 5);
    clock.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
