// The console's calls to /console/api: same-origin, the session cookie sent by the browser, the
// CSRF token in a header on every state-changing request.
const API = '/console/api';

let csrfToken = null;
let onSessionLost = () => {};

export function setCsrfToken(token) {
  csrfToken = token;
}

export function whenSessionLost(callback) {
  onSessionLost = callback;
}

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export async function api(path, { method = 'GET', body } = {}) {
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const response = await fetch(`${API}/${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (response.status === 204) return null;
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    if (response.status === 401 && data.code === 'CONSOLE_SESSION_REQUIRED') onSessionLost();
    throw new ApiError(response.status, data.code ?? 'HTTP_' + response.status, data.error ?? response.statusText);
  }
  return data;
}

/** `path` with `app=ID` added to its query: every per-app route of the console API takes it. */
export function forApp(path, app) {
  return `${path}${path.includes('?') ? '&' : '?'}app=${encodeURIComponent(app)}`;
}
