import 'uplot/dist/uPlot.min.css';
import './dashboard.css';
import { render } from 'preact';
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { type Api, ApiError, createApi } from './api.js';
import { Health } from './health.js';
import { html, type View } from './html.js';
import { Keys } from './keys.js';
import { type AdminStatus, Login } from './login.js';
import { LogDetail, Logs } from './logs.js';
import { Overview } from './overview.js';
import { ToolCalls } from './tool-calls.js';

/**
 * The admin dashboard (docs/admin.md, "Dashboard"): a page of the admin handler talking to the
 * admin API with the key the operator types in. Sections are picked by the URL's hash
 * (`#/keys`, `#/logs/<request id>`), so the back button and links work.
 */

const KEY_STORAGE = 'infergate-admin-key';

const SECTIONS = [
  ['overview', 'Overview'],
  ['logs', 'Request log'],
  ['tool-calls', 'Tool calls'],
  ['keys', 'Keys'],
  ['health', 'Health'],
] as const;

function App(): View {
  const [adminKey, setAdminKey] = useState(() => sessionStorage.getItem(KEY_STORAGE) ?? undefined);
  const [status, setStatus] = useState<AdminStatus>();
  const [notice, setNotice] = useState<string>();
  const route = useHashRoute();

  const signOut = useCallback((message?: string) => {
    sessionStorage.removeItem(KEY_STORAGE);
    setAdminKey(undefined);
    setStatus(undefined);
    setNotice(message);
  }, []);
  // A key kept from before (a reload) or one refused later (rotated admin key): back to the sign-in.
  const api = useMemo(
    () => (adminKey === undefined ? undefined : refusing(createApi(adminKey), () => signOut('The admin key was refused: sign in again.'))),
    [adminKey, signOut],
  );
  useEffect(() => {
    if (api && !status) api.get<AdminStatus>('status').then(setStatus, () => {});
  }, [api, status]);

  if (!api) {
    return html`<${Login}
      notice=${notice}
      onSignedIn=${(key: string, answer: AdminStatus) => {
        sessionStorage.setItem(KEY_STORAGE, key);
        setAdminKey(key);
        setStatus(answer);
        setNotice(undefined);
      }}
    />`;
  }
  const [section, detail] = route;
  return html`<header>
      <h1>infergate admin</h1>
      <nav aria-label="Sections">
        ${SECTIONS.map(([id, label]) => html`<a href=${`#/${id}`} aria-current=${section === id ? 'page' : undefined}>${label}</a>`)}
      </nav>
      <p class="status">
        ${status && `Key store: ${status.keyStore} · Request log: ${status.requestLog ?? 'off'} · infergate ${status.version}`}
      </p>
      <button type="button" onClick=${() => signOut()}>Sign out</button>
    </header>
    <main>${sectionView(api, section, detail)}</main>`;
}

function sectionView(api: Api, section: string, detail: string | undefined): View {
  if (section === 'logs' && detail !== undefined) return html`<${LogDetail} api=${api} requestId=${detail} />`;
  if (section === 'logs') return html`<${Logs} api=${api} />`;
  if (section === 'tool-calls') return html`<${ToolCalls} api=${api} />`;
  if (section === 'keys') return html`<${Keys} api=${api} />`;
  if (section === 'health') return html`<${Health} api=${api} />`;
  return html`<${Overview} api=${api} />`;
}

/** `#/logs/req_1` → `['logs', 'req_1']`; follows the hash as it changes. */
function useHashRoute(): Route {
  const [route, setRoute] = useState(readHash);
  useEffect(() => {
    const follow = () => setRoute(readHash());
    addEventListener('hashchange', follow);
    return () => removeEventListener('hashchange', follow);
  }, []);
  return route;
}

type Route = [section: string, detail: string | undefined];

function readHash(): Route {
  const [section, detail] = location.hash.replace(/^#\/?/, '').split('/');
  return [section || 'overview', detail === undefined ? undefined : decodeURIComponent(detail)];
}

/** The API, calling `onRefused` when the admin key stops being accepted. */
function refusing(api: Api, onRefused: () => void): Api {
  const watch = <T>(call: Promise<T>): Promise<T> =>
    call.catch((error: unknown) => {
      if (error instanceof ApiError && error.status === 401) onRefused();
      throw error;
    });
  return { get: (path, query) => watch(api.get(path, query)), send: (method, path, body) => watch(api.send(method, path, body)), now: api.now };
}

render(html`<${App} />`, document.getElementById('app')!);
