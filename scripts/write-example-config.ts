// Regenerates config/nostr-push.example.yaml from the defaults: `npx tsx scripts/write-example-config.ts > config/nostr-push.example.yaml`.
import { stringify } from 'yaml';
import { defaultConfig } from '../src/config/defaults.ts';
const nullEmpty = (v: unknown): unknown =>
  v === ''
    ? null
    : Array.isArray(v)
      ? v
      : typeof v === 'object' && v !== null
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, nullEmpty(x)]))
        : v;
const c = nullEmpty({ ...defaultConfig(), roles: 'all' });
process.stdout.write(
  '# nostr-push configuration: every key with its default (an empty value means unset).\n# Load with --config FILE or NOSTR_PUSH_CONFIG; the environment (NOSTR_PUSH__SECTION__KEY) overrides it.\n' +
    stringify(c, { nullStr: '' }),
);
