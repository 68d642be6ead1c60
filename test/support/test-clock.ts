/**
 * Time for the real binary in end-to-end tests: a file the service's store clock reads
 * (`NOSTR_PUSH_TEST_CLOCK_FILE`, see src/util/file-clock.ts). The test moves time by rewriting the
 * file and waits until each process says it took the new time, so nothing waits out a window.
 */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_CLOCK_FILE_ENV, TEST_CLOCK_MOVED_MESSAGE } from '../../src/util/file-clock.ts';
import type { ServiceProcess } from './service-process.ts';

export class TestClockFile {
  readonly path: string;
  private readonly dir: string;
  private currentMs: number;

  constructor(startMs: number = Date.now()) {
    this.dir = mkdtempSync(join(tmpdir(), 'np-clock-'));
    this.path = join(this.dir, 'now-ms');
    this.currentMs = startMs;
    this.write();
  }

  /** The environment entry that points a service at this clock. */
  env(): Record<string, string> {
    return { [TEST_CLOCK_FILE_ENV]: this.path };
  }

  nowMs(): number {
    return this.currentMs;
  }

  nowSecs(): number {
    return Math.floor(this.currentMs / 1000);
  }

  /**
   * Move time forward by `ms` and resolve once every one of `services` has taken the new time.
   * Time only moves forward here, so each wait is for a time no process has logged before.
   */
  async advance(ms: number, services: readonly ServiceProcess[], timeoutMs = 30_000): Promise<void> {
    if (ms <= 0) throw new Error('a test clock only moves forward');
    this.currentMs += ms;
    this.write();
    const target = this.currentMs;
    await Promise.all(
      services.map((s) =>
        s.waitForLog((l) => l.msg.startsWith(TEST_CLOCK_MOVED_MESSAGE) && l.clockMs === target, timeoutMs, `the clock at ${target}`),
      ),
    );
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  private write(): void {
    const staging = `${this.path}.next`;
    writeFileSync(staging, String(this.currentMs));
    renameSync(staging, this.path);
  }
}
