import { useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from './api.js';

export interface Loaded<T> {
  value?: T | undefined;
  error?: string | undefined;
  /** Loads again with the same inputs (a "Refresh" button). */
  reload(): void;
}

/**
 * Runs `load` when `key` changes or `reload` is called, and keeps its latest answer or error. An
 * answer that comes after the inputs changed is dropped, so a slow old request cannot overwrite a
 * newer one. `key` names every input `load` reads (`"24h|model"`).
 */
export function useLoaded<T>(load: () => Promise<T>, key: string): Loaded<T> {
  const [state, setState] = useState<{ value?: T; error?: string }>({});
  const [round, setRound] = useState(0);
  const latest = useRef(load);
  latest.current = load;
  // biome-ignore lint/correctness/useExhaustiveDependencies: key and round say when to load again; `load` is a new closure on every render.
  useEffect(() => {
    let current = true;
    latest.current().then(
      (value) => {
        if (current) setState({ value });
      },
      (error: unknown) => {
        if (current) setState((previous) => ({ ...previous, error: messageOf(error) }));
      },
    );
    return () => {
      current = false;
    };
  }, [key, round]);
  return { ...state, reload: () => setRound((count) => count + 1) };
}

interface Page<T> {
  data: T[];
  next?: string | undefined;
}

export interface Paged<T> {
  rows?: T[] | undefined;
  error?: string | undefined;
  /** Whether there are more rows than shown. */
  hasMore: boolean;
  loadMore(): void;
  reload(): void;
}

/** `useLoaded` for a list in pages: the first page when `key` changes, the following ones appended by `loadMore`. */
export function usePaged<T>(loadPage: (cursor: string | undefined) => Promise<Page<T>>, key: string): Paged<T> {
  const first = useLoaded(() => loadPage(undefined), key);
  const [more, setMore] = useState<{ after: Page<T>; rows: T[]; next?: string | undefined; error?: string }>();
  // Pages loaded after an older first page belong to the old list.
  const extra = more !== undefined && more.after === first.value ? more : undefined;
  const next = extra ? extra.next : first.value?.next;
  return {
    rows: first.value && [...first.value.data, ...(extra?.rows ?? [])],
    error: extra?.error ?? first.error,
    hasMore: next !== undefined,
    reload: first.reload,
    loadMore() {
      const after = first.value;
      if (next === undefined || after === undefined) return;
      const rows = extra?.rows ?? [];
      loadPage(next).then(
        (page) => setMore({ after, rows: [...rows, ...page.data], next: page.next }),
        (error: unknown) => setMore({ after, rows, next, error: messageOf(error) }),
      );
    },
  };
}
