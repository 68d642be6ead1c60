/**
 * deploy/nostr-push.service: `systemd-analyze verify` accepts it where systemd is installed, and a
 * parser check holds everywhere (sections, the command, the state directory the service's data
 * directory points at, the hardening options, configuration keys that exist).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { unknownConfigEnvNames } from './config-keys.ts';

const UNIT_NAME = 'nostr-push.service';
const UNIT_TEXT = readFileSync(new URL(`../../deploy/${UNIT_NAME}`, import.meta.url), 'utf8');
const SYSTEMD_ANALYZE = '/usr/bin/systemd-analyze';

/** A unit file as sections of key → every value given (keys may repeat). */
function parseUnit(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current: Map<string, string[]> | null = null;
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[([A-Za-z]+)\]$/.exec(line);
    if (header) {
      current = new Map();
      sections.set(header[1] ?? '', current);
      continue;
    }
    const assignment = /^([A-Za-z]+)=(.*)$/.exec(line);
    assert.ok(assignment, `line ${index + 1} is neither a section nor Key=value: ${line}`);
    assert.ok(current, `line ${index + 1} comes before any section`);
    const key = assignment[1] ?? '';
    current.set(key, [...(current.get(key) ?? []), assignment[2] ?? '']);
  }
  return sections;
}

const unit = parseUnit(UNIT_TEXT);
const service = unit.get('Service') ?? new Map<string, string[]>();
const last = (key: string) => service.get(key)?.at(-1);
/** `Environment=NAME=value` lines as a map. */
const environment = new Map(
  (service.get('Environment') ?? []).map((assignment) => [
    assignment.slice(0, assignment.indexOf('=')),
    assignment.slice(assignment.indexOf('=') + 1),
  ]),
);

describe('systemd unit (deploy/nostr-push.service)', () => {
  test('parses: Unit, Service and Install sections; serves with the binary; restarts on failure', () => {
    assert.deepEqual([...unit.keys()], ['Unit', 'Service', 'Install']);
    assert.match(last('ExecStart') ?? '', /^\/\S+\/node (--\S+ )*\/\S+\/bin\/nostr-push\.js serve$/);
    assert.equal(last('Restart'), 'on-failure');
    assert.equal(unit.get('Install')?.get('WantedBy')?.at(-1), 'multi-user.target');
  });

  test("keeps the data directory in the unit's state directory, on SQLite (no store URL set)", () => {
    const stateDirectory = last('StateDirectory') ?? assert.fail('StateDirectory set');
    assert.equal(environment.get('NOSTR_PUSH__DATA_DIR'), `/var/lib/${stateDirectory}`);
    assert.equal(environment.has('NOSTR_PUSH__STORE__URL'), false, 'the store defaults to SQLite in the data directory');
    assert.deepEqual(unknownConfigEnvNames(environment.keys()), []);
  });

  test('runs unprivileged and hardened', () => {
    assert.ok(last('DynamicUser') === 'yes' || (last('User') ?? 'root') !== 'root', 'DynamicUser or a dedicated user');
    for (const [key, value] of [
      ['NoNewPrivileges', 'yes'],
      ['ProtectSystem', 'strict'],
      ['ProtectHome', 'yes'],
      ['PrivateTmp', 'yes'],
      ['PrivateDevices', 'yes'],
      ['RestrictSUIDSGID', 'yes'],
      ['CapabilityBoundingSet', ''],
    ] as const)
      assert.equal(last(key), value, key);
    // V8 compiles code at run time: this option would kill the process on its first JIT page.
    assert.equal(service.has('MemoryDenyWriteExecute'), false);
  });

  // Where systemd is not installed the parser tests above are the check, and this one says it was skipped.
  const noAnalyzer = existsSync(SYSTEMD_ANALYZE)
    ? false
    : `${SYSTEMD_ANALYZE} is not installed (Debian's systemd package): only the parser checks ran`;
  test('systemd-analyze verify accepts it', { skip: noAnalyzer }, () => {
    // verify fails when ExecStart's program does not exist on this machine. The unit names
    // Debian's /usr/bin/node; a test machine's Node may live elsewhere (nvm, a tarball), so the
    // copy verified names the Node running this test instead. Nothing else is changed.
    const execStart = last('ExecStart') ?? assert.fail('ExecStart set');
    const program = execStart.split(' ')[0] ?? '';
    const dir = mkdtempSync(join(tmpdir(), 'np-systemd-'));
    try {
      const copy = join(dir, UNIT_NAME);
      writeFileSync(copy, UNIT_TEXT.replace(`ExecStart=${program} `, `ExecStart=${process.execPath} `));
      const result = spawnSync(SYSTEMD_ANALYZE, ['verify', copy], { encoding: 'utf8', timeout: 60_000 });
      // verify may also warn about the machine's other units; only lines about this one count.
      const aboutThisUnit = `${result.stdout}${result.stderr}`.split('\n').filter((line) => line.includes(UNIT_NAME));
      assert.deepEqual(aboutThisUnit, [], 'no warning about the unit');
      assert.equal(result.status, 0, result.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
