/**
 * The console's test send: `POST /console/api/test-send?app=` with `{"pubkey": npub or hex,
 * "text": "…", "type"?: one of the app's `send_api.types`}` (`application/json`, behind the session
 * and its CSRF token). It makes a one-recipient send of the app and hands it to
 * {@link acceptSend}, the very code behind `POST /v1/notifications`: the same schema, type check,
 * store step and scheduler, so its deliveries reach the delivery log and the user's page like any
 * other. 202 `{id, recipient}`; 400 `INVALID_PUBKEY`, 422 `VALIDATION_FAILED` / `UNKNOWN_TYPE`.
 *
 * The push's title says it is a test from the console; the text is its body. `GET apps` gives the
 * page each app's types, the first being the default.
 */
import type { Context, Hono } from 'hono';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { HttpError, type HttpErrorCode } from '../api/errors.ts';
import { isJsonContentType, readJsonBody } from '../api/json-body.ts';
import { acceptSend, type SendApiAppSettings } from '../api/notifications.ts';
import { sendRequestSchema } from '../api/schemas.ts';
import type { SendRequest } from '../store/port-sends.ts';
import { npubEncode } from '../nostr/nip19.ts';
import type { ConsoleApp } from './routes.ts';
import { CONSOLE_API_PATH, type ConsoleSessionEnv } from './session.ts';
import { parsePubkey } from './pubkey.ts';

/** The title of every test push. */
export const TEST_SEND_TITLE = 'Test from the nostr-push console';
/** A body is a pubkey, a type and a text: 8 KiB is plenty. */
const MAX_TEST_SEND_BODY_BYTES = 8192;

/** The send API as the console reaches it: each app's settings, and the scheduler's wake-up. */
export interface ConsoleSendApi {
  settingsOf: (appId: string) => SendApiAppSettings;
  onCreated: () => void;
}

export interface TestSendRouteDeps {
  appOf: (c: Context, route: string) => ConsoleApp;
  sendApi: ConsoleSendApi;
  metrics: Metrics;
  logger: Logger;
}

/** The app's send types, in `send_api.types` order (the first is the form's default). */
export function sendTypesOf(sendApi: ConsoleSendApi, appId: string): string[] {
  return [...sendApi.settingsOf(appId).typeCategories.keys()];
}

export function mountTestSendRoute(app: Hono<ConsoleSessionEnv>, deps: TestSendRouteDeps): void {
  const path = `${CONSOLE_API_PATH}/test-send`;
  const refuse = (code: HttpErrorCode, detail: string): never => {
    deps.metrics.apiRequests.inc({ route: path, outcome: code });
    deps.logger.warn({ route: 'test-send', code, detail }, 'console request refused');
    throw new HttpError(code, detail);
  };

  app.post(path, async (c) => {
    const selected = deps.appOf(c, 'test-send');
    if (!isJsonContentType(c.req.header('content-type'))) refuse('UNSUPPORTED_MEDIA_TYPE', 'the body must be application/json');
    const raw = await readJsonBody(c, MAX_TEST_SEND_BODY_BYTES);
    const body = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
    const pubkey = typeof body.pubkey === 'string' ? parsePubkey(body.pubkey) : null;
    if (!pubkey) return refuse('INVALID_PUBKEY', 'pubkey must be an npub or 64 hex characters');
    if (typeof body.text !== 'string' || body.text.trim() === '') return refuse('VALIDATION_FAILED', 'text: write something to send');
    const settings = deps.sendApi.settingsOf(selected.id);
    const type = body.type ?? sendTypesOf(deps.sendApi, selected.id)[0];
    const candidate = { recipients: [pubkey], type, title: TEST_SEND_TITLE, body: body.text, priority: 'normal' };
    const parsed = sendRequestSchema(settings.maxRecipients).safeParse(candidate);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue?.path[0] === 'body' ? 'text' : String(issue?.path[0] ?? 'request');
      return refuse('VALIDATION_FAILED', `${field}: ${issue?.message ?? 'invalid'}`);
    }
    const request: SendRequest = parsed.data;
    const accepted = await acceptSend(
      { settings, onCreated: deps.sendApi.onCreated, metrics: deps.metrics, logger: deps.logger },
      selected.id,
      request,
      undefined,
    );
    deps.logger.info(
      { app: selected.id, notificationId: accepted.id, recipient: pubkey, type: request.type, by: c.get('consoleSession').keyId },
      'console: test send',
    );
    return c.json({ id: accepted.id, recipient: pubkey, npub: npubEncode(pubkey), type: request.type }, 202);
  });
}
