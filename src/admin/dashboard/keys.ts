import { useState } from 'preact/hooks';
import type { KeyPatch, KeySettings, ManagedKey, Page } from '../keys/managed-key-store.js';
import { type Api, messageOf } from './api.js';
import { useEscapeToCancel, useFocusOnMount } from './focus.js';
import { formatTime, formatUsd } from './format.js';
import { html, type View } from './html.js';
import { usePaged } from './use-loaded.js';
import { KeyForm } from './key-form.js';

type Issued = ManagedKey & { key: string };

/** What is open besides the list: one form or dialog at a time. */
type Panel =
  | { kind: 'create' }
  | { kind: 'edit'; key: ManagedKey }
  | { kind: 'rotate'; key: ManagedKey }
  | { kind: 'revoke'; key: ManagedKey }
  | { kind: 'secret'; issued: Issued; action: 'created' | 'rotated' };

/** The managed keys: list, create, edit, rotate, revoke. */
export function Keys({ api }: { api: Api }): View {
  const [includeRevoked, setIncludeRevoked] = useState(false);
  const [panel, setPanel] = useState<Panel>();
  const keys = usePaged(
    (cursor) => api.get<Page<ManagedKey>>('keys', { limit: 50, cursor, includeRevoked: includeRevoked || undefined }),
    String(includeRevoked),
  );

  /** Runs an API call from a panel: on success closes it (or shows the secret) and reloads the list. */
  async function act(call: () => Promise<ManagedKey | Issued>, then?: (result: Issued) => Panel): Promise<string | undefined> {
    try {
      const result = await call();
      setPanel(then ? then(result as Issued) : undefined);
      keys.reload();
      return undefined;
    } catch (failure) {
      return messageOf(failure);
    }
  }

  return html`<section aria-labelledby="keys-title">
    <h2 id="keys-title">Keys</h2>
    <div class="toolbar">
      <button type="button" onClick=${() => setPanel({ kind: 'create' })}>Create key</button>
      <label><input type="checkbox" checked=${includeRevoked} onChange=${(event: Event) => setIncludeRevoked((event.target as HTMLInputElement).checked)} /> Show revoked keys</label>
    </div>
    ${panel?.kind === 'secret' && html`<${SecretPanel} issued=${panel.issued} action=${panel.action} onDone=${() => setPanel(undefined)} />`}
    ${
      panel?.kind === 'create' &&
      html`<${KeyForm}
        title="Create a key"
        submitLabel="Create"
        onCancel=${() => setPanel(undefined)}
        onSubmit=${(settings: KeySettings) =>
          act(
            () => api.send<Issued>('POST', 'keys', settings),
            (issued) => ({ kind: 'secret', issued, action: 'created' }),
          )}
      />`
    }
    ${
      panel?.kind === 'edit' &&
      html`<${KeyForm}
        title=${`Edit ${describe(panel.key)}`}
        submitLabel="Save"
        initial=${panel.key}
        onCancel=${() => setPanel(undefined)}
        onSubmit=${(patch: KeyPatch) => act(() => api.send<ManagedKey>('PATCH', `keys/${encodeURIComponent(panel.key.id)}`, patch))}
      />`
    }
    ${
      panel?.kind === 'rotate' &&
      html`<${RotateDialog}
        keyLabel=${describe(panel.key)}
        onCancel=${() => setPanel(undefined)}
        onRotate=${(graceSeconds: number) =>
          act(
            () => api.send<Issued>('POST', `keys/${encodeURIComponent(panel.key.id)}/rotate`, { graceSeconds }),
            (issued) => ({ kind: 'secret', issued, action: 'rotated' }),
          )}
      />`
    }
    ${
      panel?.kind === 'revoke' &&
      html`<${RevokeDialog}
        keyLabel=${describe(panel.key)}
        onCancel=${() => setPanel(undefined)}
        onRevoke=${() => act(() => api.send<ManagedKey>('DELETE', `keys/${encodeURIComponent(panel.key.id)}`))}
      />`
    }
    ${keys.error && html`<p role="alert" class="error">${keys.error}</p>`}
    ${keys.rows && html`<${KeyTable} keys=${keys.rows} now=${api.now()} open=${setPanel} />`}
    ${keys.hasMore && html`<button type="button" onClick=${keys.loadMore}>Load more</button>`}
  </section>`;
}

function KeyTable({ keys, now, open }: { keys: ManagedKey[]; now: number; open: (panel: Panel) => void }): View {
  return html`<table>
    <caption>Managed keys, newest first</caption>
    <thead><tr>
      <th scope="col">Name</th><th scope="col">Id</th><th scope="col">Prefix</th><th scope="col">Models</th><th scope="col">Group</th>
      <th scope="col">Limits</th><th scope="col">Budget</th><th scope="col">State</th><th scope="col">Created</th><th scope="col">Actions</th>
    </tr></thead>
    <tbody>
      ${keys.map(
        (key) => html`<tr key=${key.id}>
          <th scope="row">${key.name ?? '(no name)'}</th>
          <td>${key.id}</td>
          <td><code>${key.prefix}…</code></td>
          <td>${key.models === '*' ? 'all' : key.models.join(', ')}</td>
          <td>${key.group}</td>
          <td>${describeLimits(key)}</td>
          <td>${key.budget === undefined ? 'default' : key.budget === false ? 'none' : `${formatUsd(key.budget.usd)}${key.budget.period ? ` per ${key.budget.period}` : ''}`}</td>
          <td>${stateOf(key, now)}</td>
          <td>${formatTime(key.createdAt)}</td>
          <td class="actions">
            ${
              key.revokedAt === undefined &&
              html`<button type="button" onClick=${() => open({ kind: 'edit', key })}>Edit</button>
                <button type="button" onClick=${() => open({ kind: 'rotate', key })}>Rotate</button>
                <button type="button" class="danger" onClick=${() => open({ kind: 'revoke', key })}>Revoke</button>`
            }
          </td>
        </tr>`,
      )}
      ${keys.length === 0 && html`<tr><td colspan="10">No keys yet.</td></tr>`}
    </tbody>
  </table>`;
}

/** The secret, shown once: the API never tells it again. */
function SecretPanel({ issued, action, onDone }: { issued: Issued; action: 'created' | 'rotated'; onDone: () => void }): View {
  const [copied, setCopied] = useState<string>();
  const focus = useFocusOnMount<HTMLInputElement>();
  async function copy(): Promise<void> {
    try {
      await navigator.clipboard.writeText(issued.key);
      setCopied('Copied.');
    } catch {
      setCopied('The browser refused the clipboard: select the key and copy it.');
    }
  }
  return html`<section class="secret" aria-labelledby="secret-title">
    <h3 id="secret-title">Key ${action}: ${describe(issued)}</h3>
    <p class="warning" role="alert">Copy this key now. It is shown only once: the gateway keeps only its hash and cannot show it again.</p>
    ${action === 'rotated' && issued.previousExpiresAt !== undefined && html`<p>The previous key keeps working until ${formatTime(issued.previousExpiresAt)}.</p>`}
    <label>Secret <input ref=${focus} readonly value=${issued.key} size="60" onFocus=${(event: Event) => (event.target as HTMLInputElement).select()} /></label>
    <button type="button" onClick=${copy}>Copy</button>
    <span aria-live="polite">${copied}</span>
    <p><button type="button" onClick=${onDone}>I have copied it</button></p>
  </section>`;
}

function RotateDialog({
  keyLabel,
  onRotate,
  onCancel,
}: {
  keyLabel: string;
  onRotate: (graceSeconds: number) => Promise<string | undefined>;
  onCancel: () => void;
}): View {
  const [grace, setGrace] = useState('86400');
  const [error, setError] = useState<string>();
  const focus = useFocusOnMount<HTMLInputElement>();
  useEscapeToCancel(onCancel);
  return html`<dialog open aria-labelledby="rotate-title">
    <form
      onSubmit=${async (event: Event) => {
        event.preventDefault();
        setError(await onRotate(Number(grace)));
      }}
    >
      <h3 id="rotate-title">Rotate ${keyLabel}</h3>
      <p>A new secret replaces the key's. The old one keeps working for the grace period, so clients can move over.</p>
      <label>Grace period (seconds) <input ref=${focus} type="number" min="0" max="2592000" step="1" required value=${grace} onInput=${(event: Event) => setGrace((event.target as HTMLInputElement).value)} /></label>
      <p class="hint">86400 is one day; 0 stops the old secret at once.</p>
      ${error && html`<p role="alert" class="error">${error}</p>`}
      <button type="submit">Rotate</button> <button type="button" onClick=${onCancel}>Cancel</button>
    </form>
  </dialog>`;
}

function RevokeDialog({ keyLabel, onRevoke, onCancel }: { keyLabel: string; onRevoke: () => Promise<string | undefined>; onCancel: () => void }): View {
  const [error, setError] = useState<string>();
  const focus = useFocusOnMount<HTMLButtonElement>();
  useEscapeToCancel(onCancel);
  return html`<dialog open aria-labelledby="revoke-title">
    <h3 id="revoke-title">Revoke ${keyLabel}?</h3>
    <p>Every request with this key is refused from now on, on every instance. This cannot be undone.</p>
    ${error && html`<p role="alert" class="error">${error}</p>`}
    <button type="button" class="danger" onClick=${async () => setError(await onRevoke())}>Revoke key</button>
    <button ref=${focus} type="button" onClick=${onCancel}>Cancel</button>
  </dialog>`;
}

function describe(key: ManagedKey): string {
  return key.name ? `${key.name} (${key.id})` : key.id;
}

function describeLimits(key: ManagedKey): string {
  const limits = key.limits;
  if (!limits) return 'default';
  const parts = [
    limits.requestsPerMinute !== undefined && `${limits.requestsPerMinute} req/min`,
    limits.tokensPerMinute !== undefined && `${limits.tokensPerMinute} tok/min`,
    limits.concurrentRequests !== undefined && `${limits.concurrentRequests} at once`,
    limits.quota !== undefined && `quota ${limits.quota}`,
  ].filter(Boolean);
  return parts.length === 0 ? 'default' : parts.join(', ');
}

function stateOf(key: ManagedKey, now: number): string {
  if (key.revokedAt !== undefined) return `revoked ${formatTime(key.revokedAt)}`;
  if (key.disabled) return 'disabled';
  if (key.previousExpiresAt !== undefined && key.previousExpiresAt > now) return `active (previous secret until ${formatTime(key.previousExpiresAt)})`;
  return 'active';
}
