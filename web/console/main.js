// The operator console: a single-page app (Preact with htm, uPlot for the plots) served by the
// service at /console and talking only to /console/api. Built by `npm run build` (esbuild) into
// dist/console-ui/.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { api, setCsrfToken, whenSessionLost } from './api.js';
import { Login } from './login.js';
import { Overview } from './overview.js';
import { DeadLetters } from './dead-letters.js';
import { UserPage } from './user.js';
import { NtfyPage } from './ntfy.js';
import { KeysPage } from './keys.js';
import './style.css';

const PAGES = [
  { path: '/console', title: 'Overview', component: Overview },
  { path: '/console/dead-letters', title: 'Dead letters', component: DeadLetters },
  { path: '/console/user', title: 'User', component: UserPage },
  { path: '/console/keys', title: 'API keys', component: KeysPage },
  // ntfy topics are the service's own, shared by every app.
  { path: '/console/ntfy', title: 'ntfy', component: NtfyPage, global: true },
];

function pageFor(pathname) {
  return PAGES.find((p) => p.path === pathname.replace(/\/$/, '')) ?? PAGES[0];
}

/** The app the address names (`?app=`), the default app otherwise: a reload or a shared link keeps it. */
function appFromUrl() {
  return new URLSearchParams(location.search).get('app') ?? 'default';
}

function pageUrl(page, app) {
  return app === 'default' ? page.path : `${page.path}?app=${encodeURIComponent(app)}`;
}

/** The app switcher: every app the service hosts; the pages below show the one selected. */
function AppSwitcher({ apps, app, onChange }) {
  return html`<div class="app-switcher">
    <label for="app-select">App</label>
    <select id="app-select" value=${app} onChange=${(e) => onChange(e.currentTarget.value)}>
      ${apps.map((a) => html`<option value=${a.id}>${a.id}</option>`)}
    </select>
  </div>`;
}

function App() {
  // undefined: asking whether a session exists; null: logged out; a string: the CSRF token.
  const [session, setSession] = useState(undefined);
  const [page, setPage] = useState(() => pageFor(location.pathname));
  const [app, setApp] = useState(appFromUrl);
  const [apps, setApps] = useState([{ id: 'default' }]);

  useEffect(() => {
    whenSessionLost(() => {
      setCsrfToken(null);
      setSession(null);
    });
    api('session')
      .then((s) => {
        setCsrfToken(s.csrfToken);
        setSession(s.csrfToken);
      })
      .catch(() => setSession(null));
    const onPop = () => {
      setPage(pageFor(location.pathname));
      setApp(appFromUrl());
    };
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);

  useEffect(() => {
    if (session)
      api('apps').then(
        (a) => setApps(a.apps),
        () => undefined,
      );
  }, [session]);

  useEffect(() => {
    document.title = `${page.title} · nostr-push console`;
    document.getElementById('main')?.focus();
  }, [page]);

  const go = (event, next) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    history.pushState(null, '', pageUrl(next, app));
    setPage(next);
  };

  const switchApp = (next) => {
    history.pushState(null, '', pageUrl(page, next));
    setApp(next);
  };

  const logout = async () => {
    await api('logout', { method: 'POST' }).catch(() => undefined);
    setCsrfToken(null);
    setSession(null);
  };

  if (session === undefined) return html`<p class="loading" role="status">Loading…</p>`;
  if (session === null)
    return html`<${Login}
      onLoggedIn=${(token) => {
        setCsrfToken(token);
        setSession(token);
      }}
    />`;

  const Page = page.component;
  return html`
    <a class="skip" href="#main">Skip to content</a>
    <header class="top">
      <span class="brand">nostr-push</span>
      <nav aria-label="Console pages">
        <ul>
          ${PAGES.map(
            (p) =>
              html`<li>
                <a href=${pageUrl(p, app)} aria-current=${p === page ? 'page' : undefined} onClick=${(e) => go(e, p)}>${p.title}</a>
              </li>`,
          )}
        </ul>
      </nav>
      <${AppSwitcher} apps=${apps} app=${app} onChange=${switchApp} />
      <button type="button" class="secondary" onClick=${logout}>Log out</button>
    </header>
    <main id="main" tabindex="-1">
      <h1>${page.title}</h1>
      ${page.global ? html`<p class="scope">All apps</p>` : html`<p class="scope" data-testid="app-scope">App <strong>${app}</strong></p>`}
      <${Page} app=${app} apps=${apps} key=${app} />
    </main>
  `;
}

render(html`<${App} />`, document.getElementById('app'));
