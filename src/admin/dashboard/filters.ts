import { useState } from 'preact/hooks';
import { html, type View } from './html.js';

/**
 * The filters of a list page (the request log, the tool calls): what is typed in the form
 * (`draft`) is sent only when applied, so each keystroke does not query the API.
 */
export interface Filters<F extends Record<string, string>> {
  /** The filters in force: the list's key and the API's query. */
  applied: F;
  /** The props of the form control for `name`: its value and its input handler. */
  field(name: keyof F): { value: string; onInput: (event: Event) => void };
  /** The form's submit handler: applies the draft. */
  submit(event: Event): void;
  clear(): void;
}

export function useFilters<F extends Record<string, string>>(empty: F): Filters<F> {
  const [draft, setDraft] = useState<F>(empty);
  const [applied, setApplied] = useState<F>(empty);
  return {
    applied,
    field: (name) => ({
      value: draft[name] as string,
      onInput: (event: Event) => setDraft({ ...draft, [name]: (event.target as HTMLInputElement).value }),
    }),
    submit(event) {
      event.preventDefault();
      setApplied(draft);
    },
    clear() {
      setDraft(empty);
      setApplied(empty);
    },
  };
}

/** The buttons every filter form ends with: apply, clear, and refresh the list as it is. */
export function FilterButtons({ filters, onRefresh }: { filters: Filters<Record<string, string>>; onRefresh: () => void }): View {
  return html`<button type="submit">Apply filters</button>
    <button type="button" onClick=${filters.clear}>Clear</button>
    <button type="button" onClick=${onRefresh}>Refresh</button>`;
}

/** A `datetime-local` field's value (this computer's time) as ms since epoch, or nothing. */
export function timeOf(value: string): number | undefined {
  return value === '' ? undefined : new Date(value).getTime();
}
