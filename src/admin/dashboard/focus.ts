import type { RefObject } from 'preact';
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks';

/**
 * A ref whose element takes the focus when it appears: a form or dialog opened by a button puts
 * keyboard and screen-reader users where the work is (`autofocus` only works once per page load).
 */
export function useFocusOnMount<T extends HTMLElement>(): RefObject<T | null> {
  const ref = useRef<T>(null);
  useEffect(() => ref.current?.focus(), []);
  return ref;
}

/** Escape cancels a form while the focus is in it. */
export function cancelOnEscape(cancel: () => void): (event: KeyboardEvent) => void {
  return (event) => {
    if (event.key === 'Escape') cancel();
  };
}

/**
 * Escape cancels an open dialog wherever the focus is, as it does a native modal one: a key pressed
 * before the dialog took the focus (or after a click outside it) still closes it.
 */
export function useEscapeToCancel(cancel: () => void): void {
  const latest = useRef(cancel);
  latest.current = cancel;
  // A layout effect runs in the same task as the render that shows the dialog: a plain effect
  // runs a frame later, and an Escape pressed in between was lost.
  useLayoutEffect(() => {
    const listener = (event: KeyboardEvent) => {
      if (event.key === 'Escape') latest.current();
    };
    document.addEventListener('keydown', listener);
    return () => document.removeEventListener('keydown', listener);
  }, []);
}
