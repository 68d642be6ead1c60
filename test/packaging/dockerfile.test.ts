/**
 * The Dockerfile, read by a small parser (instructions with their line continuations, grouped by
 * stage): no test here builds the image, since a build fetches the base image from a registry.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { defaultConfig } from '../../src/config/defaults.ts';
import { unknownConfigEnvNames } from './config-keys.ts';

interface Instruction {
  keyword: string;
  args: string;
}

interface Stage {
  from: string;
  name: string | null;
  instructions: Instruction[];
}

interface Dockerfile {
  /** ARGs before the first FROM (they may be used in FROM lines). */
  globalArgs: Record<string, string>;
  stages: Stage[];
}

/** Instructions of a Dockerfile: comments dropped, `\` continuations joined. */
function parseDockerfile(text: string): Dockerfile {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.startsWith('#')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    logical.push(pending + line);
    pending = '';
  }
  const result: Dockerfile = { globalArgs: {}, stages: [] };
  for (const line of logical) {
    const match = /^(\w+)\s+(.*)$/.exec(line);
    assert.ok(match, `not an instruction: ${line}`);
    const keyword = (match[1] ?? '').toUpperCase();
    const args = match[2] ?? '';
    if (keyword === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      assert.ok(from, `FROM line: ${args}`);
      result.stages.push({ from: from[1] ?? '', name: from[2] ?? null, instructions: [] });
    } else if (result.stages.length === 0) {
      assert.equal(keyword, 'ARG', `only ARG may come before the first FROM, not ${keyword}`);
      const [name, value] = args.split('=');
      result.globalArgs[name ?? ''] = value ?? '';
    } else {
      result.stages[result.stages.length - 1]?.instructions.push({ keyword, args });
    }
  }
  return result;
}

/** `KEY=value KEY2=value2` (the ENV form this Dockerfile uses). */
function envPairs(args: string): Record<string, string> {
  return Object.fromEntries(
    args
      .split(/\s+/)
      .filter((pair) => pair.includes('='))
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
}

const dockerfile = parseDockerfile(readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8'));
const runtime = dockerfile.stages[dockerfile.stages.length - 1] ?? assert.fail('no stage');
const buildStage = dockerfile.stages[0] ?? assert.fail('no stage');
const all = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
const baseImage = (stage: Stage) => stage.from.replace(/\$\{(\w+)\}/g, (_w, name: string) => dockerfile.globalArgs[name] ?? '');

describe('Dockerfile', () => {
  test('two stages on Node 20 slim: a build stage, and a runtime stage that copies from it', () => {
    assert.ok(dockerfile.stages.length >= 2, 'multi-stage');
    for (const stage of dockerfile.stages) assert.match(baseImage(stage), /^node:20(\.[\d.]+)?-(bookworm-)?slim$/);
    assert.ok(buildStage.name, 'the build stage is named');
    assert.ok(
      all(runtime, 'COPY').some((args) => args.startsWith(`--from=${buildStage.name ?? ''} `)),
      'the runtime stage copies from the build stage',
    );
  });

  test('the build stage installs with npm ci, builds, and leaves out the dev dependencies', () => {
    const runs = all(buildStage, 'RUN').join(' && ');
    const position = (fragment: string) => {
      const at = runs.indexOf(fragment);
      assert.notEqual(at, -1, `the build stage runs ${fragment}`);
      return at;
    };
    assert.ok(position('npm ci') < position('npm run build'));
    assert.ok(position('npm run build') < position('npm prune --omit=dev'));
    assert.match(runs, /libsecp256k1-dev/, 'builds the native addon against Debian libsecp256k1');
    assert.match(runs, /secp256k1\.node/, 'fails when the native addon was not built');
  });

  test('the runtime stage has the libsecp256k1 runtime, no compiler, and requires the native backend', () => {
    const runs = all(runtime, 'RUN').join(' ');
    assert.match(runs, /libsecp256k1-1\b/);
    assert.doesNotMatch(runs, /build-essential|libsecp256k1-dev|python3/);
    const env = Object.assign({}, ...all(runtime, 'ENV').map(envPairs)) as Record<string, string>;
    assert.equal(env.NOSTR_PUSH_SECP256K1, 'native');
    assert.deepEqual(unknownConfigEnvNames(Object.keys(env)), [], 'ENV sets only configuration keys that exist');
  });

  test('runs as a user that is not root', () => {
    const users = all(runtime, 'USER');
    assert.ok(users.length > 0, 'a USER instruction');
    const user = users[users.length - 1] ?? '';
    assert.doesNotMatch(user, /^(root|0)(:|$)/);
  });

  test('keeps its data in a volume at the data directory', () => {
    const env = Object.assign({}, ...all(runtime, 'ENV').map(envPairs)) as Record<string, string>;
    const dataDir = env.NOSTR_PUSH__DATA_DIR ?? assert.fail('NOSTR_PUSH__DATA_DIR set');
    const volumes = all(runtime, 'VOLUME').flatMap((args) => JSON.parse(args) as string[]);
    assert.ok(volumes.includes(dataDir), `a VOLUME at ${dataDir}`);
  });

  test('exposes the default port, and checks health with `healthcheck`, which follows server.listen_addr', () => {
    const port = defaultConfig().server.listen_addr.split(':').pop() ?? '';
    assert.deepEqual(all(runtime, 'EXPOSE'), [port]);
    const healthchecks = all(runtime, 'HEALTHCHECK');
    assert.equal(healthchecks.length, 1);
    const command = /CMD\s+(\[.*\])$/.exec(healthchecks[0] ?? '')?.[1] ?? assert.fail(`an exec-form CMD: ${healthchecks[0]}`);
    assert.deepEqual(JSON.parse(command), ['node', 'bin/nostr-push.js', 'healthcheck']);
    assert.doesNotMatch(healthchecks[0] ?? '', /:\d{2,5}\b/, 'no port written into the check');
    assert.match(all(runtime, 'ENTRYPOINT').join(' '), /bin\/nostr-push\.js/);
    assert.deepEqual(
      all(runtime, 'CMD').map((args) => JSON.parse(args) as string[]),
      [['serve']],
    );
  });

  test('.dockerignore keeps local builds, dependencies and data out of the context', () => {
    const ignored = readFileSync(new URL('../../.dockerignore', import.meta.url), 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    for (const path of ['node_modules', 'dist', 'data', '.git', 'native/secp256k1/build']) assert.ok(ignored.includes(path), path);
  });
});
