import { useState } from 'preact/hooks';
import { ApiError, createApi, messageOf } from './api.js';
import { html, type View } from './html.js';

export interface AdminStatus {
  keyStore: string;
  requestLog: string | null;
  version: string;
}

/** Asks for the admin key and checks it with `GET status` before keeping it. */
export function Login({ onSignedIn, notice }: { onSignedIn: (key: string, status: AdminStatus) => void; notice?: string }): View {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | undefined>(notice);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event): Promise<void> {
    event.preventDefault();
    setBusy(true);
    try {
      const status = await createApi(key.trim()).get<AdminStatus>('status');
      onSignedIn(key.trim(), status);
    } catch (failure) {
      setError(failure instanceof ApiError && failure.status === 401 ? 'That admin key is not accepted. Check it and try again.' : messageOf(failure));
      setBusy(false);
    }
  }

  return html`<main class="login">
    <h1>infergate admin</h1>
    <form aria-labelledby="login-title" onSubmit=${submit}>
      <h2 id="login-title">Sign in</h2>
      <label>Admin key <input type="password" autocomplete="current-password" required value=${key} onInput=${(event: Event) => setKey((event.target as HTMLInputElement).value)} /></label>
      <p class="hint">INFERGATE_ADMIN_KEY, or the config's admin.key. It stays in this tab only (sessionStorage).</p>
      ${error && html`<p role="alert" class="error">${error}</p>`}
      <button type="submit" disabled=${busy}>Sign in</button>
    </form>
  </main>`;
}
