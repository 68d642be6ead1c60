/**
 * The package is consumable as published: its build (types generated from the server's OpenAPI
 * document, then compiled; `npm run build:client`, which `npm test` runs first) packed with
 * `npm pack`, and the tarball installed into an empty folder, where
 * Node imports it through its `exports` and signs a registration with it, and TypeScript resolves
 * its `types`: a correct use compiles and a wrong one (a transport the server does not have) does not.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

interface PackResult {
  filename: string;
  files: { path: string }[];
}

const CONSUMER_JS = `
import { createPushClient, connectInboxSocket, localSigner, registrationEvent, nip98Authorization } from '@nostr-push/client';
import { generateSecretKey, getPublicKey, verifyEvent } from 'nostr-tools/pure';
const service = getPublicKey(generateSecretKey());
const signer = localSigner(generateSecretKey());
const event = await registrationEvent(signer, { token: 'packed-token' }, { servicePubkey: service });
const authorization = await nip98Authorization(signer, { url: 'https://push.example.com/v1/devices', method: 'GET' });
console.log(JSON.stringify({
  kind: event.kind,
  verified: verifyEvent(event),
  pTag: event.tags[0][1] === service,
  authorization: authorization.startsWith('Nostr '),
  functions: [typeof createPushClient, typeof connectInboxSocket],
}));
`;

const CONSUMER_TS = `
import { createPushClient, localSigner, type InboxCounts, type PushClient } from '@nostr-push/client';
const client: PushClient = createPushClient({ baseUrl: 'https://push.example.com', signer: localSigner(new Uint8Array(32).fill(1)) });
export async function badge(): Promise<number> {
  const counts: InboxCounts = await client.inboxCounts();
  return counts.totalNew;
}
export const registered = client.registerDevice('token', { transport: 'apns', sandbox: true, locale: 'en' });
`;

const WRONG_TS = `
import { createPushClient, localSigner } from '@nostr-push/client';
const client = createPushClient({ baseUrl: 'https://push.example.com', signer: localSigner(new Uint8Array(32).fill(1)) });
export const registered = client.registerDevice('token', { transport: 'carrier-pigeon' });
`;

const TSCONFIG = JSON.stringify({
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noEmit: true,
    skipLibCheck: false,
    types: [],
  },
});

/** Every file under `dir`. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/**
 * Why dist/ is not the build of src/ (missing, or older than a source file), or null. The test
 * packs what the build made rather than building itself: rebuilding would delete dist/ under the
 * other tests that import the package by its name (docs/app-developers.md's runnable block).
 */
function staleBuild(): string | null {
  const dist = join(PACKAGE_DIR, 'dist');
  if (!existsSync(join(dist, 'index.js'))) return 'packages/client/dist/ is missing';
  const built = Math.min(...filesUnder(dist).map((file) => statSync(file).mtimeMs));
  const newer = filesUnder(join(PACKAGE_DIR, 'src')).find((file) => statSync(file).mtimeMs > built);
  return newer === undefined ? null : `${newer} is newer than packages/client/dist/`;
}

test('npm pack of the built package installs into an empty folder, imports on Node and type checks', async () => {
  const stale = staleBuild();
  assert.equal(stale, null, `${stale ?? ''}: run \`npm run build:client\` first (npm test does)`);
  const packDir = mkdtempSync(join(tmpdir(), 'np-client-pack-'));
  const consumerDir = mkdtempSync(join(tmpdir(), 'np-client-consumer-'));
  try {
    const packed = await run(npm, ['pack', '--json', '--pack-destination', packDir], { cwd: PACKAGE_DIR, timeout: 120_000 });
    const [result] = JSON.parse(packed.stdout) as PackResult[];
    assert.ok(result, 'npm pack reported its tarball');
    const files = result.files.map((f) => f.path).sort();
    for (const wanted of ['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/generated/openapi.d.ts'])
      assert.ok(files.includes(wanted), `the tarball holds ${wanted}`);
    assert.deepEqual(
      files.filter((f) => f.startsWith('src/') || f.startsWith('test/') || f.startsWith('scripts/')),
      [],
      'no source, tests or build scripts',
    );

    writeFileSync(join(consumerDir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await run(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund', join(packDir, result.filename)], {
      cwd: consumerDir,
      timeout: 300_000,
    });

    writeFileSync(join(consumerDir, 'consumer.mjs'), CONSUMER_JS);
    const imported = await run(process.execPath, ['consumer.mjs'], { cwd: consumerDir, timeout: 60_000 });
    assert.deepEqual(JSON.parse(imported.stdout), {
      kind: 3079,
      verified: true,
      pTag: true,
      authorization: true,
      functions: ['function', 'function'],
    });

    writeFileSync(join(consumerDir, 'tsconfig.json'), TSCONFIG);
    writeFileSync(join(consumerDir, 'consumer.ts'), CONSUMER_TS);
    await run(process.execPath, [tsc, '-p', consumerDir], { cwd: consumerDir, timeout: 120_000 }).catch((err: unknown) => {
      const { stdout } = err as { stdout?: string };
      assert.fail(`a correct use of the published types does not compile:\n${stdout ?? String(err)}`);
    });
    writeFileSync(join(consumerDir, 'consumer.ts'), WRONG_TS);
    const wrong = await run(process.execPath, [tsc, '-p', consumerDir], { cwd: consumerDir, timeout: 120_000 }).then(
      () => '',
      (err: unknown) => (err as { stdout?: string }).stdout ?? '',
    );
    assert.match(wrong, /consumer\.ts.*error TS2322.*carrier-pigeon/s, 'the published types refuse a transport the server does not have');
  } finally {
    rmSync(packDir, { recursive: true, force: true });
    rmSync(consumerDir, { recursive: true, force: true });
  }
});
