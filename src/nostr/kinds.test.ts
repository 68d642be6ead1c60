import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as kinds from './kinds.ts';

describe('kinds', () => {
  test('names the kinds of the protocols we speak', () => {
    assert.deepEqual(
      {
        METADATA: kinds.METADATA,
        REACTION: kinds.REACTION,
        GENERIC_REPOST: kinds.GENERIC_REPOST,
        GIFT_WRAP: kinds.GIFT_WRAP,
        COMMENT: kinds.COMMENT,
        REGISTER_TOKEN: kinds.REGISTER_TOKEN,
        DEREGISTER_TOKEN: kinds.DEREGISTER_TOKEN,
        PREFERENCES: kinds.PREFERENCES,
        CLIENT_AUTH: kinds.CLIENT_AUTH,
        PEOPLE_LIST: kinds.PEOPLE_LIST,
        LONG_FORM: kinds.LONG_FORM,
        RELAY_PUSH: kinds.RELAY_PUSH,
        VIDEO: kinds.VIDEO,
      },
      {
        METADATA: 0,
        REACTION: 7,
        GENERIC_REPOST: 16,
        GIFT_WRAP: 1059,
        COMMENT: 1111,
        REGISTER_TOKEN: 3079,
        DEREGISTER_TOKEN: 3080,
        PREFERENCES: 3083,
        CLIENT_AUTH: 22242,
        PEOPLE_LIST: 30000,
        LONG_FORM: 30023,
        RELAY_PUSH: 30390,
        VIDEO: 34236,
      },
    );
    assert.equal(kinds.NOTIFY_LIST_D_TAG, 'notify');
  });

  test('classifies kinds as NIP-01 does', () => {
    const cases: Array<[number, kinds.KindClass]> = [
      [0, 'replaceable'],
      [1, 'regular'],
      [3, 'replaceable'],
      [7, 'regular'],
      [3079, 'regular'],
      [9999, 'regular'],
      [10_000, 'replaceable'],
      [19_999, 'replaceable'],
      [20_000, 'ephemeral'],
      [22_242, 'ephemeral'],
      [29_999, 'ephemeral'],
      [30_000, 'addressable'],
      [34_236, 'addressable'],
      [39_999, 'addressable'],
      [40_000, 'regular'],
    ];
    for (const [kind, expected] of cases) assert.equal(kinds.kindClass(kind), expected, String(kind));
  });
});
