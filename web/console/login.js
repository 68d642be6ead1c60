import { useState } from 'preact/hooks';
import { html } from './html.js';
import { api } from './api.js';

export function Login({ onLoggedIn }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const session = await api('login', { method: 'POST', body: { key } });
      setKey('');
      onLoggedIn(session.csrfToken);
    } catch (err) {
      setError(err.code === 'CONSOLE_LOGIN_FAILED' ? 'That is not an admin key of this service.' : err.message);
    } finally {
      setBusy(false);
    }
  };

  return html`
    <main id="main" class="login" tabindex="-1">
      <h1>nostr-push console</h1>
      <form onSubmit=${submit} aria-describedby="login-help">
        <label for="key">Admin key</label>
        <input
          id="key"
          name="key"
          type="password"
          autocomplete="current-password"
          spellcheck="false"
          required
          value=${key}
          onInput=${(e) => setKey(e.currentTarget.value)}
        />
        <p id="login-help" class="help">
          The key printed once at the first start, or one made with <code>nostr-push apps keys create default --role admin</code>.
        </p>
        ${error && html`<p class="error" role="alert" id="login-error">${error}</p>`}
        <button type="submit" disabled=${busy}>Log in</button>
      </form>
    </main>
  `;
}
