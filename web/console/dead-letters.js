import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from './html.js';
import { api, forApp } from './api.js';
import { when } from './format.js';

const PAGE_SIZE = 50;
const DLQ = 'v1/admin/dlq';

/** A modal confirmation (<dialog>: focus is trapped, Escape cancels). */
export function Confirm({ request, onClose }) {
  const dialog = useRef(null);
  useEffect(() => {
    if (request && !dialog.current.open) dialog.current.showModal();
    if (!request && dialog.current.open) dialog.current.close();
  }, [request]);
  return html`<dialog ref=${dialog} aria-labelledby="confirm-title" onClose=${() => onClose(false)} data-testid="confirm">
    <form method="dialog">
      <h2 id="confirm-title">${request?.title ?? ''}</h2>
      <p>${request?.text ?? ''}</p>
      <div class="actions">
        <button type="button" class="secondary" onClick=${() => onClose(false)}>Cancel</button>
        <button type="button" class=${request?.danger ? 'danger' : ''} onClick=${() => onClose(true)}>${request?.action ?? 'OK'}</button>
      </div>
    </form>
  </dialog>`;
}

export function DeadLetters({ app }) {
  const [queue, setQueue] = useState('outbound');
  const [items, setItems] = useState([]);
  const [cursor, setCursor] = useState(null);
  const [status, setStatus] = useState(null);
  const [error, setError] = useState(null);
  const [confirm, setConfirm] = useState(null);

  const load = async (after) => {
    setError(null);
    try {
      const params = new URLSearchParams({ queue, limit: String(PAGE_SIZE) });
      if (after) params.set('cursor', after);
      const page = await api(forApp(`${DLQ}?${params}`, app));
      setItems((old) => (after ? [...old, ...page.items] : page.items));
      setCursor(page.nextCursor);
    } catch (err) {
      setError(err.message);
    }
  };
  useEffect(() => {
    load(null);
  }, [queue]);

  const ask = (request) => setConfirm(request);
  const closed = async (ok) => {
    const request = confirm;
    setConfirm(null);
    if (!ok || !request) return;
    try {
      setStatus(await request.run());
      await load(null);
    } catch (err) {
      setError(err.message);
    }
  };

  const replay = (item) =>
    ask({
      title: 'Replay this dead letter?',
      text: `${item.id} goes back to the ${item.lane} lane of ${item.queue} with its attempts reset.`,
      action: 'Replay',
      run: async () => {
        await api(forApp(`${DLQ}/${encodeURIComponent(item.id)}/replay?queue=${item.queue}`, app), { method: 'POST' });
        return `Replayed ${item.id}.`;
      },
    });
  const remove = (item) =>
    ask({
      title: 'Delete this dead letter?',
      text: `${item.id} is forgotten for good; it is never pushed.`,
      action: 'Delete',
      danger: true,
      run: async () => {
        await api(forApp(`${DLQ}/${encodeURIComponent(item.id)}?queue=${item.queue}`, app), { method: 'DELETE' });
        return `Deleted ${item.id}.`;
      },
    });
  const replayAll = () =>
    ask({
      title: `Replay every dead letter of ${queue}?`,
      text: 'Each goes back to its lane with its attempts reset.',
      action: 'Replay all',
      run: async () => {
        const result = await api(forApp(`${DLQ}/replay?queue=${queue}`, app), { method: 'POST' });
        return `Replayed ${result.replayed} dead letters of ${queue}.`;
      },
    });

  return html`
    <div class="toolbar">
      <label for="dlq-queue">Queue</label>
      <select id="dlq-queue" value=${queue} onChange=${(e) => setQueue(e.currentTarget.value)}>
        <option value="outbound">outbound (pushes)</option>
        <option value="inbound">inbound (events)</option>
      </select>
      <button type="button" onClick=${() => load(null)} class="secondary">Refresh</button>
      <button type="button" onClick=${replayAll} disabled=${items.length === 0}>Replay all</button>
    </div>
    <p role="status" class="status">${status ?? ''}</p>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${
      items.length === 0
        ? html`<p data-testid="dlq-empty">No dead letters in ${queue}.</p>`
        : html`<div class="table-wrap">
            <table data-testid="dead-letters">
              <caption>
                Dead letters of ${queue}, oldest first
              </caption>
              <thead>
                <tr>
                  <th scope="col">Id</th>
                  <th scope="col">Lane</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Last error</th>
                  <th scope="col">Dead since</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                ${items.map(
                  (item) =>
                    html`<tr data-id=${item.id}>
                      <th scope="row"><code class="id">${item.id}</code></th>
                      <td>${item.lane}</td>
                      <td>${item.reason}</td>
                      <td>${item.attempts}</td>
                      <td>${item.lastError ?? '—'}</td>
                      <td>${when(item.deadAt)}</td>
                      <td class="actions">
                        <button type="button" onClick=${() => replay(item)} aria-label=${`Replay ${item.id}`}>Replay</button>
                        <button type="button" class="danger" onClick=${() => remove(item)} aria-label=${`Delete ${item.id}`}>Delete</button>
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
    ${cursor && html`<button type="button" class="secondary" onClick=${() => load(cursor)}>Load more</button>`}
    <${Confirm} request=${confirm} onClose=${closed} />
  `;
}
