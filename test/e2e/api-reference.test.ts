/**
 * Issue 37, item 3: the rendered reference at `/v1/docs`, in a real headless Chromium
 * (test/support/browser.ts) against the real binary. The page loads Swagger UI from the service's
 * own files (no other origin is asked for anything), renders the summary of every operation of
 * `/v1/openapi.json`, and runs under the console's strict Content-Security-Policy with no
 * violation and no script error.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { generateSecretKey } from '../../src/nostr/keys.ts';
import { launchBrowser, type TestBrowser } from '../support/browser.ts';
import { HANG_DEADLINE_FLOOR_MS, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';

/** What a page records of its Content-Security-Policy violations (set up before any of its scripts run). */
const RECORD_VIOLATIONS = `
  window.__cspViolations = [];
  document.addEventListener('securitypolicyviolation', (e) => {
    window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI);
  });
`;

describe('the API reference at /v1/docs in a real browser', () => {
  let service: ServiceProcess;
  let browser: TestBrowser;
  let page: Page;
  let dataDir: string;
  const pageErrors: string[] = [];
  const requested: string[] = [];

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'np-api-reference-'));
    service = await startServiceProcess({
      env: {
        NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: generateSecretKey(),
        NOSTR_PUSH__STORE__URL: `sqlite:${join(dataDir, 'nostr-push.sqlite')}`,
        NOSTR_PUSH__DATA_DIR: dataDir,
      },
    });
    browser = await launchBrowser();
    page = await browser.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text());
    });
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    page.on('request', (request) => requested.push(request.url()));
    page.on('response', (response) => {
      if (response.status() >= 400) pageErrors.push(`${response.status()} ${response.url()}`);
    });
    page.setDefaultTimeout(HANG_DEADLINE_FLOOR_MS);
    await page.evaluateOnNewDocument(RECORD_VIOLATIONS);
  });

  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- a failed before() leaves some unassigned */
  after(async () => {
    await browser?.close();
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */

  test('the page is served under the strict policy and renders every operation of the document', async () => {
    const doc = (await (await fetch(`${service.baseUrl}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { summary: string; operationId: string }>>;
    };
    const summaries = Object.values(doc.paths).flatMap((item) => Object.values(item).map((operation) => operation.summary));
    assert.ok(summaries.length >= 30, `${summaries.length} operations`);

    const response = await page.goto(`${service.baseUrl}/v1/docs`);
    assert.equal(response?.status(), 200);
    const policy = response.headers()['content-security-policy'] ?? '';
    assert.match(policy, /script-src 'self';/);
    assert.doesNotMatch(policy, /unsafe-inline|unsafe-eval/);

    await page.waitForSelector('.opblock-summary-description');
    const shown = await page.$$eval('.opblock-summary-description', (nodes) => nodes.map((n) => n.textContent.trim()));
    for (const summary of summaries) assert.ok(shown.includes(summary), `"${summary}" is shown`);
    const title = await page.$eval('.info .title', (n) => n.textContent);
    assert.match(title, /nostr-push API/);
  });

  test('nothing is fetched from another origin, and no policy violation or script error was logged', async () => {
    const origin = new URL(service.baseUrl).origin;
    const elsewhere = requested.filter((url) => !url.startsWith(origin) && !url.startsWith('data:'));
    assert.deepEqual(elsewhere, []);
    assert.ok(requested.includes(`${origin}/v1/docs/assets/swagger-ui-bundle.js`), 'Swagger UI from the service');
    assert.ok(requested.includes(`${origin}/v1/openapi.json`), 'the document, relative to the page');
    const violations = await page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations);
    assert.deepEqual(violations, []);
    assert.deepEqual(pageErrors, []);
  });
});
