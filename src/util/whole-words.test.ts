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

test('a phrase matches its words in a row, whatever separates them', () => {
  assert.equal(matches(['hot take'], 'Here is a HOT   TAKE: no'), true);
  assert.equal(matches(['hot take'], 'hot\ntake'), true, 'a line break');
  assert.equal(matches(['hot take'], 'my hot-take'), true, 'a hyphen');
  assert.equal(matches(['hot take'], 'a shot takeover'), false, 'whole words only');
  assert.equal(matches(['hot take'], 'hot and take'), false, 'in a row');
  assert.equal(matches(['hot take'], 'take hot'), false, 'in order');
  assert.equal(matches(['a b c'], 'a b a b c'), true, 'a false start does not hide a later match');
  assert.equal(matches(['hot take'], 'so hot'), false, 'the text ends before the phrase does');
  assert.equal(matches(["don't"], "I DON'T care"), true);
  assert.equal(matches(["don't"], 'I don’t care'), true, 'a curly apostrophe');
  assert.equal(matches(["don't"], 'I dont care'), false);
});

test('an entry with a non-letter end matches its exact text, a letter end not glued to a letter', () => {
  assert.equal(matches(['c++'], 'I like C++.'), true);
  assert.equal(matches(['c++'], 'c++ first'), true, 'at the start of the text');
  assert.equal(matches(['c++'], 'abc++'), false, 'the letter end keeps its boundary');
  assert.equal(matches(['c++'], 'abc++ and c++'), true, 'a glued occurrence does not hide a later one');
  assert.equal(matches(['c++'], 'c+ only'), false);
  assert.equal(matches(['#tag'], 'a #TAG here'), true);
  assert.equal(matches(['#tag'], 'a #tagged here'), false);
  assert.equal(matches(['(x|y)*'], 'x'), false, 'regular-expression characters are plain text');
  assert.equal(matches(['(x|y)*'], 'a (x|y)* b'), true);
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

test('letters beyond the basic plane count as letters', () => {
  // U+1D400 MATHEMATICAL BOLD CAPITAL A folds (NFKC) to "a": "a" glued to it is not a whole word.
  assert.equal(matches(['ab'], '\u{1D400}ab'), false);
  assert.equal(matches(['a b'], 'x\u{10400}a b'), false, 'a Deseret letter glued to the phrase');
  assert.equal(matches(['a++'], '\u{10400}a++'), false, 'a Deseret letter (two UTF-16 units) before an exact entry');
  assert.equal(matches(['a++'], '\u{1F600}a++'), true, 'an emoji (two UTF-16 units) is no letter');
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
