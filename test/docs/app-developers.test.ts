/**
 * docs/app-developers.md cannot rot: every ```js runnable block runs, in order, against the real
 * binary with a real relay and the FCM fake, as a Node 20 script of its own (the way a developer
 * pastes it); and every ```json example="…" block equals what the service's code builds for that
 * push today (`payload-examples.ts`). `NOSTR_PUSH_WRITE_DOC_EXAMPLES=1` rewrites the example blocks
 * from the code instead of comparing (then review the diff).
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { makeUser } from '../support/nostr-client.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { startFcmFake, type FcmFake } from '../support/fcm-fake.ts';
import { eventually, freePort, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { exampleBlocks } from './payload-examples.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const GUIDE = join(ROOT, 'docs', 'app-developers.md');
const run = promisify(execFile);

interface FencedBlock {
  language: string;
  info: string;
  body: string;
  /** Offsets of the body in the guide's text. */
  start: number;
  end: number;
}

function fencedBlocks(text: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  for (const match of text.matchAll(/^```(\w*)([^\n]*)\n([\s\S]*?)^```$/gm)) {
    const start = match.index + match[0].indexOf('\n') + 1;
    const body = match[3] ?? '';
    blocks.push({ language: match[1] ?? '', info: (match[2] ?? '').trim(), body, start, end: start + body.length });
  }
  return blocks;
}

const exampleName = (block: FencedBlock) => /^example="([^"]+)"$/.exec(block.info)?.[1];

describe('docs/app-developers.md', () => {
  test('every example push equals what the code builds, and every push type the code builds is shown', () => {
    const text = readFileSync(GUIDE, 'utf8');
    const built = exampleBlocks();
    const shown = fencedBlocks(text).filter((b) => exampleName(b) !== undefined);
    if (process.env.NOSTR_PUSH_WRITE_DOC_EXAMPLES === '1') {
      let rewritten = text;
      for (const block of [...shown].reverse()) {
        const value = built.get(exampleName(block) ?? '');
        if (value === undefined) continue;
        rewritten = `${rewritten.slice(0, block.start)}${JSON.stringify(value, null, 2)}\n${rewritten.slice(block.end)}`;
      }
      writeFileSync(GUIDE, rewritten);
      return;
    }
    for (const block of shown) {
      const name = exampleName(block) ?? '';
      assert.ok(built.has(name), `the guide shows an example "${name}" the code does not build`);
      assert.deepEqual(JSON.parse(block.body) as unknown, built.get(name), `example "${name}" differs from what the code builds`);
    }
    const names = new Set(shown.map(exampleName));
    for (const name of built.keys()) assert.ok(names.has(name), `the guide lacks the example "${name}"`);
  });

  describe('runnable blocks against the real binary', () => {
    let relay: TestRelay;
    let fcm: FcmFake;
    let dataDir: string;
    let scriptsDir: string;
    let service: ServiceProcess;
    const serviceKey = makeUser();
    const user = makeUser();
    const token = `guide-device-${process.pid}`;

    before(async () => {
      relay = await startTestRelay();
      fcm = await startFcmFake();
      dataDir = mkdtempSync(join(tmpdir(), 'np-guide-'));
      // Inside the repository, so the scripts import nostr-tools and ws from its node_modules.
      scriptsDir = join(ROOT, '.tmp', `guide-${process.pid}`);
      mkdirSync(scriptsDir, { recursive: true });
      const port = await freePort();
      service = await startServiceProcess({
        port,
        env: {
          // The NIP-9a callback URLs are made from it (and NIP-98 is checked against it).
          NOSTR_PUSH__SERVER__PUBLIC_URL: `http://127.0.0.1:${port}`,
          NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: serviceKey.secret,
          NOSTR_PUSH__NOSTR__RELAYS: relay.url,
          NOSTR_PUSH__NOSTR__QUERY_TIMEOUT_SECS: '2',
          NOSTR_PUSH__STORE__URL: `sqlite:${join(dataDir, 'nostr-push.sqlite')}`,
          NOSTR_PUSH__DATA_DIR: dataDir,
          NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
          NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: fcm.writeCredentials(dataDir),
          NOSTR_PUSH__FIREBASE__PROJECT_ID: 'fake-project',
          NOSTR_PUSH__FIREBASE__API_BASE_URL: fcm.baseUrl,
        },
      });
      await service.waitForLog((l) => l.msg === 'live subscriptions open', 20_000, 'the live subscriptions');
    });

    // A failed before() leaves some of these unassigned: stop whatever was started.
    /* eslint-disable @typescript-eslint/no-unnecessary-condition */
    after(async () => {
      await service?.stop();
      await Promise.all([relay?.stop(), fcm?.stop()]);
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(scriptsDir, { recursive: true, force: true });
    });
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */

    test('each runs on Node 20 in order: the quickstart ends in a like push, the NIP-9a example in a relayEvent push', async () => {
      const runnable = fencedBlocks(readFileSync(GUIDE, 'utf8')).filter((b) => b.info === 'runnable');
      assert.ok(runnable.length >= 4, 'the guide has its runnable blocks');
      const env = { ...process.env, PUSH_URL: service.baseUrl, RELAY_URL: relay.url, USER_SECRET: user.secret, FCM_TOKEN: token };
      for (const [index, block] of runnable.entries()) {
        assert.equal(block.language, 'js', `runnable block ${index + 1} is JavaScript`);
        const script = join(scriptsDir, `block-${index + 1}.mjs`);
        writeFileSync(script, block.body);
        try {
          await run(process.execPath, [script], { env, cwd: ROOT, timeout: 60_000 });
        } catch (err) {
          const { stderr, stdout } = err as { stderr?: string; stdout?: string };
          assert.fail(`runnable block ${index + 1} failed:\n${block.body.slice(0, 200)}…\n${stdout ?? ''}\n${stderr ?? ''}`);
        }
      }
      const push = await eventually(
        () => fcm.messages.find((m) => m.token === token && m.body.message.data.type === 'like'),
        60_000,
        'the quickstart like pushed to the registered device',
      );
      assert.equal(push.body.message.data.receiverPubkey, user.pubkey);
      assert.equal(push.body.message.data.referencedAddress, `34236:${user.pubkey}:my-first-vine`);
      const relayEvent = await eventually(
        () => fcm.messages.find((m) => m.token === token && m.body.message.data.type === 'relayEvent'),
        60_000,
        "the NIP-9a example's callback POST pushed to the registered device",
      );
      assert.equal(relayEvent.body.message.data.eventId, 'e9'.repeat(32));
      assert.equal(relayEvent.body.message.data.relay, relay.url.endsWith('/') ? relay.url : `${relay.url}/`);
    });
  });
});
