/**
 * ntfy WebSockets against Chromium's own client (issue 19, item 4): the real binary (roles api,
 * pusher, janitor on SQLite), a page in the distribution's headless Chromium that subscribes to
 * `/<topic>/ws` with the browser's `WebSocket`, a message published over HTTP that the page
 * receives whole, and a close started by the page that ends as a clean close on both sides.
 * A screenshot of the page goes to the test's output folder (named in the test's diagnostics).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'puppeteer-core';
import { launchBrowser, type TestBrowser } from '../support/browser.ts';
import {
  eventually,
  freePort,
  HANG_DEADLINE_FLOOR_MS,
  ntfyServiceEnv,
  startServiceProcess,
  type ServiceProcess,
} from '../support/service-process.ts';
import { publish } from './client.ts';

/** The page: subscribes when told, lists what arrives, and closes on request. */
const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>ntfy WebSocket in Chromium</title>
<style>body { font: 16px sans-serif; margin: 2rem; } li { margin: 0.5rem 0; }</style></head>
<body>
<h1>ntfy over Chromium's WebSocket</h1>
<p>State: <strong id="state">idle</strong></p>
<ul id="messages"></ul>
<script>
  window.frames_ = [];
  window.closed_ = null;
  window.subscribe = (url) => {
    const socket = new WebSocket(url);
    window.socket_ = socket;
    socket.onopen = () => { document.getElementById('state').textContent = 'connected'; };
    socket.onmessage = (event) => {
      window.frames_.push(event.data);
      const frame = JSON.parse(event.data);
      if (frame.event !== 'message') return;
      const item = document.createElement('li');
      item.textContent = frame.id + ': ' + frame.message;
      document.getElementById('messages').append(item);
    };
    socket.onclose = (event) => {
      window.closed_ = { code: event.code, reason: event.reason, wasClean: event.wasClean };
      document.getElementById('state').textContent = 'closed (' + event.code + ')';
    };
  };
</script>
</body>
</html>`;

interface NtfyFrame {
  event: string;
  id?: string;
  topic?: string;
  message?: string;
}

describe("ntfy WebSocket subscriptions from Chromium's WebSocket client", () => {
  let dataDir: string;
  let outputDir: string;
  let baseUrl: string;
  let service: ServiceProcess | undefined;
  let chromium: TestBrowser | undefined;
  let page: Page;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'np-browser-ws-data-'));
    // Kept after the run: the screenshot is the evidence that the browser rendered the page.
    outputDir = mkdtempSync(join(tmpdir(), 'np-browser-ws-output-'));
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    service = await startServiceProcess({ env: ntfyServiceEnv({ dataDir, port }) });
    chromium = await launchBrowser();
    page = await chromium.newPage();
    page.setDefaultTimeout(HANG_DEADLINE_FLOOR_MS);
    await page.setContent(PAGE);
  });

  after(async () => {
    // Guards kept: before() may have failed before these were set.
    await chromium?.close();
    await service?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** Open ntfy WebSocket subscriptions, from the service's own gauge. */
  async function openWebSockets(): Promise<number> {
    const text = await (await fetch(`${baseUrl}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('push_ntfy_subscribers{') && l.includes('transport="ws"'));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  }

  test('a message published over HTTP arrives in the page; a close from the page is a clean close', async (t) => {
    const topic = 'upBrowserWs0001';
    const wsUrl = `${baseUrl.replace('http:', 'ws:')}/${topic}/ws`;
    await page.evaluate((url) => {
      (window as unknown as { subscribe: (u: string) => void }).subscribe(url);
    }, wsUrl);
    // ntfy's `open` event: the subscription is in place, so a publish now is not missed.
    await page.waitForFunction(() => (window as unknown as { frames_: string[] }).frames_.some((f) => f.includes('"event":"open"')));
    await eventually(async () => ((await openWebSockets()) === 1 ? true : undefined), 10_000, 'the service to count the WebSocket');

    const body = 'hello from the test, über Chromium ✓';
    const published = await publish(baseUrl, `/${topic}`, body);
    assert.equal(published.status, 200, JSON.stringify(published.body));
    const id = String(published.body.id);

    const received = await page.waitForFunction(
      (messageId: string) =>
        (window as unknown as { frames_: string[] }).frames_.find((f) => (JSON.parse(f) as { id?: string }).id === messageId) ?? false,
      {},
      id,
    );
    const frame = JSON.parse(String(await received.jsonValue())) as NtfyFrame;
    assert.deepEqual(frame, published.body, 'the page got the published message, field for field');
    assert.deepEqual([frame.event, frame.topic, frame.message], ['message', topic, body]);
    // Rendered, not only received: the list item is in the document.
    assert.equal(await page.$eval('#messages li', (li) => li.textContent), `${id}: ${body}`);

    const screenshot = join(outputDir, 'browser-websocket.png');
    await page.screenshot({ path: screenshot, fullPage: true });
    const png = readFileSync(screenshot);
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG');
    t.diagnostic(`screenshot: ${screenshot}`);

    await page.evaluate(() => {
      (window as unknown as { socket_: WebSocket }).socket_.close(1000, 'done');
    });
    const closed = await page.waitForFunction(() => (window as unknown as { closed_: unknown }).closed_ ?? false);
    assert.deepEqual(await closed.jsonValue(), { code: 1000, reason: '', wasClean: true }, 'the server echoed the close: a clean close');
    await eventually(async () => ((await openWebSockets()) === 0 ? true : undefined), 10_000, 'the service to drop the WebSocket');
  });
});
