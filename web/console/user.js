import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { api, forApp } from './api.js';
import { number, when } from './format.js';

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

/** How often the page asks again for a user's deliveries while a test push is on its way, and for how long. */
const AWAIT_DELIVERY_MS = 2000;
const AWAIT_DELIVERY_TRIES = 30;

/** A test push to one user through the send API (the app's own types; the first is the default). */
function TestSend({ app, types, pubkey, onSent }) {
  const [to, setTo] = useState(pubkey ?? '');
  const [type, setType] = useState(types[0] ?? '');
  const [text, setText] = useState('');
  const [status, setStatus] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    if (pubkey) setTo(pubkey);
  }, [pubkey]);

  const send = async (event) => {
    event.preventDefault();
    setError(null);
    setStatus(null);
    try {
      const sent = await api(forApp('test-send', app), { method: 'POST', body: { pubkey: to.trim(), type, text } });
      setStatus(`Queued test push ${sent.id} to ${sent.npub}; its delivery appears below.`);
      onSent(sent);
    } catch (err) {
      setError(err.message);
    }
  };

  return html`<form class="test-send" onSubmit=${send} aria-labelledby="test-send-title" data-testid="test-send">
    <h2 id="test-send-title">Send a test push</h2>
    <label for="test-to">To (npub or hex public key)</label>
    <input id="test-to" spellcheck="false" autocomplete="off" required value=${to} onInput=${(e) => setTo(e.currentTarget.value)} />
    <label for="test-type">Type</label>
    <select id="test-type" value=${type} onChange=${(e) => setType(e.currentTarget.value)}>
      ${types.map((t) => html`<option value=${t}>${t}</option>`)}
    </select>
    <label for="test-text">Text</label>
    <textarea id="test-text" required rows="2" maxlength="2048" value=${text} onInput=${(e) => setText(e.currentTarget.value)}></textarea>
    <button type="submit">Send test push</button>
    <p role="status" class="status">${status ?? ''}</p>
    ${error && html`<p class="error" role="alert">${error}</p>`}
  </form>`;
}

export function UserPage({ app, apps }) {
  const [query, setQuery] = useState('');
  const [user, setUser] = useState(null);
  const [error, setError] = useState(null);
  const [awaiting, setAwaiting] = useState(null);
  const types = apps?.find((a) => a.id === app)?.sendTypes;

  const show = async (key) => {
    setError(null);
    try {
      setUser(await api(forApp(`users/${encodeURIComponent(key.trim())}`, app)));
    } catch (err) {
      setUser(null);
      setError(err.code === 'INVALID_PUBKEY' ? 'Enter an npub or a 64-character hex public key.' : err.message);
    }
  };
  const lookup = (event) => {
    event.preventDefault();
    return show(query);
  };

  // After a test push: show its recipient, and ask again until the push's delivery is logged.
  useEffect(() => {
    if (!awaiting) return undefined;
    let tries = 0;
    let timer;
    const tick = async () => {
      const found = await api(forApp(`users/${awaiting.recipient}`, app)).catch(() => null);
      if (found) setUser(found);
      const logged = found?.deliveries.some((d) => d.notificationId === awaiting.id && d.outcome !== 'queued' && d.outcome !== 'retrying');
      if (!logged && ++tries < AWAIT_DELIVERY_TRIES) timer = setTimeout(tick, AWAIT_DELIVERY_MS);
    };
    tick();
    return () => clearTimeout(timer);
  }, [awaiting]);

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
      types &&
      html`<${TestSend}
        app=${app}
        types=${types}
        pubkey=${user?.npub}
        onSent=${(sent) => {
          setQuery(sent.npub);
          setAwaiting(sent);
        }}
      />`
    }
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
            { title: 'New', value: ([, c]) => number(c.new) },
            { title: 'Viewed', value: ([, c]) => number(c.viewed) },
            { title: 'Total', value: ([, c]) => number(c.total) },
          ]}
        />
        <${Table}
          caption="Last pushes, newest first"
          testid="deliveries"
          rows=${user.deliveries}
          columns=${[
            { title: 'When', value: (d) => when(d.lastAt) },
            { title: 'Type', value: (d) => d.type },
            {
              title: 'Outcome',
              value: (d) =>
                html`<span class=${d.outcome === 'failed' ? 'bad' : d.outcome === 'sent' ? 'ok' : ''}>${d.outcome}</span
                  >${d.opened ? ', opened' : ''}`,
            },
            { title: 'Provider answer', value: (d) => (d.answer ? html`<code class="answer">${d.answer}</code>` : '—') },
            {
              title: 'Devices',
              value: (d) =>
                d.devices.length === 0
                  ? '—'
                  : html`<ul class="flags">
                      ${d.devices.map(
                        (a) =>
                          html`<li>
                            ${a.transport ?? '?'} <code>${a.tokenPrefix ?? ''}</code>: ${a.status}${a.answer ? ` (${a.answer})` : ''}
                          </li>`,
                      )}
                    </ul>`,
            },
            { title: 'Notification', value: (d) => html`<code class="id">${d.notificationId}</code>` },
          ]}
        />
      </section>`
    }
  `;
}
