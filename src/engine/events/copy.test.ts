import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  notificationCopy as templatedCopy,
  rendersContent,
  summaryCopy as templatedSummary,
  textNoteCopy as templatedNoteCopy,
  type NotificationCopy,
} from '../copy.ts';

/** The words only (the template each came from travels beside them, for other languages). */
const words = ({ title, body }: NotificationCopy) => ({ title, body });
const textNoteCopy = (...args: Parameters<typeof templatedNoteCopy>) => words(templatedNoteCopy(...args));
const notificationCopy = (...args: Parameters<typeof templatedCopy>) => words(templatedCopy(...args));
const summaryCopy = (...args: Parameters<typeof templatedSummary>) => words(templatedSummary(...args));

test('issue 21 copy: "{sender} replied", "{sender} mentioned you" with the note as the body', () => {
  assert.deepEqual(textNoteCopy('reply', 'Alice', 'agreed'), { title: 'Alice replied', body: 'agreed' });
  assert.deepEqual(textNoteCopy('mention', 'Alice', 'cc @bob'), { title: 'Alice mentioned you', body: 'cc @bob' });
  assert.deepEqual(notificationCopy('reply', 'Alice', 'agreed'), { title: 'Alice replied', body: 'agreed' });
  assert.equal(textNoteCopy('reply', 'Bob', 'é'.repeat(200)).body, `${'é'.repeat(150)}...`);
  // Never an empty body: the app drops foreground pushes without one.
  assert.equal(textNoteCopy('reply', 'Bob', '').body, 'Replied to your note');
  assert.equal(textNoteCopy('mention', 'Bob', '').body, 'Mentioned you in a note');
  assert.equal(rendersContent('reply'), true);
  assert.equal(rendersContent('zap'), false);
});

test('issue 21 copy: "{sender} zapped you ⚡{sats} sats", summaries count people', () => {
  assert.deepEqual(notificationCopy('zap', 'Alice', '21'), { title: 'New zap', body: 'Alice zapped you ⚡21 sats' });
  assert.deepEqual(summaryCopy('zap', 'alice', 3), { title: 'New zaps', body: 'alice and 2 others zapped you' });
  assert.deepEqual(summaryCopy('zap', '', 1), { title: 'New zap', body: 'Someone zapped you' });
});
