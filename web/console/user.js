import { useState } from 'preact/hooks';
import { html } from './html.js';
import { api } from './api.js';
import { when } from './format.js';

function Table({ caption, columns, rows, testid }) {
  if (rows.length === 0) return html`<p>No ${caption.toLowerCase()}.</p>`;
  return html`<div class="table-wrap">
    <table data-testid=${testid}>
      <caption>
        ${caption}
      </caption>
      <thead>
        <tr>
          ${columns.map((c) => html`<th scope="col">${c.title}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (row) =>
            html`<tr>
              ${columns.map((c) => html`<td>${c.value(row)}</td>`)}
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

export function UserPage() {
  const [query, setQuery] = useState('');
  const [user, setUser] = useState(null);
  const [error, setError] = useState(null);

  const lookup = async (event) => {
    event.preventDefault();
    setError(null);
    try {
      setUser(await api(`users/${encodeURIComponent(query.trim())}`));
    } catch (err) {
      setUser(null);
      setError(err.code === 'INVALID_PUBKEY' ? 'Enter an npub or a 64-character hex public key.' : err.message);
    }
  };

  return html`
    <form class="toolbar" onSubmit=${lookup} role="search">
      <label for="user-key">npub or hex public key</label>
      <input
        id="user-key"
        type="search"
        spellcheck="false"
        autocomplete="off"
        required
        value=${query}
        onInput=${(e) => setQuery(e.currentTarget.value)}
      />
      <button type="submit">Look up</button>
    </form>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${
      user &&
      html`<section aria-labelledby="user-title" data-testid="user">
        <h2 id="user-title"><code class="id">${user.npub}</code></h2>
        <p>Hex <code class="id">${user.pubkey}</code></p>
        <${Table}
          caption="Devices"
          testid="devices"
          rows=${user.devices}
          columns=${[
            { title: 'Token (redacted)', value: (d) => html`<code>${d.token}</code>` },
            { title: 'Transport', value: (d) => d.transport + (d.sandbox ? ' (sandbox)' : '') },
            { title: 'Push service', value: (d) => d.endpointHost ?? '—' },
            { title: 'Encrypted', value: (d) => (d.encrypted ? 'yes' : 'no') },
          ]}
        />
        <h3>Preferences</h3>
        <p>
          ${
            user.preferences
              ? `Kinds ${user.preferences.kinds.join(', ')}; campaigns ${user.preferences.campaignsEnabled ? 'on' : 'off'}`
              : 'Never set (the defaults apply).'
          }
        </p>
        <h3>Bells</h3>
        ${
          user.bells.length === 0
            ? html`<p>No bells.</p>`
            : html`<ul>
                ${user.bells.map((b) => html`<li><code class="id">${b.npub}</code></li>`)}
              </ul>`
        }
        <h3>Inbox counters</h3>
        <p>${user.counters.totalNew} new</p>
        <${Table}
          caption="Counters by type"
          testid="counters"
          rows=${Object.entries(user.counters.types)}
          columns=${[
            { title: 'Type', value: ([t]) => t },
            { title: 'Counts', value: ([, c]) => JSON.stringify(c) },
          ]}
        />
        <${Table}
          caption="Last deliveries"
          testid="deliveries"
          rows=${user.deliveries}
          columns=${[
            { title: 'When', value: (d) => when(d.at) },
            { title: 'Type', value: (d) => d.type },
            { title: 'Outcome', value: (d) => d.status + (d.error ? ': ' + d.error : '') },
            { title: 'Transport', value: (d) => d.transport ?? '—' },
            { title: 'Notification', value: (d) => html`<code class="id">${d.notificationId}</code>` },
          ]}
        />
      </section>`
    }
  `;
}
