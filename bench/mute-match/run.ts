/**
 * bench/mute-match: what a recipient's mute list costs the engine per push (`muteReason` against
 * one event: for its first recipient, who pays for preparing the text, and for each further one), for a list at the `nostr.mute_list_max_items` default (1,000 words — half single
 * words, half phrases — 1,000 hashtags, 1,000 threads) and a typical short list (20 words), on a
 * 280-character comment and on a 10,000-character long-form text that matches nothing (the
 * worst case: every check runs to the end). Also the time to parse and compile such a list,
 * which the list cache pays once per user and `nostr.list_cache_ttl_secs`. A micro-benchmark of
 * the matching alone; no relay, no store.
 *
 *   node --import tsx bench/mute-match/run.ts [--rounds 20000]
 */
import { parseArgs } from 'node:util';
import { muteReason, MuteSubject } from '../../src/engine/mute-match.ts';
import type { NostrEvent } from '../../src/nostr/event.ts';
import { COMMENT, LONG_FORM } from '../../src/nostr/kinds.ts';
import { parseMuteList } from '../../src/nostr/nip51-mutes.ts';
import { DEFAULT_MUTE_LIST_MAX_ITEMS } from '../../src/config/defaults.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '20000' } } });
const rounds = Number(values.rounds);
const WARM_UP = 2_000;
const SENDER = 'b'.repeat(64);
const hex = (i: number): string => i.toString(16).padStart(64, '0');

function muteTags(words: number): string[][] {
  const tags: string[][] = [];
  for (let i = 0; i < words; i++) tags.push(['word', i % 2 === 0 ? `mutedword${i}` : `muted phrase ${i}`]);
  for (let i = 0; i < Math.min(words, DEFAULT_MUTE_LIST_MAX_ITEMS); i++) tags.push(['t', `tag${i}`], ['e', hex(i + 1)]);
  return tags;
}

const sentence = 'Loved this clip of the harbour at dawn, the light on the water is something else! ';
const event = (kind: number, content: string): NostrEvent => ({
  id: 'f'.repeat(64),
  pubkey: 'a'.repeat(64),
  kind,
  created_at: 1,
  tags: [
    ['e', 'e'.repeat(64), '', 'root'],
    ['t', 'harbour'],
  ],
  content,
  sig: '',
});
const texts: Array<[string, NostrEvent]> = [
  ['280-character comment', event(COMMENT, sentence.repeat(4).slice(0, 280))],
  ['10,000-character long-form', event(LONG_FORM, sentence.repeat(120).slice(0, 10_000))],
];

for (const words of [20, DEFAULT_MUTE_LIST_MAX_ITEMS]) {
  const tags = muteTags(words);
  const parseStarted = process.hrtime.bigint();
  const { list } = parseMuteList({ tags }, DEFAULT_MUTE_LIST_MAX_ITEMS);
  const parseUs = Number(process.hrtime.bigint() - parseStarted) / 1000;
  console.log(
    `list of ${words} words (+${Math.min(words, DEFAULT_MUTE_LIST_MAX_ITEMS)} hashtags, threads): parsed in ${parseUs.toFixed(0)} µs`,
  );
  for (const [name, subject] of texts) {
    // A new subject per round: the engine prepares one per event, its text folded and split once.
    for (let i = 0; i < WARM_UP; i++) muteReason(list, SENDER, new MuteSubject(subject));
    let started = process.hrtime.bigint();
    for (let i = 0; i < rounds; i++) muteReason(list, SENDER, new MuteSubject(subject));
    const perEventUs = Number(process.hrtime.bigint() - started) / rounds / 1000;
    // One prepared subject: what every further recipient of the same event costs.
    const prepared = new MuteSubject(subject);
    for (let i = 0; i < WARM_UP; i++) muteReason(list, SENDER, prepared);
    started = process.hrtime.bigint();
    let muted = 0;
    for (let i = 0; i < rounds; i++) if (muteReason(list, SENDER, prepared) !== null) muted++;
    const perRecipientUs = Number(process.hrtime.bigint() - started) / rounds / 1000;
    console.log(
      `  ${name}: ${perEventUs.toFixed(1)} µs for the event's first recipient (text prepared), ${perRecipientUs.toFixed(2)} µs per further recipient (${rounds} rounds, ${muted} muted)`,
    );
  }
}
