import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../config/load.ts';
import { loadCopywriter } from './load.ts';

const LIKE = { message: 'like', params: { sender: 'Ana' } } as const;

/** The problems loading the configuration reports (none: the empty list). */
function configProblems(env: NodeJS.ProcessEnv, configPath?: string): string[] {
  try {
    loadConfig({ env, ...(configPath === undefined ? {} : { configPath }) });
    return [];
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems;
  }
}

describe('operator templates', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'np-templates-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('templates.dir: one YAML or JSON file per locale; the config section overrides the files', () => {
    const folder = join(dir, 'good');
    mkdirSync(folder);
    writeFileSync(join(folder, 'pt-BR.yaml'), 'like:\n  body: "{sender} deu um like"\n');
    writeFileSync(join(folder, 'it.json'), JSON.stringify({ like: { title: 'Nuovo mi piace', body: 'A {sender} piace il tuo post' } }));
    writeFileSync(join(folder, '.hidden'), 'ignored');
    const copy = loadCopywriter({ dir: folder, default_locale: 'en', locales: { it: { like: { title: 'Mi piace!' } } } });
    assert.equal(copy.render(LIKE, 'pt-BR').body, 'Ana deu um like');
    assert.deepEqual(copy.render(LIKE, 'it'), { title: 'Mi piace!', body: 'A Ana piace il tuo post' });
    assert.equal(copy.render(LIKE, 'en').body, 'Ana liked your post');
  });

  test('a config file with a broken template does not start, and says where', () => {
    const file = join(dir, 'broken.yaml');
    writeFileSync(file, 'templates:\n  locales:\n    de:\n      like:\n        body: "{sender} mag {post}"\n');
    const problems = configProblems({}, file);
    assert.equal(problems.length, 1);
    assert.match(problems[0] ?? '', /templates \(config templates\.locales\) de\.like\.body: unknown placeholder \{post\}/);
  });

  test('a config file with good templates and a default locale loads', () => {
    const file = join(dir, 'good.yaml');
    writeFileSync(
      file,
      'templates:\n  default_locale: pt-BR\n  locales:\n    pt-BR:\n      likeSummary:\n        body:\n          one: "{sender} e mais uma pessoa curtiram"\n          many: "{sender} e mais {count} pessoas curtiram"\n          other: "{sender} e mais {count} pessoas curtiram"\n',
    );
    const { config } = loadConfig({ env: {}, configPath: file });
    assert.equal(
      loadCopywriter(config.templates).render({ message: 'likeSummary', params: { sender: 'Ana', count: 1 } }).body,
      'Ana e mais uma pessoa curtiram',
    );
  });

  test('a templates folder that is missing, holds another file, or a file that does not parse', () => {
    assert.match(configProblems({ NOSTR_PUSH__TEMPLATES__DIR: join(dir, 'nowhere') }).join('\n'), /templates\.dir: cannot read .*ENOENT/);
    const folder = join(dir, 'bad');
    mkdirSync(folder);
    writeFileSync(join(folder, 'README.md'), '# templates');
    writeFileSync(join(folder, 'de.json'), '{"like": ');
    writeFileSync(join(folder, 'xx_not-a-locale!.yaml'), 'like:\n  body: "{sender}"\n');
    const problems = configProblems({ NOSTR_PUSH__TEMPLATES__DIR: folder }).join('\n');
    assert.match(problems, /templates\.dir: README\.md is not a template file/);
    assert.match(problems, /templates \(templates\.dir de\.json\): .*JSON/);
    assert.match(problems, /templates \(templates\.dir xx_not-a-locale!\.yaml\): "xx_not-a-locale!" is not a BCP 47 language tag/);
  });

  test('templates.locales is refused from the environment; default_locale and the throttle are checked', () => {
    assert.match(
      configProblems({ NOSTR_PUSH__TEMPLATES__LOCALES: 'x' }).join('\n'),
      /templates\.locales: set templates in the config file/,
    );
    assert.match(configProblems({ NOSTR_PUSH__TEMPLATES__DEFAULT_LOCALE: 'not a tag' }).join('\n'), /templates\.default_locale/);
    assert.match(
      configProblems({ NOSTR_PUSH__THROTTLE__PER_USER_PER_HOUR: '-1' }).join('\n'),
      /throttle\.per_user_per_hour must be a whole number/,
    );
    assert.equal(loadConfig({ env: { NOSTR_PUSH__THROTTLE__PER_USER_PER_HOUR: '2' } }).config.throttle.per_user_per_hour, 2);
    assert.equal(loadConfig({ env: {} }).config.throttle.per_user_per_hour, 0);
  });
});
