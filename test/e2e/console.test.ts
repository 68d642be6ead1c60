/**
 * The operator console end to end, in a real headless Chromium (test/support/browser.ts) against
 * the real binary with its default roles on SQLite, a real relay, nostr-tools clients and the FCM
 * fake, as a new operator meets it: the admin key printed at the first start logs in, a wrong key
 * is refused; the overview shows the relay connected and a pushes plot that moves after 50 likes;
 * a dead letter made by a failing FCM fake is listed, replayed behind a confirmation, and then
 * delivered exactly once; the user page finds a registered npub; the ntfy page lists a topic a
 * message was published to; a state-changing request without the CSRF token is refused. A
 * screenshot of each page goes to `.tmp/console-e2e/`.
 *
 * The console bundle is built here first (`scripts/build-console.mjs`, about a second), so the test
 * also runs on its own, without `npm run build`.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'puppeteer-core';
import { REACTION, REGISTER_TOKEN, VIDEO } from '../../src/nostr/kinds.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import { npubEncode } from '../../src/nostr/nip19.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { launchBrowser, type TestBrowser } from '../support/browser.ts';
import { controlEvent, makeUser, type TestUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { fcmErrors, startFcmFake, type FcmFake } from '../support/fcm-fake.ts';
import { eventually, HANG_DEADLINE_FLOOR_MS, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCREENSHOTS = join(ROOT, '.tmp', 'console-e2e');
const WAIT_MS = 60_000;
const LIKES = 50;
const MAX_ATTEMPTS = 2;
const ALICE_TOKEN = 'alice-phone';
const DOOMED_TOKEN = 'bob-doomed-phone';
const NTFY_TOPIC = 'console-e2e-alerts';
const now = () => Math.floor(Date.now() / 1000);
const hex = (n: number): string => n.toString(16).padStart(64, '0');

describe('the operator console in a real browser', () => {
  let relay: TestRelay;
  let fcm: FcmFake;
  let dataDir: string;
  let reader: StorePort;
  let service: ServiceProcess;
  let browser: TestBrowser;
  let page: Page;
  let adminKey: string;
  const serviceKey = makeUser();
  const alice = makeUser();
  const bob = makeUser();
  /** Errors the page logged (a script error, a Content-Security-Policy violation). */
  const pageErrors: string[] = [];

  const pushesTo = (token: string) => fcm.messages.filter((m) => m.token === token).length;
  const likeOf = (liker: TestUser, owner: TestUser, n: number) =>
    signEvent(
      {
        kind: REACTION,
        created_at: now(),
        tags: [
          ['e', hex(n)],
          ['a', `${VIDEO}:${owner.pubkey}:console-vine-${n}`],
          ['p', owner.pubkey],
          ['k', String(VIDEO)],
        ],
        content: '+',
      },
      liker.secret,
    );
  const register = async (user: TestUser, token: string) => {
    await publish(relay.url, controlEvent(user, REGISTER_TOKEN, { token }, serviceKey.pubkey));
    await eventually(async () => ((await reader.tokenOwner(token)) === user.pubkey ? true : undefined), WAIT_MS, `${token} registered`);
  };
  const shoot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const go = async (linkText: string) => {
    await page.locator(`nav a::-p-text(${linkText})`).click();
    await page.waitForFunction((title: string) => document.querySelector('h1')?.textContent === title, {}, linkText);
  };
  const textOf = (selector: string) => page.$eval(selector, (el) => el.textContent);

  before(async () => {
    const built = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-console.mjs')], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(built.status, 0, `the console bundle builds: ${built.stderr}`);
    mkdirSync(SCREENSHOTS, { recursive: true });
    relay = await startTestRelay();
    fcm = await startFcmFake();
    dataDir = mkdtempSync(join(tmpdir(), 'np-console-'));
    const storePath = join(dataDir, 'nostr-push.sqlite');
    service = await startServiceProcess({
      env: {
        NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: serviceKey.secret,
        NOSTR_PUSH__NOSTR__RELAYS: relay.url,
        NOSTR_PUSH__NOSTR__QUERY_TIMEOUT_SECS: '2',
        NOSTR_PUSH__STORE__URL: `sqlite:${storePath}`,
        NOSTR_PUSH__DATA_DIR: dataDir,
        NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
        NOSTR_PUSH__QUEUE__MAX_ATTEMPTS: String(MAX_ATTEMPTS),
        // Every like pushes at once: no coalescing into summaries, no per-recipient throttle.
        NOSTR_PUSH__SERVICE__COALESCE_IMMEDIATE_LIMIT: '1000',
        NOSTR_PUSH__SERVICE__RECIPIENT_THROTTLE_CAPACITY: '1000',
        NOSTR_PUSH__SERVICE__RECIPIENT_DAILY_CAP: '1000',
        // Short windows instead of waiting: a heartbeat and a sample every second.
        NOSTR_PUSH__CONSOLE__HEARTBEAT_INTERVAL_SECS: '1',
        NOSTR_PUSH__CONSOLE__SAMPLE_INTERVAL_SECS: '1',
        NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: fcm.writeCredentials(dataDir),
        NOSTR_PUSH__FIREBASE__PROJECT_ID: 'fake-project',
        NOSTR_PUSH__FIREBASE__API_BASE_URL: fcm.baseUrl,
      },
    });
    await service.waitForLog((l) => l.msg.startsWith('no admin key existed'), WAIT_MS, 'the first admin key');
    // stderr and stdout are separate pipes: the printed key may arrive after the log line about it.
    const printed = await eventually(
      () => (/^npk_[A-Za-z0-9_-]+$/m.test(service.stderr.join('')) ? service.stderr.join('') : undefined),
      WAIT_MS,
      'the printed admin key on stderr',
    );
    assert.ok(printed.includes(npubEncode(serviceKey.pubkey)), 'with the service npub');
    adminKey = /^npk_[A-Za-z0-9_-]+$/m.exec(printed)?.[0] ?? '';
    assert.ok(adminKey, 'the key alone on its line');
    await service.waitForLog((l) => l.msg === 'live subscriptions open' && l.relay === relay.url, WAIT_MS, 'the relay live');
    reader = await openSqliteStore({ path: storePath });
    await register(alice, ALICE_TOKEN);
    await register(bob, DOOMED_TOKEN);
    browser = await launchBrowser();
    page = await browser.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text());
    });
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    page.setDefaultTimeout(HANG_DEADLINE_FLOOR_MS);
    await page.setViewport({ width: 1280, height: 900 });
  });

  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- a failed before() leaves some unassigned */
  after(async () => {
    await browser?.close();
    await service?.stop();
    await reader?.close();
    await Promise.all([relay?.stop(), fcm?.stop()]);
    rmSync(dataDir, { recursive: true, force: true });
  });
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */

  test('the first start printed the key once, on stderr, and never in the log', () => {
    assert.equal(service.stderr.join('').split(adminKey).length - 1, 1);
    assert.equal(service.logs.filter((l) => JSON.stringify(l).includes(adminKey)).length, 0);
  });

  test('a wrong key is refused; the printed admin key logs in', async () => {
    await page.goto(`${service.baseUrl}/console`);
    await page.locator('#key').fill('npk_not-the-key');
    await page.locator('button[type=submit]').click();
    await page.waitForSelector('#login-error');
    assert.match(await textOf('#login-error'), /not an admin key/);
    await shoot('login-refused');
    await page.locator('#key').fill(adminKey);
    await page.locator('button[type=submit]').click();
    await page.waitForSelector('nav a[aria-current=page]');
    assert.equal(await textOf('h1'), 'Overview');
    const cookies = await browser.browser.cookies();
    const session = cookies.find((c) => c.name === 'np_console');
    assert.ok(session, 'the session cookie is set');
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Strict');
    assert.equal(session.path, '/console');
    assert.ok(!page.url().includes(adminKey), 'the key is never in a URL');
    assert.equal(service.logs.filter((l) => JSON.stringify(l).includes(adminKey)).length, 0, 'the login did not log the key');
  });

  test('the overview shows the relay connected and a plot that moves after 50 likes', async () => {
    await page.waitForFunction(
      (url: string) =>
        [...document.querySelectorAll('[data-testid=relays] tr')].some(
          (tr) => tr.textContent.includes(url) && tr.textContent.includes('connected'),
        ),
      {},
      relay.url,
    );
    await page.waitForSelector('[data-testid=pushes-plot] canvas');
    const plotBefore = await page.$eval('[data-testid=pushes-plot] canvas', (c) => c.toDataURL());
    const likers = Array.from({ length: LIKES }, () => makeUser());
    await publish(relay.url, ...likers.map((liker, i) => likeOf(liker, alice, i)));
    await eventually(() => (pushesTo(ALICE_TOKEN) >= LIKES ? true : undefined), WAIT_MS, `${LIKES} pushes to alice`);
    await page.waitForFunction(
      (likes: number) => Number(String(document.querySelector('[data-series="fcm:ok"]')?.textContent).replace(/\D/g, '')) >= likes,
      {},
      LIKES,
    );
    await page.waitForFunction(
      (before: string) => document.querySelector<HTMLCanvasElement>('[data-testid=pushes-plot] canvas')?.toDataURL() !== before,
      {},
      plotBefore,
    );
    assert.equal(pushesTo(ALICE_TOKEN), LIKES);
    await shoot('overview');
  });

  test('a dead letter from a failing FCM is listed, replayed after a confirmation, and then delivered once', async () => {
    fcm.script({ token: DOOMED_TOKEN, ...fcmErrors.unavailable(1), times: MAX_ATTEMPTS });
    await publish(relay.url, likeOf(alice, bob, 1_000));
    await eventually(async () => ((await reader.queueStats('outbound')).dead === 1 ? true : undefined), WAIT_MS, 'the dead letter');
    assert.equal(pushesTo(DOOMED_TOKEN), 0);
    await go('Dead letters');
    await page.waitForSelector('[data-testid=dead-letters] tbody tr');
    const row = await textOf('[data-testid=dead-letters] tbody tr');
    assert.match(row, /max attempts exceeded/);
    assert.ok(row.includes(bob.pubkey), 'the row names the recipient');
    await shoot('dead-letters');
    await page.locator('[data-testid=dead-letters] tbody tr button::-p-text(Replay)').click();
    await page.waitForSelector('dialog[open]');
    await shoot('dead-letters-confirm');
    await page.locator('dialog[open] button::-p-text(Replay)').click();
    await page.waitForSelector('[data-testid=dlq-empty]');
    assert.match(await textOf('.status'), /Replayed/);
    await eventually(() => (pushesTo(DOOMED_TOKEN) >= 1 ? true : undefined), WAIT_MS, 'the replayed push');
    await eventually(
      async () => {
        const stats = await reader.queueStats('outbound');
        return stats.ready + stats.leased + stats.dead === 0 ? true : undefined;
      },
      WAIT_MS,
      'the outbound queue settled',
    );
    assert.equal(pushesTo(DOOMED_TOKEN), 1, 'delivered exactly once');
  });

  test('the user page finds a registered npub, its token redacted', async () => {
    await go('User');
    await page.locator('#user-key').fill(npubEncode(alice.pubkey));
    await page.locator('form[role=search] button[type=submit]').click();
    await page.waitForSelector('[data-testid=devices]');
    const devices = await textOf('[data-testid=devices]');
    assert.match(devices, /fcm/);
    assert.ok(!devices.includes(ALICE_TOKEN), 'the token is redacted');
    assert.ok((await textOf('[data-testid=user]')).includes(alice.pubkey));
    await shoot('user');
  });

  test('the ntfy page lists a topic a message was published to, with its stored message', async () => {
    const published = await fetch(`${service.baseUrl}/${NTFY_TOPIC}`, { method: 'POST', body: 'hello from the console test' });
    assert.equal(published.status, 200, await published.clone().text());
    await go('ntfy');
    await page.waitForSelector('[data-testid=ntfy-topics] tbody tr');
    const rows = await page.$$eval('[data-testid=ntfy-topics] tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('th, td')].map((cell) => cell.textContent.trim())),
    );
    assert.deepEqual(
      rows.find((cells) => cells[0] === NTFY_TOPIC),
      [NTFY_TOPIC, '0', '1'],
      `the topic, no subscription, one stored message: ${JSON.stringify(rows)}`,
    );
    await shoot('ntfy');
  });

  test('a state-changing request without the CSRF token is refused', async () => {
    const answer = await page.evaluate(async () => {
      const response = await fetch('/console/api/v1/admin/dlq/replay?queue=outbound', { method: 'POST', credentials: 'same-origin' });
      return { status: response.status, body: (await response.json()) as { code: string } };
    });
    assert.equal(answer.status, 403);
    assert.equal(answer.body.code, 'CONSOLE_CSRF_INVALID');
  });

  test('on a phone-sized screen the page still works', async () => {
    await page.setViewport({ width: 390, height: 844, isMobile: true });
    await go('Overview');
    await page.waitForSelector('[data-testid=pushes-plot] canvas');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no sideways scrolling of the page (${overflow}px)`);
    await shoot('overview-phone');
  });

  test('the page logged no error (no script error, no Content-Security-Policy violation)', () => {
    // The refused login and the refused CSRF request are the tests' own: their 401 and 403 are logged as failed loads.
    const unexpected = pageErrors.filter((e) => !/status of (401|403)/.test(e));
    assert.deepEqual(unexpected, []);
  });
});
