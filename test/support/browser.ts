/**
 * A real browser for tests: the distribution's Chromium (`apt-get install chromium`; .ci/run
 * installs it), headless, driven over the DevTools protocol by puppeteer-core (which never
 * downloads a browser of its own). Each launch gets its own profile directory, and `close()` makes
 * sure the browser process is gone by its pid even when the polite close hangs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

/** Debian's Chromium (a wrapper script that execs the browser, so its pid is the browser's). */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Launch and protocol deadlines: only a hang reaches them (a cold start on a loaded machine takes seconds). */
const LAUNCH_TIMEOUT_MS = 60_000;
const CLOSE_GRACE_MS = 10_000;

export interface TestBrowser {
  browser: Browser;
  pid: number;
  newPage(): Promise<Page>;
  /** Close the browser, kill its process by pid if it outlives the grace, remove its profile. */
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<TestBrowser> {
  const profileDir = mkdtempSync(join(tmpdir(), 'np-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    timeout: LAUNCH_TIMEOUT_MS,
    protocolTimeout: LAUNCH_TIMEOUT_MS,
    userDataDir: profileDir,
    args: [
      // Tests run as root (CI containers, this machine), and Chromium refuses to start its
      // sandbox as root. The pages it opens are the tests' own, on loopback, so running them
      // without the sandbox exposes nothing.
      '--no-sandbox',
      // Containers often give /dev/shm only 64 MiB, which Chromium's renderers outgrow.
      '--disable-dev-shm-usage',
      '--no-first-run',
      '--no-default-browser-check',
    ],
  });
  const pid = browser.process()?.pid;
  if (pid === undefined) {
    await browser.close();
    throw new Error('Chromium started without a process id');
  }
  return {
    browser,
    pid,
    newPage: () => browser.newPage(),
    async close() {
      try {
        await Promise.race([browser.close(), new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref())]);
      } catch {
        // Already gone or the connection broke: the kill below settles it.
      }
      if (isAlive(pid)) process.kill(pid, 'SIGKILL');
      rmSync(profileDir, { recursive: true, force: true });
    },
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
