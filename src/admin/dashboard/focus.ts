import type { RefObject } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/**
 * A ref whose element takes the focus when it appears: a form or dialog opened by a button puts
 * keyboard and screen-reader users where the work is (`autofocus` only works once per page load).
 */
export function useFocusOnMount<T extends HTMLElement>(): RefObject<T | null> {
  const ref = useRef<T>(null);
  useEffect(() => ref.current?.focus(), []);
  return ref;
}

/** Escape cancels a dialog, as it does a native modal one. */
export function cancelOnEscape(cancel: () => void): (event: KeyboardEvent) => void {
  return (event) => {
    if (event.key === 'Escape') cancel();
  };
}
