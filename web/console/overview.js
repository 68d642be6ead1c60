import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { api, forApp } from './api.js';
import { ago, number, when } from './format.js';
import { LinePlot } from './plot.js';

/** How often the overview asks again (the plots' data are sampled every few seconds anyway). */
const REFRESH_MS = 3000;

function usePolling(path, intervalMs) {
  const [state, setState] = useState({ data: null, error: null });
  useEffect(() => {
    let stopped = false;
    let timer;
    const tick = async () => {
      try {
        const data = await api(path);
        if (!stopped) setState({ data, error: null });
      } catch (err) {
        if (!stopped) setState((s) => ({ data: s.data, error: err.message }));
      }
      if (!stopped) timer = setTimeout(tick, intervalMs);
    };
    tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [path]);
  return state;
}

function Flag({ ok, yes, no }) {
  return html`<span class=${ok ? 'ok' : 'bad'}>${ok ? '● ' + yes : '▲ ' + no}</span>`;
}

function Processes({ processes, now }) {
  if (processes.length === 0) return html`<p>No process has reported yet.</p>`;
  return html`<div class="table-wrap">
    <table>
      <caption>
        Processes of the fleet
      </caption>
      <thead>
        <tr>
          <th scope="col">Process</th>
          <th scope="col">Roles</th>
          <th scope="col">Tasks</th>
          <th scope="col">Started</th>
          <th scope="col">Last seen</th>
        </tr>
      </thead>
      <tbody>
        ${processes.map(
          (p) =>
            html`<tr>
              <th scope="row"><code>${p.host}</code> pid ${p.pid}</th>
              <td>${p.roles.join(', ')}</td>
              <td>
                <ul class="flags">
                  ${p.tasks.map((t) => html`<li><${Flag} ok=${t.alive} yes=${t.name} no=${`${t.name} (${t.error ?? 'dead'})`} /></li>`)}
                </ul>
              </td>
              <td>${when(p.startedAt)}</td>
              <td>${ago(p.lastSeenAt, now)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

function Relays({ processes, now }) {
  const relays = processes.flatMap((p) => p.relays.map((r) => ({ ...r, host: p.host, pid: p.pid })));
  if (relays.length === 0) return html`<p>No listener process reports relay connections.</p>`;
  return html`<div class="table-wrap">
    <table data-testid="relays">
      <caption>
        Relay connections
      </caption>
      <thead>
        <tr>
          <th scope="col">Relay</th>
          <th scope="col">State</th>
          <th scope="col">Last event</th>
          <th scope="col">Last error</th>
          <th scope="col">Reconnects</th>
          <th scope="col">Listener (app: process)</th>
        </tr>
      </thead>
      <tbody>
        ${relays.map(
          (r) =>
            html`<tr>
              <th scope="row"><code>${r.url}</code></th>
              <td>
                <${Flag}
                  ok=${r.connected}
                  yes=${r.authenticated ? 'connected, authenticated' : 'connected'}
                  no=${`disconnected${r.lastError ? ': ' + r.lastError : ''}`}
                />
              </td>
              <td>${ago(r.lastEventAt, now)}</td>
              <td data-field="last-error">${r.lastError ?? '—'}</td>
              <td data-field="reconnects">
                ${number(r.reconnects)}
                ${
                  r.disconnects?.length > 0 &&
                  html`<details>
                    <summary>History</summary>
                    <ol class="history">
                      ${r.disconnects.map((d) => html`<li>${when(d.at)}: ${d.error ?? 'closed'}</li>`)}
                    </ol>
                  </details>`
                }
              </td>
              <td>${r.app ?? 'default'}: ${r.host} pid ${r.pid}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/** One line per listener that follows users' own relays (issue 36). */
function UserRelays({ processes }) {
  const listeners = processes.filter((p) => p.userRelays);
  if (listeners.length === 0) return null;
  return html`<ul data-testid="user-relays">
    ${listeners.map(
      (p) =>
        html`<li>
          User relays (${p.host} pid ${p.pid}): ${number(p.userRelays.watched)} watched, ${number(p.userRelays.connected)} connected,
          ${number(p.userRelays.dropped)} dropped, ${number(p.userRelays.uncoveredUsers)} users uncovered,
          ${number(p.userRelays.requestsSent)} REQs sent
        </li>`,
    )}
  </ul>`;
}

function Queues({ queues }) {
  const rows = Object.entries(queues).flatMap(([queue, stats]) =>
    Object.entries(stats.lanes).map(([lane, l]) => ({ queue, lane, ...l, dead: stats.dead })),
  );
  return html`<div class="table-wrap">
    <table data-testid="queues">
      <caption>
        Queue depths
      </caption>
      <thead>
        <tr>
          <th scope="col">Queue</th>
          <th scope="col">Lane</th>
          <th scope="col">Ready</th>
          <th scope="col">Leased</th>
          <th scope="col">Dead (queue)</th>
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (r) =>
            html`<tr>
              <th scope="row">${r.queue}</th>
              <td>${r.lane}</td>
              <td>${number(r.ready)}</td>
              <td>${number(r.leased)}</td>
              <td>${number(r.dead)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

function Tokens({ tokens, at }) {
  return html`<div class="table-wrap">
    <table data-testid="tokens">
      <caption>
        Registered devices by transport
        <small>(counted ${when(at)})</small>
      </caption>
      <thead>
        <tr>
          ${Object.keys(tokens).map((t) => html`<th scope="col">${t}</th>`)}
        </tr>
      </thead>
      <tbody>
        <tr>
          ${Object.values(tokens).map((n) => html`<td>${number(n)}</td>`)}
        </tr>
      </tbody>
    </table>
  </div>`;
}

/** The app's transports: configured or off (and why), with the fleet's pushes of the last hour through each. */
function Transports({ app, transports }) {
  if (!transports || transports.length === 0) return null;
  return html`<section aria-labelledby="transports-title">
    <h2 id="transports-title">Transports of ${app}</h2>
    <div class="table-wrap">
      <table data-testid="transports">
        <caption>
          Configured transports; pushes of ${app} in the last hour
        </caption>
        <thead>
          <tr>
            <th scope="col">Transport</th>
            <th scope="col">State</th>
            <th scope="col">Pushed</th>
            <th scope="col">Failed</th>
            <th scope="col">Failed as not configured</th>
          </tr>
        </thead>
        <tbody>
          ${transports.map(
            (t) =>
              html`<tr data-transport=${t.transport}>
                <th scope="row">${t.transport}</th>
                <td><${Flag} ok=${t.configured} yes=${`configured: ${t.detail}`} no=${`not configured (${t.detail})`} /></td>
                <td>${number(t.ok)}</td>
                <td>${number(t.failed)}</td>
                <td data-field="unconfigured" class=${t.unconfigured > 0 ? 'bad' : ''}>${number(t.unconfigured)}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
  </section>`;
}

function Pushes({ pushes }) {
  const names = Object.keys(pushes.rates);
  return html`<section aria-labelledby="pushes-title">
    <h2 id="pushes-title">Pushes per second, last hour (every app)</h2>
    ${
      pushes.times.length < 2
        ? html`<p>Waiting for samples: every process samples its counters every few seconds.</p>`
        : html`<${LinePlot}
            label="Pushes per second by transport and outcome over the last hour"
            times=${pushes.times}
            series=${pushes.rates}
          />`
    }
    <div class="table-wrap">
      <table data-testid="push-totals">
        <caption>
          Pushes in the last hour
        </caption>
        <thead>
          <tr>
            <th scope="col">Transport and outcome</th>
            <th scope="col">Pushes</th>
          </tr>
        </thead>
        <tbody>
          ${names.map(
            (n) =>
              html`<tr>
                <th scope="row">${n}</th>
                <td data-series=${n}>${number(pushes.totals[n])}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
  </section>`;
}

export function Overview({ app }) {
  const { data, error } = usePolling(forApp('overview', app), REFRESH_MS);
  if (!data) return error ? html`<p class="error" role="alert">${error}</p>` : html`<p role="status">Loading…</p>`;
  const now = Date.parse(data.now);
  return html`
    ${error && html`<p class="error" role="alert">Refresh failed: ${error}</p>`}
    <${Transports} app=${data.app} transports=${data.transports} />
    <${Pushes} pushes=${data.pushes} />
    <section aria-labelledby="fleet-title">
      <h2 id="fleet-title">Fleet (every app)</h2>
      <${Processes} processes=${data.processes} now=${now} />
    </section>
    <section aria-labelledby="relays-title">
      <h2 id="relays-title">Relays (every app)</h2>
      <${Relays} processes=${data.processes} now=${now} />
      <${UserRelays} processes=${data.processes} />
    </section>
    <section aria-labelledby="queues-title">
      <h2 id="queues-title">Queues of ${data.app}</h2>
      <${Queues} queues=${data.queues} />
    </section>
    <section aria-labelledby="tokens-title">
      <h2 id="tokens-title">Devices of ${data.app}</h2>
      <${Tokens} tokens=${data.tokens} at=${data.tokensAt} />
    </section>
  `;
}
