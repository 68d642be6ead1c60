/**
 * bench/copy: what copy in each device's language costs the delivery stage per push
 * (`localizedGroups`: group the recipient's devices by locale, render the template per group),
 * for a like to one device without a locale (the common case: the English bytes, unchanged) and to
 * two devices in two languages. A micro-benchmark of the rendering alone; no store, no transport.
 *
 *   node --import tsx bench/copy/render.ts [--pushes 1000000]
 */
import { parseArgs } from 'node:util';
import { localizedGroups } from '../../src/delivery/localized.ts';
import { notificationCopy } from '../../src/engine/copy.ts';
import { SHIPPED_COPYWRITER } from '../../src/notification/templates/compile.ts';
import type { DeviceRegistration } from '../../src/store/port.ts';
import type { PushMessage } from '../../src/notification/types.ts';

const { values } = parseArgs({ options: { pushes: { type: 'string', default: '1000000' } } });
const pushes = Number(values.pushes);
/** Rounds before timing, so the JIT has settled. */
const WARM_UP = 100_000;

const copy = notificationCopy('like', 'Alice');
const message: PushMessage = { data: { type: 'like', eventId: 'e'.repeat(64), title: copy.title, body: copy.body } };
if (copy.template) message.copy = copy.template;

const cases: Array<[string, DeviceRegistration[]]> = [
  ['one device, no locale', [{ token: 'phone', transport: 'fcm' }]],
  [
    'two devices, pt-BR and none',
    [
      { token: 'phone', transport: 'fcm', locale: 'pt-BR' },
      { token: 'tablet', transport: 'fcm' },
    ],
  ],
];
for (const [name, devices] of cases) {
  for (let i = 0; i < WARM_UP; i++) localizedGroups(devices, message, SHIPPED_COPYWRITER);
  const started = process.hrtime.bigint();
  for (let i = 0; i < pushes; i++) localizedGroups(devices, message, SHIPPED_COPYWRITER);
  const nsPerPush = Number(process.hrtime.bigint() - started) / pushes;
  console.log(`${name}: ${nsPerPush.toFixed(0)} ns per push (${pushes} pushes)`);
}
