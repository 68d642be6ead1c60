import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Clock } from '../store/port.ts';
import type { Logger } from '../observability/logger.ts';

/**
 * The environment variable that points the real binary's store clock at a file, for end-to-end
 * tests that must control time (coalescing buckets, scheduled sends, retry schedules, quiet hours)
 * without sleeping: DESIGN §2's "tests inject a clock", carried across a process boundary.
 * Honoured only under `NODE_ENV=test`, so no production process can be steered by a file.
 */
export const TEST_CLOCK_FILE_ENV = 'NOSTR_PUSH_TEST_CLOCK_FILE';

/** The log message a {@link FileClock} writes each time it takes a new time (field `clockMs`). */
export const TEST_CLOCK_MOVED_MESSAGE = 'test clock moved';

/**
 * A clock frozen at the unix-millisecond time written in a file, following every rewrite of it.
 * Writers replace the file atomically (write beside it, then rename), so a read never sees half a
 * number; the directory is watched because a rename replaces the file's inode. Every process of a
 * fleet pointed at one file moves together, as replicas reading Redis `TIME` would.
 */
export class FileClock implements Clock {
  private currentMs: number;
  private readonly watcher: FSWatcher;

  constructor(
    private readonly path: string,
    private readonly logger: Logger,
  ) {
    this.currentMs = FileClock.read(path);
    const name = basename(path);
    this.watcher = watch(dirname(path), (_event, changed) => {
      if (changed === name) this.reload();
    });
    // The watcher must not keep a process alive that has nothing else to do.
    this.watcher.unref();
    logger.warn({ clockMs: this.currentMs, path }, `${TEST_CLOCK_MOVED_MESSAGE} (this process takes its time from a test clock file)`);
  }

  nowMs(): number {
    return this.currentMs;
  }

  close(): void {
    this.watcher.close();
  }

  private reload(): void {
    let next: number;
    try {
      next = FileClock.read(this.path);
    } catch (err) {
      // Between the writer's unlink and rename, or a torn write by hand: keep the last good time.
      this.logger.warn({ path: this.path, err: (err as Error).message }, 'test clock file unreadable; keeping the last time');
      return;
    }
    if (next === this.currentMs) return;
    this.currentMs = next;
    this.logger.info({ clockMs: next }, TEST_CLOCK_MOVED_MESSAGE);
  }

  private static read(path: string): number {
    const text = readFileSync(path, 'utf8').trim();
    const value = Number(text);
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(value))
      throw new Error(`${path} does not hold a unix time in ms: ${JSON.stringify(text.slice(0, 40))}`);
    return value;
  }
}

/**
 * The clock the environment asks for: a {@link FileClock} when {@link TEST_CLOCK_FILE_ENV} is set
 * under `NODE_ENV=test`, else undefined (the store's own clock). Set outside tests, it is refused
 * loudly rather than ignored, so nobody believes time is controlled when it is not.
 */
export function testClockFromEnvironment(env: NodeJS.ProcessEnv, logger: Logger): FileClock | undefined {
  const path = env[TEST_CLOCK_FILE_ENV];
  if (path === undefined || path === '') return undefined;
  if (env.NODE_ENV !== 'test') throw new Error(`${TEST_CLOCK_FILE_ENV} is only honoured with NODE_ENV=test`);
  return new FileClock(path, logger);
}
