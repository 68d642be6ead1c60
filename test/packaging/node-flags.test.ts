/**
 * Every launcher of the service starts Node with the service's flags (SERVER_NODE_FLAGS in
 * src/util/heap-growth.ts: V8 sizes its young generation at start, so the process cannot set
 * them itself): `npm start`, the binary's `#!` line (`nostr-push serve` as npm installs it), the
 * image's entrypoint and the systemd unit.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { SERVER_NODE_FLAGS } from '../../src/util/heap-growth.ts';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const FLAGS = SERVER_NODE_FLAGS.join(' ');

test('npm start runs the binary with the server flags', () => {
  const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
  assert.equal(pkg.scripts.start, `node ${FLAGS} bin/nostr-push.js serve`);
});

test("the binary's #! line passes them (env -S splits it), for nostr-push run as an installed command", () => {
  assert.equal(read('bin/nostr-push.js').split('\n')[0], `#!/usr/bin/env -S node ${FLAGS}`);
});

test("the image's entrypoint passes them before the binary", () => {
  const entrypoint = /^ENTRYPOINT\s+(\[.*\])$/m.exec(read('Dockerfile'))?.[1] ?? assert.fail('an exec-form ENTRYPOINT');
  assert.deepEqual(JSON.parse(entrypoint), ['node', ...SERVER_NODE_FLAGS, 'bin/nostr-push.js']);
});

test('the systemd unit passes them before the binary', () => {
  const execStart = /^ExecStart=(.*)$/m.exec(read('deploy/nostr-push.service'))?.[1] ?? assert.fail('an ExecStart line');
  assert.equal(execStart, `/usr/bin/node ${FLAGS} /opt/nostr-push/bin/nostr-push.js serve`);
});
