import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { api } from './api.js';
import { number } from './format.js';

export function NtfyPage() {
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  const load = () =>
    api('ntfy?limit=500')
      .then((d) => {
        setData(d);
        setError(null);
      })
      .catch((err) => setError(err.message));
  useEffect(() => {
    load();
  }, []);
  return html`
    <div class="toolbar"><button type="button" class="secondary" onClick=${load}>Refresh</button></div>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${
      data &&
      (data.topics.length === 0
        ? html`<p>No topic has messages or subscribers.</p>`
        : html`<div class="table-wrap">
            <table data-testid="ntfy-topics">
              <caption>
                Topics${data.truncated ? ' (the first 500)' : ''}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Topic</th>
                  <th scope="col">Subscriptions</th>
                  <th scope="col">Stored messages</th>
                </tr>
              </thead>
              <tbody>
                ${data.topics.map(
                  (t) =>
                    html`<tr>
                      <th scope="row"><code class="id">${t.topic}</code></th>
                      <td>${number(t.subscribers)}</td>
                      <td>${number(t.messages)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`)
    }
  `;
}
