import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MatchableText, WholeWordMatcher } from './whole-words.ts';

const matches = (words: string[], text: string): boolean => new WholeWordMatcher(words).matches(new MatchableText(text));

test('a muted word matches whole words only, whatever their case', () => {
  assert.equal(matches(['bitcoin'], 'Buy BITCOIN now'), true);
  assert.equal(matches(['Bitcoin'], 'talking about bitcoin.'), true, 'the muted word is folded too');
  assert.equal(matches(['bitcoin'], '#Bitcoin!'), true, 'punctuation and # separate words');
  assert.equal(matches(['bitcoin'], 'a bitcoiner and bitcoins'), false, 'part of a longer word is no match');
  assert.equal(matches(['coin'], 'bitcoin'), false);
  assert.equal(matches(['web3'], 'Web3 is here'), true, 'digits belong to words');
  assert.equal(matches(['web'], 'web3'), false);
});

test('folding is NFKC: composed and decomposed accents and full-width letters are one word', () => {
  assert.equal(matches(['café'], 'CAFE\u0301 au lait'), true, 'e + combining acute equals é');
  assert.equal(matches(['bitcoin'], 'ｂｉｔｃｏｉｎ'), true, 'full-width letters');
  assert.equal(matches(['über'], 'ÜBER alles'), true);
  assert.equal(matches(['uber'], 'über'), false, 'an accent makes another word');
});

test('a phrase matches with any spacing, not glued to letters at its ends', () => {
  assert.equal(matches(['hot take'], 'Here is a HOT   TAKE: no'), true);
  assert.equal(matches(['hot take'], 'hot\ntake'), true, 'a line break is spacing too');
  assert.equal(matches(['hot take'], 'a shot takeover'), false);
  assert.equal(matches(["don't"], "I DON'T care"), true);
  assert.equal(matches(["don't"], 'I dont care'), false);
  assert.equal(matches(['c++'], 'I like c++.'), true, 'no boundary is needed after a non-letter end');
  assert.equal(matches(['c++'], 'abc++'), false, 'the letter end still needs its boundary');
});

test('regular-expression characters in a muted phrase are taken literally', () => {
  assert.equal(matches(['a.b'], 'axb'), false);
  assert.equal(matches(['a.b'], 'see a.b here'), true);
  assert.equal(matches(['(x|y)*'], 'x'), false);
  assert.equal(matches(['(x|y)*'], 'a (x|y)* b'), true);
  assert.equal(matches(['[-]'], 'a [-] b'), true);
});

test('emoji and symbols match wherever they occur', () => {
  assert.equal(matches(['🍆'], 'nice🍆!'), true);
  assert.equal(matches(['🍆'], 'nice 🍑'), false);
});

test('a word in a script written without spaces matches inside the text', () => {
  assert.equal(matches(['猫'], '私は猫が好きです'), true);
  assert.equal(matches(['ビットコイン'], '今日のビットコイン価格'), true);
  assert.equal(matches(['犬'], '私は猫が好きです'), false);
});

test('letters beyond the basic plane count as letters for the boundary', () => {
  // U+1D400 MATHEMATICAL BOLD CAPITAL A folds (NFKC) to "a": "a" glued to it is not a whole word.
  assert.equal(matches(['ab'], '\u{1D400}ab'), false);
  assert.equal(matches(['a b'], 'x\u{10400}a b'), false, 'Deseret letter before the phrase');
  assert.equal(matches(['a b'], 'x a b'), true);
});

test('blank and duplicate muted words are ignored; an empty list matches nothing', () => {
  const matcher = new WholeWordMatcher(['', '   ', 'Spam', 'SPAM', 'spam ']);
  assert.equal(matcher.size, 1);
  assert.equal(matcher.matches(new MatchableText('spam')), true);
  assert.equal(new WholeWordMatcher([]).matches(new MatchableText('anything at all')), false);
  assert.equal(matches(['spam'], ''), false);
});

test('many single muted words against a long text: a match is found from either side of the set walk', () => {
  const words = Array.from({ length: 1000 }, (_, i) => `word${i}`);
  const text = new MatchableText(`${'filler '.repeat(5000)}word999`);
  assert.equal(new WholeWordMatcher(words).matches(text), true, 'the text has fewer distinct words than the list');
  const manyWords = new MatchableText(Array.from({ length: 3000 }, (_, i) => `other${i}`).join(' ') + ' word7');
  assert.equal(new WholeWordMatcher(['word7', 'nothing']).matches(manyWords), true, 'the list has fewer words than the text');
  assert.equal(new WholeWordMatcher(['word8']).matches(manyWords), false);
});
