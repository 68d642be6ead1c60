/**
 * A user-API client as an app writes one: NIP-98 tokens from nostr-tools (`getToken`, kind 27235
 * with `u`, `method` and, for a body, `payload` = sha256 of the JSON body), signed with the
 * user's key, over fetch; and the hint socket over `ws`.
 */
import { randomUUID } from 'node:crypto';
import { getToken } from 'nostr-tools/nip98';
import { finalizeEvent } from 'nostr-tools/pure';
import { WebSocket } from 'ws';
import type { TestUser } from './nostr-client.ts';

/**
 * Signs nostr-tools' template with a random `nonce` tag added: two identical requests in one second
 * would otherwise sign one event, and the server refuses an auth event's second use.
 */
function signer(user: TestUser) {
  const secret = Uint8Array.from(Buffer.from(user.secret, 'hex'));
  return (template: Parameters<typeof finalizeEvent>[0]) =>
    finalizeEvent({ ...template, tags: [...template.tags, ['nonce', randomUUID()]] }, secret);
}

/** `Authorization: Nostr …` for one request. */
export function nip98Authorization(user: TestUser, url: string, method: string, body?: Record<string, unknown>): Promise<string> {
  return getToken(url, method, signer(user), true, body);
}

export interface UserApiResponse {
  status: number;
  json: unknown;
}

/** One user-API call; `body` is sent as `JSON.stringify(body)`, the bytes the token's payload covers. */
export async function userApi(
  baseUrl: string,
  user: TestUser,
  method: string,
  path: string,
  body?: Record<string, unknown>,
): Promise<UserApiResponse> {
  const url = `${baseUrl}${path}`;
  const headers: Record<string, string> = { authorization: await nip98Authorization(user, url, method, body) };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await response.text();
  return { status: response.status, json: text === '' ? null : (JSON.parse(text) as unknown) };
}

export interface HintSocket {
  /** Every frame received so far, parsed. */
  frames: unknown[];
  close(): void;
}

/** Open the hint socket; resolves once it is open, rejects with the refusal's status. */
export async function openHintSocket(baseUrl: string, user: TestUser): Promise<HintSocket> {
  const url = `${baseUrl}/v1/inbox/socket`;
  const authorization = await nip98Authorization(user, url, 'GET');
  const ws = new WebSocket(url.replace(/^http/, 'ws'), { headers: { authorization } });
  const frames: unknown[] = [];
  ws.on('message', (data: Buffer) => frames.push(JSON.parse(data.toString('utf8')) as unknown));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_request, response) => reject(new Error(`hint socket refused with ${response.statusCode ?? 0}`)));
    ws.once('error', reject);
  });
  return { frames, close: () => ws.close() };
}
