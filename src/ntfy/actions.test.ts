import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NtfyAction } from '../store/port-ntfy.ts';
import { MAX_ACTIONS, parseActions } from './actions.ts';
import { NtfyError } from './errors.ts';

/** The actions without their random ids, which are checked separately. */
const withoutIds = (actions: NtfyAction[]) => actions.map(({ id: _id, ...rest }) => rest);

function refused(text: string, reason: RegExp): void {
  assert.throws(
    () => parseActions(text),
    (err: unknown) => err instanceof NtfyError && err.code === 40018 && err.http === 400 && reason.test(err.message),
    text,
  );
}

test('the docs header example: view and http in the short format, a quoted body with a comma-free JSON value', () => {
  const actions = parseActions(
    `view, Open portal, https://home.nest.com/, clear=true; http, Turn down, https://api.nest.com/, body='{"temperature": 65}'`,
  );
  assert.deepEqual(withoutIds(actions), [
    { action: 'view', label: 'Open portal', clear: true, url: 'https://home.nest.com/' },
    { action: 'http', label: 'Turn down', clear: false, url: 'https://api.nest.com/', body: '{"temperature": 65}' },
  ]);
  for (const action of actions) assert.match(action.id, /^[A-Za-z0-9]{10}$/);
  assert.notEqual(actions[0]?.id, actions[1]?.id);
});

test('broadcast extras, http headers and method (upper-cased), and the long key=value form', () => {
  assert.deepEqual(withoutIds(parseActions('broadcast, Take picture, extras.cmd=pic, extras.camera=front')), [
    { action: 'broadcast', label: 'Take picture', clear: false, extras: { cmd: 'pic', camera: 'front' } },
  ]);
  assert.deepEqual(
    withoutIds(
      parseActions(
        'http, Close door, https://api.mygarage.lan/, method=put, headers.Authorization=Bearer zAzsx1sk.., body={"action": "close"}',
      ),
    ),
    [
      {
        action: 'http',
        label: 'Close door',
        clear: false,
        url: 'https://api.mygarage.lan/',
        method: 'PUT',
        headers: { Authorization: 'Bearer zAzsx1sk..' },
        body: '{"action": "close"}',
      },
    ],
  );
  assert.deepEqual(withoutIds(parseActions('action=view, url=https://google.com, label=Open Google')), [
    { action: 'view', label: 'Open Google', clear: false, url: 'https://google.com' },
  ]);
  assert.deepEqual(withoutIds(parseActions('copy, Copy code, 123456')), [
    { action: 'copy', label: 'Copy code', clear: false, value: '123456' },
  ]);
});

test('quoted values keep commas, semicolons and escaped quotes', () => {
  assert.deepEqual(withoutIds(parseActions(`view, "Look ma, commas; and \\"quotes\\" too", url=https://x.example/`)), [
    { action: 'view', label: 'Look ma, commas; and "quotes" too', clear: false, url: 'https://x.example/' },
  ]);
});

test('the JSON array form: keys in any case (as Go decodes), unknown keys ignored', () => {
  const actions = parseActions(
    JSON.stringify([
      { Action: 'VIEW', Label: 'Open portal', URL: 'https://home.nest.com/', Clear: true, colour: 'red' },
      { action: 'http', label: 'Turn down', url: 'https://api.nest.com/', headers: { Authorization: 'Bearer x' }, body: '{}' },
    ]),
  );
  assert.deepEqual(withoutIds(actions), [
    { action: 'view', label: 'Open portal', clear: true, url: 'https://home.nest.com/' },
    { action: 'http', label: 'Turn down', clear: false, url: 'https://api.nest.com/', headers: { Authorization: 'Bearer x' }, body: '{}' },
  ]);
});

test("refusals are ntfy's 40018 with the reason", () => {
  refused('view, A, https://a; view, B, https://b; view, C, https://c; view, D, https://d', new RegExp(`only ${MAX_ACTIONS}`));
  refused('dance, Party', /parameter 'action' cannot be 'dance'/);
  refused('view', /'label' is required/);
  refused('view, Open', /'url' is required for action 'view'/);
  refused('http, Ping', /'url' is required for action 'http'/);
  refused('copy, Copy', /'value' is required/);
  refused('http, Get, https://x, method=GET, body=nope', /'body' cannot be set if method is GET/);
  refused('view, Open, https://x, clear=maybe', /parameter 'clear' cannot be 'maybe'/);
  refused('view, Open, https://x, colour=red', /key 'colour' unknown/);
  refused('broadcast, Take picture, stray', /term 'stray' unknown/);
  refused('view, "unterminated', /unexpected end of input/);
  refused('view, "Open" x, https://x', /unexpected character 'x'/);
  refused('[{"action":"view"', /JSON error/);
  refused('[{"action":"view","label":"L","url":"https://x","clear":"yes"}]', /clear must be a boolean/);
  refused('[{"action":"broadcast","label":"L","extras":{"n":1}}]', /extras.n must be a string/);
  refused('[1]', /must be an object/);
});
