import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { notificationCopy, rendersContent, summaryCopy, truncateChars, type NotificationCopy } from './copy.ts';

/** The words of a copy (its template is tested in templates/). */
const words = ({ title, body }: NotificationCopy) => ({ title, body });

describe('truncateChars', () => {
  test('the reference vectors', () => {
    assert.equal(truncateChars('hello world!', 5), 'hello...');
    assert.equal(truncateChars('', 5), '');
  });

  test('a string of exactly the limit is unchanged', () => {
    assert.equal(truncateChars('hello', 5), 'hello');
    assert.equal(truncateChars('x'.repeat(150), 150), 'x'.repeat(150));
    assert.equal(truncateChars('x'.repeat(151), 150), `${'x'.repeat(150)}...`);
  });

  test('counts code points, so astral characters are neither split nor double-counted', () => {
    assert.equal(truncateChars('😀😀😀', 3), '😀😀😀');
    assert.equal(truncateChars('😀😀😀😀', 3), '😀😀😀...');
    assert.equal(truncateChars('日本語のテキスト', 3), '日本語...');
  });
});

describe('notificationCopy', () => {
  test('exact strings for every type', () => {
    assert.deepEqual(words(notificationCopy('like', 'Alice')), { title: 'New like', body: 'Alice liked your post' });
    assert.deepEqual(words(notificationCopy('repost', 'Alice')), { title: 'New repost', body: 'Alice reposted your post' });
    assert.deepEqual(words(notificationCopy('comment', 'Alice', 'nice vine')), { title: 'New comment', body: 'Alice: nice vine' });
    assert.deepEqual(words(notificationCopy('mention', 'Alice', 'hey @bob')), { title: 'You were mentioned', body: 'Alice: hey @bob' });
    assert.deepEqual(words(notificationCopy('newPost', 'Alice')), { title: 'New vine', body: 'Alice posted a new vine' });
    assert.deepEqual(words(notificationCopy('directMessage', 'ignored')), { title: 'New message', body: 'You have a new message' });
  });

  test('comment and mention bodies truncate the content at 150 chars', () => {
    const long = 'é'.repeat(200);
    assert.equal(notificationCopy('comment', 'Bob', long).body, `Bob: ${'é'.repeat(150)}...`);
    assert.equal(notificationCopy('mention', 'Bob', long).body, `Bob: ${'é'.repeat(150)}...`);
  });

  test('only comment and mention render content', () => {
    assert.deepEqual((['like', 'comment', 'mention', 'repost', 'newPost', 'directMessage'] as const).filter(rendersContent), [
      'comment',
      'mention',
    ]);
  });
});

describe('summaryCopy', () => {
  test('the reference vectors', () => {
    assert.deepEqual(words(summaryCopy('like', 'alice', 13)), { title: 'New likes', body: 'alice and 12 others liked your post' });
    assert.equal(summaryCopy('like', '', 4).body, 'Someone and 3 others liked your post');
  });

  test('two actors read "1 other"', () => {
    assert.equal(summaryCopy('like', 'alice', 2).body, 'alice and 1 other liked your post');
    assert.equal(summaryCopy('repost', 'alice', 2).body, 'alice and 1 other reposted your post');
  });

  test('one actor or fewer uses the singular forms', () => {
    assert.deepEqual(words(summaryCopy('like', 'alice', 1)), { title: 'New like', body: 'alice liked your post' });
    assert.deepEqual(words(summaryCopy('like', 'alice', 0)), { title: 'New like', body: 'alice liked your post' });
    assert.deepEqual(words(summaryCopy('repost', '', 1)), { title: 'New repost', body: 'Someone reposted your post' });
  });

  test('reposts with several actors', () => {
    assert.deepEqual(words(summaryCopy('repost', 'bob', 5)), { title: 'New reposts', body: 'bob and 4 others reposted your post' });
  });
});
