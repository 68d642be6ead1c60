import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../observability/logger.ts';
import { ManualClock } from '../util/clock.ts';
import { LogThrottle } from './log-throttle.ts';

test('LogThrottle writes one line per key per interval and reports what it suppressed', () => {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger({ level: 'warn', destination });
  const clock = new ManualClock();
  const throttle = new LogThrottle(clock, 1_000);
  for (let i = 0; i < 5; i++) throttle.warn(logger, 'k', { i }, 'bad');
  throttle.warn(logger, 'other', {}, 'bad');
  clock.advance(1_000);
  throttle.warn(logger, 'k', { i: 5 }, 'bad');
  assert.equal(lines.length, 3);
  assert.equal(lines[0]?.i, 0);
  assert.equal(lines[2]?.suppressed, 4);
});
