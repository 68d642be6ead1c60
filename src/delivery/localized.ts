/**
 * Copy in each device's language (issue 15): a push's title and body were rendered in English by
 * the engine, with the template they came from (`PushMessage.copy`). Here, just before sending,
 * the recipient's devices are grouped by their registered locale and each group gets the template
 * rendered in its language, so a user's iPhone in `ja` and browser in `en` each read their own.
 *
 * Only the `title` and `body` data values change, in place (key order is kept, so an `en` device
 * gets the engine's bytes exactly). A message without a template (the send API's, whose copy is
 * the app's own) goes to every device as it is.
 */
import type { Copywriter } from '../notification/templates/compile.ts';
import type { DeviceRegistration } from '../store/port.ts';
import type { PushMessage } from '../notification/types.ts';

/** One group of devices and the message they get. */
export interface LocalizedGroup {
  devices: DeviceRegistration[];
  message: PushMessage;
}

/** `message` with `title` and `body` replaced (the same object when they read the same). */
function withCopy(message: PushMessage, title: string, body: string): PushMessage {
  if (message.data.title === title && message.data.body === body) return message;
  return { ...message, data: { ...message.data, title, body } };
}

/**
 * The devices of one recipient grouped by language, each group with its message. One group
 * (the message as it is) when the message has no template or there is no copywriter.
 */
export function localizedGroups(
  devices: readonly DeviceRegistration[],
  message: PushMessage,
  copywriter: Copywriter | undefined,
): LocalizedGroup[] {
  const template = message.copy;
  if (template === undefined || copywriter === undefined) return [{ devices: [...devices], message }];
  const byLocale = new Map<string, DeviceRegistration[]>();
  for (const device of devices) {
    const key = device.locale ?? '';
    const group = byLocale.get(key);
    if (group) group.push(device);
    else byLocale.set(key, [device]);
  }
  return [...byLocale].map(([locale, group]) => {
    const copy = copywriter.render(template, locale === '' ? undefined : locale);
    return { devices: group, message: withCopy(message, copy.title, copy.body) };
  });
}
