import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, type LoadedConfig } from './load.ts';
import { configuredApps } from '../platform/apps.ts';

const KEY_A = '11'.repeat(32);
const KEY_B = '22'.repeat(32);

function withYaml(yaml: string, env: NodeJS.ProcessEnv = {}): LoadedConfig {
  const file = join(mkdtempSync(join(tmpdir(), 'np-apps-')), 'config.yaml');
  writeFileSync(file, yaml);
  return loadConfig({ env, configPath: file });
}

function problemsOf(yaml: string, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    withYaml(yaml, env);
    return [];
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems;
  }
}

describe('apps: configuration', () => {
  test('without apps: only the default app', () => {
    const { config } = loadConfig({ env: {} });
    assert.deepEqual(config.apps, []);
    assert.deepEqual(configuredApps(config), ['default']);
  });

  test('an app inherits every unset key from the top level (file and environment) and overrides what it sets', () => {
    const { config } = withYaml(
      `
service:
  private_key_hex: "${KEY_A}"
  coalesce_window_secs: 600
nostr:
  relays: [wss://top.example]
firebase:
  project_id: top-project
  credentials_path: /etc/top.json
send_api:
  types: ["payout:1059"]
apps:
  - id: b
    service:
      private_key_hex: "${KEY_B}"
    firebase:
      project_id: b-project
    nostr:
      relays: [wss://b.example]
`,
      { NOSTR_PUSH__QUEUE__MAX_ATTEMPTS: '9' },
    );
    assert.deepEqual(configuredApps(config), ['default', 'b']);
    const b = config.apps[0]?.config;
    assert.ok(b);
    assert.equal(b.service.private_key_hex, KEY_B);
    assert.equal(b.firebase.project_id, 'b-project');
    assert.equal(b.firebase.credentials_path, '/etc/top.json', 'unset: inherited');
    assert.deepEqual(b.nostr.relays, ['wss://b.example']);
    assert.equal(b.service.coalesce_window_secs, 600);
    assert.deepEqual(b.send_api.types, ['payout:1059']);
    assert.equal(b.queue.max_attempts, 9, 'the environment reaches the app through the top level');
    assert.deepEqual(b.apps, []);
    // The top level is untouched by the app's keys.
    assert.equal(config.firebase.project_id, 'top-project');
    assert.deepEqual(config.nostr.relays, ['wss://top.example']);
  });

  test('the service key is never inherited: unset, the app gets its own (generated at start)', () => {
    const { config } = withYaml(`
service:
  private_key_hex: "${KEY_A}"
apps:
  - id: b
`);
    assert.equal(config.apps[0]?.config.service.private_key_hex, '');
  });

  test('bad ids, the reserved default, duplicate ids and duplicate service keys are refused, one line each', () => {
    const problems = problemsOf(`
service:
  private_key_hex: "${KEY_A}"
apps:
  - id: Bad.Id
  - id: default
  - id: b
    service: { private_key_hex: "${KEY_B}" }
  - id: b
  - id: c
    service: { private_key_hex: "${KEY_A}" }
  - id: d
    service: { private_key_hex: "${KEY_B}" }
`);
    assert.ok(
      problems.some((p) => p.startsWith('apps: id "Bad.Id" must match')),
      problems.join('\n'),
    );
    assert.ok(problems.includes('apps: id "default" is the top-level configuration; give the app another id'), problems.join('\n'));
    assert.ok(problems.includes('apps: id "b" is used twice'), problems.join('\n'));
    assert.ok(problems.includes('apps.c.service.private_key_hex: the same service key as app "default"'), problems.join('\n'));
    assert.ok(problems.includes('apps.d.service.private_key_hex: the same service key as app "b"'), problems.join('\n'));
  });

  test('process-wide sections, unknown keys and invalid values in an app are named with the app', () => {
    const problems = problemsOf(`
apps:
  - id: b
    store: { url: "sqlite::memory:" }
    nonsense: 1
    queue: { max_attempts: 0 }
    firebase: { nope: 1 }
`);
    assert.ok(
      problems.some((p) => p.startsWith('apps.b.store: not per app')),
      problems.join('\n'),
    );
    assert.ok(
      problems.some((p) => p.startsWith('apps.b.nonsense: unknown key')),
      problems.join('\n'),
    );
    assert.ok(
      problems.some((p) => p.startsWith('apps.b: queue.max_attempts must be greater than zero')),
      problems.join('\n'),
    );
    assert.ok(
      problems.some((p) => p.startsWith('apps.b.firebase.nope: unknown key')),
      problems.join('\n'),
    );
  });

  test('apps must be a list of mappings with ids, and only from the file', () => {
    assert.ok(problemsOf('apps: 3').includes('apps: expected a list of mappings, each with an id'));
    assert.ok(problemsOf('apps: [{ name: x }]').includes('apps[0]: expected a mapping with an id'));
    assert.ok(
      problemsOf('log: { level: info }', { NOSTR_PUSH__APPS__B: 'x' }).some((p) =>
        p.startsWith('apps: set in the configuration file only'),
      ),
    );
  });
});
