import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { alertWordTokens, parseAlertWord, parseAlertWordList, MAX_TOKENISED_TEXT } from './words.ts';

describe('alertWordTokens', () => {
  test('case: every token is lower-cased, so Pizza, PIZZA and pizza are one word', () => {
    assert.deepEqual(alertWordTokens('Pizza PIZZA pizza'), ['pizza']);
    assert.deepEqual(alertWordTokens('ÉCOLE Straße ΣΟΦΙΑ'), ['école', 'straße', 'σοφια']);
  });

  test('accents: kept (café is not cafe), and a decomposed accent is the composed word', () => {
    assert.deepEqual(alertWordTokens('café cafe'), ['café', 'cafe']);
    assert.deepEqual(alertWordTokens('cafe\u0301'), ['café']);
    assert.deepEqual(alertWordTokens('naïve Zürich'), ['naïve', 'zürich']);
  });

  test('emoji: never part of a word and never a word; they separate words', () => {
    assert.deepEqual(alertWordTokens('🍕pizza🍕 🎉🎉🎉 sun☀️set'), ['pizza', 'sun', 'set']);
  });

  test('CJK: words come from the segmenter’s dictionary, and a word is at least 3 characters', () => {
    // 我/喜欢/猫咪/视频: every segment is shorter than 3 characters.
    assert.deepEqual(alertWordTokens('我喜欢猫咪视频'), []);
    assert.deepEqual(alertWordTokens('我喜欢巧克力蛋糕'), ['巧克力']);
    assert.deepEqual(alertWordTokens('インターネットで動画を見る'), ['インターネット']);
    // Hangul is written with spaces: a space-separated word is one token.
    assert.deepEqual(alertWordTokens('서울특별시에 살아요'), ['서울특별시에', '살아요']);
  });

  test('punctuation: separates words and is dropped; an inner apostrophe keeps a word whole, a hyphen splits', () => {
    assert.deepEqual(alertWordTokens('Hello, world! (pizza); "sunset"...'), ['hello', 'world', 'pizza', 'sunset']);
    assert.deepEqual(alertWordTokens("don't e-mail #nostr @vine"), ["don't", 'mail', 'nostr', 'vine']);
    assert.deepEqual(alertWordTokens('line\nbreak\ttab'), ['line', 'break', 'tab']);
  });

  test('whole words only, distinct, at least 3 characters; digits stay inside a word', () => {
    assert.deepEqual(alertWordTokens('pizzas pizza pizza go to abc123 42'), ['pizzas', 'pizza', 'abc123']);
  });

  test('very long text is tokenised up to a bound', () => {
    const text = `${'filler '.repeat(MAX_TOKENISED_TEXT / 7)}beyondthebound`;
    assert.equal(alertWordTokens(text).includes('beyondthebound'), false);
    assert.deepEqual(alertWordTokens(text), ['filler']);
  });
});

describe('parseAlertWord', () => {
  test('one word, normalised: case, spacing, surrounding punctuation', () => {
    assert.deepEqual(parseAlertWord('  Pizza! '), { ok: true, word: 'pizza' });
    assert.deepEqual(parseAlertWord('#Nostr'), { ok: true, word: 'nostr' });
    assert.deepEqual(parseAlertWord('CAFE\u0301'), { ok: true, word: 'café' });
  });

  test('refused: no word, several words, too short, too long', () => {
    for (const input of ['', '!!!', '🍕', 'two words', 'e-mail', 'go', '猫咪', 'x'.repeat(65)]) {
      assert.equal(parseAlertWord(input).ok, false, input);
    }
  });
});

describe('parseAlertWordList', () => {
  test('distinct normalised words, in order', () => {
    assert.deepEqual(parseAlertWordList(['Pizza', 'pizza!', 'Sunset'], 50), { ok: true, words: ['pizza', 'sunset'] });
  });

  test('refused: not an array, a non-string, a bad word, too many words', () => {
    assert.equal(parseAlertWordList('pizza', 50).ok, false);
    assert.equal(parseAlertWordList(['pizza', 3], 50).ok, false);
    assert.equal(parseAlertWordList(['pizza', 'no'], 50).ok, false);
    assert.equal(parseAlertWordList(['alpha', 'bravo', 'charlie'], 2).ok, false);
    assert.deepEqual(parseAlertWordList(['alpha', 'ALPHA', 'bravo'], 2), { ok: true, words: ['alpha', 'bravo'] });
  });
});
