// The API keys of the selected app: list (prefix, role, created, last used, revoked), create with a
// role (the key shown once, on this page, until it is left), revoke behind a confirmation.
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { api, forApp } from './api.js';
import { when } from './format.js';
import { Confirm } from './dead-letters.js';

export function KeysPage({ app }) {
  const [keys, setKeys] = useState([]);
  const [role, setRole] = useState('send');
  const [created, setCreated] = useState(null);
  const [status, setStatus] = useState(null);
  const [error, setError] = useState(null);
  const [confirm, setConfirm] = useState(null);

  const load = async () => {
    try {
      setKeys((await api(forApp('keys', app))).keys);
    } catch (err) {
      setError(err.message);
    }
  };
  useEffect(() => {
    load();
  }, [app]);

  const create = async (event) => {
    event.preventDefault();
    setError(null);
    setStatus(null);
    try {
      setCreated(await api(forApp('keys', app), { method: 'POST', body: { role } }));
      await load();
    } catch (err) {
      setError(err.message);
    }
  };

  const revoke = (key) =>
    setConfirm({
      title: `Revoke ${key.prefix}…?`,
      text: `Requests with this ${key.role} key of ${app} are refused from now on; a console session of it ends.`,
      action: 'Revoke',
      danger: true,
      key,
    });
  const closed = async (ok) => {
    const request = confirm;
    setConfirm(null);
    if (!ok || !request) return;
    try {
      await api(forApp(`keys/${encodeURIComponent(request.key.id)}`, app), { method: 'DELETE' });
      setStatus(`Revoked ${request.key.prefix}….`);
      await load();
    } catch (err) {
      setError(err.message);
    }
  };

  return html`
    <form class="toolbar" onSubmit=${create} aria-labelledby="new-key-title">
      <h2 id="new-key-title" class="inline">New key</h2>
      <label for="key-role">Role</label>
      <select id="key-role" value=${role} onChange=${(e) => setRole(e.currentTarget.value)}>
        <option value="send">send (the send API)</option>
        <option value="admin">admin (everything of ${app})</option>
      </select>
      <button type="submit">Create key</button>
    </form>
    ${
      created &&
      html`<div class="created" role="status" data-testid="created-key">
        <p>The new ${created.role} key of ${app}, shown only this once (the service keeps only its hash). Copy it now:</p>
        <p><code class="id secret">${created.key}</code></p>
        <button type="button" class="secondary" onClick=${() => setCreated(null)}>I have copied it</button>
      </div>`
    }
    <p role="status" class="status">${status ?? ''}</p>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${
      keys.length === 0
        ? html`<p data-testid="keys-empty">No API keys of ${app}.</p>`
        : html`<div class="table-wrap">
            <table data-testid="keys">
              <caption>
                API keys of ${app}, oldest first
              </caption>
              <thead>
                <tr>
                  <th scope="col">Prefix</th>
                  <th scope="col">Role</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">State</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                ${keys.map(
                  (k) =>
                    html`<tr data-id=${k.id}>
                      <th scope="row"><code>${k.prefix}…</code></th>
                      <td>${k.role}</td>
                      <td>${when(k.createdAt)}</td>
                      <td data-field="last-used">${k.lastUsedAt ? when(k.lastUsedAt) : 'never'}</td>
                      <td>${k.revokedAt ? `revoked ${when(k.revokedAt)}` : 'live'}</td>
                      <td class="actions">
                        ${
                          k.revokedAt
                            ? '—'
                            : html`<button type="button" class="danger" onClick=${() => revoke(k)} aria-label=${`Revoke ${k.prefix}`}>
                                Revoke
                              </button>`
                        }
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
    <${Confirm} request=${confirm} onClose=${closed} />
  `;
}
