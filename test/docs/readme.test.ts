/**
 * The README tells the truth (issue 37 item 4): its configuration table agrees with the defaults in
 * `src/config/defaults.ts`, every `nostr-push` command it shows is one the CLI's usage lists, and
 * every `npm run` script it names exists.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config/load.ts';
import { ROLE_NAMES } from '../../src/config/types.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** Rows of the README's `| key (environment) | default | meaning |` table. */
function configRows(): Array<{ keys: string; defaults: string }> {
  const start = README.indexOf('| key (environment) | default | meaning |');
  assert.ok(start >= 0, 'the README has its configuration table');
  const rows: Array<{ keys: string; defaults: string }> = [];
  for (const line of README.slice(start).split('\n').slice(2)) {
    if (!line.startsWith('|')) break;
    const [, keys = '', defaults = ''] = line.split(/(?<!\\)\|/).map((cell) => cell.trim());
    rows.push({ keys, defaults });
  }
  return rows;
}

/** `NOSTR_PUSH__A__B` and its `/ __C` siblings → config paths (`a.b`, `a.c`); aliases are skipped. */
function configPaths(keys: string): string[][] {
  const names = [...keys.matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1] ?? '');
  const first = names[0];
  if (!first?.startsWith('NOSTR_PUSH__')) return [];
  const pathOf = (name: string) => name.slice('NOSTR_PUSH__'.length).toLowerCase().split('__');
  const base = pathOf(first);
  const paths = [base];
  for (const name of names.slice(1)) {
    // `/ \`__SIBLING\`` names a sibling of the first key's last level; a full name is its own.
    if (name.startsWith('NOSTR_PUSH__')) paths.push(pathOf(name));
    else if (name.startsWith('__')) paths.push([...base.slice(0, -1), name.slice(2).toLowerCase()]);
  }
  return paths;
}

function valueAt(config: unknown, path: string[]): unknown {
  let value = config;
  for (const level of path) {
    assert.ok(typeof value === 'object' && value !== null && level in value, `the README names ${path.join('.')}, which is not a setting`);
    value = (value as Record<string, unknown>)[level];
  }
  return value;
}

/** Defaults the README describes in words, with the literal default each stands for. */
const PROSE_DEFAULTS: Record<string, (value: unknown) => boolean> = {
  'generated into `data_dir`': (v) => v === '',
  'by the URL': (v) => v === '',
  "the seed's six types": (v) => Array.isArray(v) && v.length === 6,
  '`all`': (v) => Array.isArray(v) && v.join(',') === ROLE_NAMES.join(','),
};

/** Whether the README's default cell (one of its ` / `-separated parts) states `value`. */
function states(cell: string, value: unknown): boolean {
  const text = cell.trim();
  const prose = Object.entries(PROSE_DEFAULTS).find(([words]) => text.startsWith(words));
  if (prose) return prose[1](value);
  if (/^(unset|none|empty)\b/.test(text))
    return value === '' || value === null || value === undefined || (Array.isArray(value) && value.length === 0);
  const literal = /^`([^`]*)`|^(-?[\d,._]+|true|false)\b/.exec(text);
  assert.ok(literal, `the README's default "${text}" is neither a literal nor a known description`);
  const shown = (literal[1] ?? literal[2] ?? '').replace(/(?<=\d)[,_](?=\d)/g, '');
  if (Array.isArray(value)) return value.join(',') === shown;
  return String(value) === shown;
}

test('the README configuration table states the defaults of src/config/defaults.ts', () => {
  // The configuration a start with no file and no environment runs with (a derived store URL included).
  const defaults = loadConfig({ env: {} }).config;
  let checked = 0;
  for (const row of configRows()) {
    const paths = configPaths(row.keys);
    if (paths.length === 0) continue;
    const cells = row.defaults.split(' / ');
    paths.forEach((path, i) => {
      // One default for several keys applies to each.
      const cell = cells.length === paths.length ? (cells[i] ?? '') : (cells[0] ?? '');
      const value = valueAt(defaults, path);
      assert.ok(states(cell, value), `README says ${path.join('.')} defaults to "${cell}", the code says ${JSON.stringify(value)}`);
      checked++;
    });
  }
  assert.ok(checked >= 50, `checked ${checked} settings`);
});

test('every nostr-push command the README shows is in the CLI usage, every npm script it names exists', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [join(ROOT, 'bin', 'nostr-push.js'), 'help'], { cwd: ROOT });
  const usage = stdout.replace(/\s+/g, ' ');
  const commands = new Set([...README.matchAll(/`nostr-push ([a-z][a-z-]*(?: [a-z][a-z-]*)*)/g)].map((m) => m[1] ?? ''));
  // Arguments follow the command words: `apps keys create default` is `apps keys create APP`.
  const argumentOf: Record<string, number> = { 'apps keys create': 3, 'apps keys list': 3, 'apps keys revoke': 3 };
  assert.ok(commands.size >= 6, 'the README shows its commands');
  for (const command of commands) {
    // `apps keys create APP` lists as `apps keys create`; a sub-command list such as `list|replay` is checked by its first word.
    const all = command.split(' ');
    const prefix = Object.keys(argumentOf).find((c) => command.startsWith(c));
    const words = prefix ? all.slice(0, argumentOf[prefix]) : all;
    assert.ok(
      usage.includes(`nostr-push ${words.join(' ')}`),
      `the README shows \`nostr-push ${command}\`, which the CLI usage does not list`,
    );
  }
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  for (const [, script] of README.matchAll(/npm run ([a-z][\w:-]*)/g))
    assert.ok(script && script in scripts, `the README names npm run ${script}`);
});

test('the README holds shell blocks only: its code lives in docs/app-developers.md, whose blocks the tests run', () => {
  const languages = [...README.matchAll(/^```(\w*)/gm)].map((m) => m[1] ?? '');
  // Fences come in pairs: the opening one names the language, the closing one is bare.
  const opening = languages.filter((_, i) => i % 2 === 0);
  assert.ok(opening.length >= 4, 'the README shows its commands in blocks');
  for (const language of opening)
    assert.ok(
      language === 'sh' || language === '',
      `a \`\`\`${language} block in the README: move it to docs/app-developers.md, where it runs`,
    );
  const guide = readFileSync(join(ROOT, 'docs', 'app-developers.md'), 'utf8');
  assert.ok(README.includes('docs/app-developers.md#relays-that-push-nip-9a') && guide.includes('## Relays that push (NIP-9a)'));
});
