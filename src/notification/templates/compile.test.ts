import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILTIN_TEMPLATES, EN_TEMPLATES } from './builtin.ts';
import { canonicalLocale, compileTemplates, parseTemplate, pluralCategories, SHIPPED_COPYWRITER, TemplateError } from './compile.ts';
import { MESSAGE_IDS, MESSAGE_SPECS, type CopyRef, type MessageId, type TemplateText } from './messages.ts';

const SHIPPED = ['en', 'es', 'pt', 'de', 'fr', 'ja'];
const COUNTS = [0, 1, 2, 5, 21];

/** The problems compiling `sources` reports (none: the empty list). */
function problemsOf(...sources: Array<{ locale: string; templates: unknown }>): string[] {
  try {
    compileTemplates(sources.map((s) => ({ origin: 'test', ...s })));
    return [];
  } catch (err) {
    assert.ok(err instanceof TemplateError, String(err));
    return err.problems;
  }
}

/** A ref of `message` with every placeholder it allows filled. */
function refOf(message: MessageId, count = 3): CopyRef {
  return { message, params: { sender: 'Ana', content: 'olá', word: 'sunset', relay: 'relay.example', count, sats: '21' } };
}

describe('shipped templates', () => {
  test('ship en, es, pt, de, fr and ja, each with every message', () => {
    assert.deepEqual(Object.keys(BUILTIN_TEMPLATES).sort(), [...SHIPPED].sort());
    for (const locale of SHIPPED)
      for (const message of MESSAGE_IDS)
        for (const field of MESSAGE_SPECS[message].fields)
          assert.notEqual(BUILTIN_TEMPLATES[locale]?.[message]?.[field], undefined, `${locale}.${message}.${field}`);
  });

  test('every locale renders every message without placeholders left over, in its own words', () => {
    for (const locale of SHIPPED) {
      for (const message of MESSAGE_IDS.filter((m) => m !== 'someone')) {
        const copy = SHIPPED_COPYWRITER.render(refOf(message), locale);
        for (const text of [copy.title, copy.body]) {
          assert.ok(text.length > 0, `${locale}.${message}`);
          assert.doesNotMatch(text, /[{}]/, `${locale}.${message}: ${text}`);
        }
        // Title and body together: a body that is only the quoted note ({content}) is the same everywhere.
        const english = SHIPPED_COPYWRITER.render(refOf(message), 'en');
        if (locale !== 'en')
          assert.notEqual(`${copy.title}\n${copy.body}`, `${english.title}\n${english.body}`, `${locale}.${message} is translated`);
      }
    }
  });

  test('plural rules: every locale renders its summaries for 0, 1, 2, 5 and 21 with the form its plural rules choose', () => {
    for (const locale of SHIPPED) {
      const rules = new Intl.PluralRules(locale);
      for (const message of ['likeSummary', 'repostSummary', 'zapSummary'] as const) {
        const forms = BUILTIN_TEMPLATES[locale]?.[message]?.body as Exclude<TemplateText, string>;
        assert.deepEqual(Object.keys(forms).sort(), [...pluralCategories(locale)].sort(), `${locale}.${message} has every category`);
        for (const count of COUNTS) {
          const category = rules.select(count);
          const expected = (forms[category] ?? '').replace('{sender}', 'Ana').replace('{count}', String(count));
          assert.equal(SHIPPED_COPYWRITER.render(refOf(message, count), locale).body, expected, `${locale} ${message} ${count}`);
        }
      }
    }
  });

  test("the plural categories the counts reach are the languages' own", () => {
    const reached = (locale: string) => [...new Set(COUNTS.map((n) => new Intl.PluralRules(locale).select(n)))].sort();
    assert.deepEqual(reached('en'), ['one', 'other']);
    assert.deepEqual(reached('de'), ['one', 'other']);
    assert.deepEqual(reached('es'), ['one', 'other']);
    assert.deepEqual(reached('ja'), ['other']);
    // French and Portuguese take the singular for 0 as well.
    assert.equal(SHIPPED_COPYWRITER.render(refOf('likeSummary', 0), 'fr').body, 'Ana et 0 autre personne ont aimé votre publication');
    assert.equal(SHIPPED_COPYWRITER.render(refOf('likeSummary', 0), 'pt').body, 'Ana e mais 0 pessoa curtiram sua publicação');
    assert.equal(SHIPPED_COPYWRITER.render(refOf('likeSummary', 0), 'en').body, 'Ana and 0 others liked your post');
    assert.equal(
      SHIPPED_COPYWRITER.render(refOf('likeSummary', 1), 'de').body,
      'Ana und 1 weitere Person haben deinen Beitrag mit „Gefällt mir“ markiert',
    );
    assert.equal(SHIPPED_COPYWRITER.render(refOf('likeSummary', 21), 'ja').body, 'Anaとほか21人があなたの投稿にいいねしました');
    // CLDR's `many` (a million and up) in Spanish, French and Portuguese.
    assert.equal(
      SHIPPED_COPYWRITER.render(refOf('likeSummary', 1_000_000), 'es').body,
      'A Ana y a 1000000 personas más les gustó tu publicación',
    );
  });

  test('an empty sender reads as the locale\'s "someone"', () => {
    const ref: CopyRef = { message: 'like', params: { sender: '' } };
    assert.equal(SHIPPED_COPYWRITER.render(ref, 'en').body, 'Someone liked your post');
    assert.equal(SHIPPED_COPYWRITER.render(ref, 'pt').body, 'Alguém curtiu sua publicação');
    assert.equal(SHIPPED_COPYWRITER.render(ref, 'ja').body, '誰かがあなたの投稿にいいねしました');
  });

  test('values are never read as templates', () => {
    const copy = SHIPPED_COPYWRITER.render({ message: 'comment', params: { sender: '{content}', content: '{sender} }{' } }, 'en');
    assert.equal(copy.body, '{content}: {sender} }{');
  });
});

describe('locale fallback', () => {
  test('pt-BR falls back to pt, then en; an unknown language and no locale read the default (en)', () => {
    assert.deepEqual(SHIPPED_COPYWRITER.chain('pt-BR'), ['pt', 'en']);
    assert.equal(SHIPPED_COPYWRITER.render(refOf('like'), 'pt-BR').body, 'Ana curtiu sua publicação');
    assert.equal(SHIPPED_COPYWRITER.render(refOf('like'), 'sw').body, 'Ana liked your post');
    assert.equal(SHIPPED_COPYWRITER.render(refOf('like')).body, 'Ana liked your post');
  });

  test('an operator locale pt-BR with one message: that message in pt-BR, the others from pt, plural rules of the template used', () => {
    const copy = compileTemplates([{ origin: 'test', locale: 'pt-br', templates: { like: { body: '{sender} deu like' } } }]);
    assert.deepEqual(copy.chain('pt-BR'), ['pt-BR', 'pt', 'en']);
    assert.equal(copy.render(refOf('like'), 'pt-BR').body, 'Ana deu like');
    assert.equal(copy.render(refOf('like'), 'pt-BR').title, 'Nova curtida');
    assert.equal(copy.render(refOf('repost'), 'pt-BR').body, 'Ana republicou sua publicação');
  });

  test('templates.default_locale: devices without a locale read it; a device in en still reads en', () => {
    const copy = compileTemplates([], 'de');
    assert.equal(copy.render(refOf('repost')).body, 'Ana hat deinen Beitrag geteilt');
    assert.equal(copy.render(refOf('repost'), 'en').body, 'Ana reposted your post');
    assert.equal(copy.render(refOf('repost'), 'fr-CA').body, 'Ana a partagé votre publication');
  });

  test('an operator may override en field by field, and add a locale of its own', () => {
    const copy = compileTemplates([
      { origin: 'test', locale: 'en', templates: { like: { title: 'Someone likes you' } } },
      { origin: 'test', locale: 'it', templates: { like: { title: 'Nuovo mi piace', body: 'A {sender} piace il tuo post' } } },
    ]);
    assert.deepEqual(copy.render(refOf('like'), 'en'), { title: 'Someone likes you', body: 'Ana liked your post' });
    assert.deepEqual(copy.render(refOf('like'), 'it-IT'), { title: 'Nuovo mi piace', body: 'A Ana piace il tuo post' });
    assert.equal(copy.render(refOf('repost'), 'it').body, 'Ana reposted your post');
  });

  test('canonicalLocale: case, underscores, rubbish', () => {
    assert.equal(canonicalLocale('PT-br'), 'pt-BR');
    assert.equal(canonicalLocale('pt_BR'), 'pt-BR');
    assert.equal(canonicalLocale('zh-hant-tw'), 'zh-Hant-TW');
    assert.equal(canonicalLocale('not a locale'), null);
    assert.equal(canonicalLocale(''), null);
    assert.equal(canonicalLocale('x'.repeat(100)), null);
  });
});

describe('template validation (start-up errors)', () => {
  test('the shipped set compiles, and en is the wire contract', () => {
    assert.equal(EN_TEMPLATES.like?.body, '{sender} liked your post');
    assert.deepEqual(problemsOf(), []);
  });

  test('an unknown placeholder', () => {
    const [problem, ...rest] = problemsOf({ locale: 'de', templates: { like: { body: '{sender} mag {post}' } } });
    assert.equal(rest.length, 0);
    assert.match(problem ?? '', /templates \(test\) de\.like\.body: unknown placeholder \{post\}/);
  });

  test('a placeholder the message does not fill', () => {
    const problems = problemsOf({ locale: 'fr', templates: { like: { body: '{sender} a aimé « {word} »' } } });
    assert.match(problems.join('\n'), /fr\.like\.body: unknown placeholder \{word\} \(like has \{sender\}\)/);
  });

  test('a missing placeholder', () => {
    const problems = problemsOf({ locale: 'es', templates: { comment: { body: 'Nuevo comentario de {sender}' } } });
    assert.match(problems.join('\n'), /es\.comment\.body: missing placeholder \{content\}/);
    const summary = problemsOf({
      locale: 'es',
      templates: { likeSummary: { body: { one: 'A {sender} y a uno más', many: 'x {sender}', other: 'A {sender} y a otros' } } },
    });
    assert.match(summary.join('\n'), /likeSummary\.body\.other: missing placeholder \{count\}/);
    // {count} may be spelled out in the other forms ("uno más"), not in `other`.
    assert.equal(summary.length, 1);
  });

  test('a locale missing a plural category it needs, or naming one it does not have', () => {
    const missing = problemsOf({
      locale: 'fr',
      templates: { likeSummary: { body: { one: '{sender} et {count} autre', other: '{sender} et {count} autres' } } },
    });
    assert.match(missing.join('\n'), /fr\.likeSummary\.body: missing plural category many \(fr needs many, one, other\)/);
    const extra = problemsOf({ locale: 'ja', templates: { likeSummary: { body: { one: '{sender}', other: '{sender}と{count}人' } } } });
    assert.match(extra.join('\n'), /ja\.likeSummary\.body: ja has no plural category one \(it has other\)/);
    const notCounted = problemsOf({ locale: 'de', templates: { like: { body: { one: '{sender}', other: '{sender}' } } } });
    assert.match(notCounted.join('\n'), /de\.like\.body: plural forms need \{count\}/);
  });

  test('a bad locale, message, field, brace or value', () => {
    const problems = problemsOf(
      { locale: 'not a locale', templates: {} },
      { locale: 'de', templates: { likes: { body: 'x' } } },
      { locale: 'de', templates: { like: { subtitle: 'x' } } },
      { locale: 'de', templates: { like: { body: '{sender liked' } } },
      { locale: 'de', templates: { like: { body: 'liked} {sender}' } } },
      { locale: 'de', templates: { like: { body: 42 } } },
      { locale: 'de', templates: ['like'] },
    );
    const text = problems.join('\n');
    assert.match(text, /"not a locale" is not a BCP 47 language tag/);
    assert.match(text, /de: unknown message "likes"/);
    assert.match(text, /de\.like: unknown field "subtitle"/);
    assert.match(text, /de\.like\.body: a "\{" without its "\}"/);
    assert.match(text, /de\.like\.body: a "\}" without its "\{"/);
    assert.match(text, /de\.like\.body: must be a string/);
    assert.match(text, /de: must be a mapping/);
    assert.equal(problems.length, 7);
  });

  test('a bad default locale', () => {
    assert.throws(() => compileTemplates([], 'en_US_x_'), /templates\.default_locale: "en_US_x_" is not a BCP 47 language tag/);
  });

  test('parseTemplate: literal text and placeholders in order', () => {
    assert.deepEqual(parseTemplate('{sender} and {count} others'), [
      { placeholder: 'sender' },
      ' and ',
      { placeholder: 'count' },
      ' others',
    ]);
    assert.deepEqual(parseTemplate('plain'), ['plain']);
  });
});
