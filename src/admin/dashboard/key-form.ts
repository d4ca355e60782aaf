import { useState } from 'preact/hooks';
import type { KeyPatch, KeySettings, ManagedKey } from '../keys/managed-key-store.js';
import { cancelOnEscape, useFocusOnMount } from './focus.js';
import { html, type View } from './html.js';

const PERIODS = [
  ['', 'in total'],
  ['1d', 'per day'],
  ['7d', 'per 7 days'],
  ['30d', 'per 30 days'],
  ['month', 'per calendar month'],
] as const;

/** The form's fields as typed: text until sent. */
interface Fields {
  name: string;
  models: string;
  group: string;
  requestsPerMinute: string;
  tokensPerMinute: string;
  concurrentRequests: string;
  budgetUsd: string;
  budgetPeriod: string;
  disabled: boolean;
}

export interface KeyFormProps {
  title: string;
  submitLabel: string;
  /** The key being edited; absent when creating one. */
  initial?: ManagedKey;
  /** Resolves to an error message to show, or `undefined` once done. */
  onSubmit: (body: KeySettings | KeyPatch) => Promise<string | undefined>;
  onCancel: () => void;
}

/**
 * Creating or editing a key. Creating sends only the fields filled in; editing sends every field,
 * an emptied one as `null` (back to the gateway's default).
 */
export function KeyForm({ title, submitLabel, initial, onSubmit, onCancel }: KeyFormProps): View {
  const [fields, setFields] = useState<Fields>(() => fieldsOf(initial));
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const focus = useFocusOnMount<HTMLInputElement>();
  const text = (name: keyof Fields, type = 'text') => ({
    type,
    name,
    value: fields[name],
    onInput: (event: Event) => setFields({ ...fields, [name]: (event.target as HTMLInputElement).value }),
  });

  async function submit(event: Event): Promise<void> {
    event.preventDefault();
    setBusy(true);
    const settings = settingsOf(fields);
    setError(await onSubmit(initial ? patchOf(settings) : settings));
    setBusy(false);
  }

  return html`<form class="key-form" aria-labelledby="key-form-title" onSubmit=${submit} onKeyDown=${cancelOnEscape(onCancel)}>
    <h3 id="key-form-title">${title}</h3>
    <label>Name <input ref=${focus} ...${text('name')} /></label>
    <label>Models <input ...${text('models')} placeholder="all" aria-describedby="models-hint" /></label>
    <p id="models-hint" class="hint">Comma-separated model names; empty or * for every model.</p>
    <label>Group <input ...${text('group')} placeholder="default" /></label>
    <fieldset>
      <legend>Limits (empty: the gateway's default)</legend>
      <label>Requests per minute <input ...${text('requestsPerMinute', 'number')} min="1" step="1" /></label>
      <label>Tokens per minute <input ...${text('tokensPerMinute', 'number')} min="1" step="1" /></label>
      <label>Concurrent requests <input ...${text('concurrentRequests', 'number')} min="1" step="1" /></label>
    </fieldset>
    <fieldset>
      <legend>Budget (empty: the gateway's default)</legend>
      <label>Budget (USD) <input ...${text('budgetUsd', 'number')} min="0" step="any" /></label>
      <label>Budget period <select name="budgetPeriod" value=${fields.budgetPeriod} onChange=${(event: Event) => setFields({ ...fields, budgetPeriod: (event.target as HTMLSelectElement).value })}>
        ${PERIODS.map(([value, label]) => html`<option value=${value}>${label}</option>`)}
      </select></label>
    </fieldset>
    <label><input type="checkbox" name="disabled" checked=${fields.disabled} onChange=${(event: Event) => setFields({ ...fields, disabled: (event.target as HTMLInputElement).checked })} /> Disabled</label>
    ${error && html`<p role="alert" class="error">${error}</p>`}
    <div class="buttons"><button type="submit" disabled=${busy}>${submitLabel}</button> <button type="button" onClick=${onCancel}>Cancel</button></div>
  </form>`;
}

function fieldsOf(key: ManagedKey | undefined): Fields {
  const number = (value: number | undefined) => (value === undefined ? '' : String(value));
  const budget = key?.budget || undefined;
  return {
    name: key?.name ?? '',
    models: key === undefined || key.models === '*' ? '' : key.models.join(', '),
    group: key?.group ?? '',
    requestsPerMinute: number(key?.limits?.requestsPerMinute),
    tokensPerMinute: number(key?.limits?.tokensPerMinute),
    concurrentRequests: number(key?.limits?.concurrentRequests),
    budgetUsd: number(budget?.usd),
    budgetPeriod: budget?.period ?? '',
    disabled: key?.disabled ?? false,
  };
}

/** The fields filled in, typed; the API checks the values and names a bad one. */
function settingsOf(fields: Fields): KeySettings {
  const number = (value: string) => (value.trim() === '' ? undefined : Number(value));
  const models = fields.models
    .split(',')
    .map((model) => model.trim())
    .filter((model) => model !== '');
  const limits = {
    ...optional('requestsPerMinute', number(fields.requestsPerMinute)),
    ...optional('tokensPerMinute', number(fields.tokensPerMinute)),
    ...optional('concurrentRequests', number(fields.concurrentRequests)),
  };
  const usd = number(fields.budgetUsd);
  return {
    ...optional('name', fields.name.trim() || undefined),
    models: models.length === 0 || models.includes('*') ? '*' : models,
    ...optional('group', fields.group.trim() || undefined),
    ...optional('limits', Object.keys(limits).length > 0 ? limits : undefined),
    ...optional('budget', usd === undefined ? undefined : { usd, ...optional('period', (fields.budgetPeriod || undefined) as 'month' | undefined) }),
    disabled: fields.disabled,
  };
}

/** An edit: every field, the ones left empty cleared. */
function patchOf(settings: KeySettings): KeyPatch {
  return {
    name: settings.name ?? null,
    models: settings.models ?? '*',
    group: settings.group ?? null,
    limits: settings.limits ?? null,
    budget: settings.budget ?? null,
    disabled: settings.disabled ?? false,
  };
}

/** `{ [name]: value }`, or nothing when the value is absent (exactOptionalPropertyTypes). */
function optional<Name extends string, Value>(name: Name, value: Value | undefined): { [key in Name]?: Value } {
  return (value === undefined ? {} : { [name]: value }) as { [key in Name]?: Value };
}
