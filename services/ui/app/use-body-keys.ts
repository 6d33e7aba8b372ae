import { useEffect, useRef } from 'preact/hooks';

/**
 * Keys pressed while nothing has the focus (a page just opened, a click on blank space) go to
 * `handler`: a view's list moves with the arrows without a click on it first.
 */
export function useBodyKeys(handler: (e: KeyboardEvent) => void): void {
  const latest = useRef(handler);
  latest.current = handler;
  useEffect(() => {
    const on = (e: KeyboardEvent) => {
      const el = document.activeElement;
      if (!e.defaultPrevented && (el === null || el === document.body || el === document.documentElement)) latest.current(e);
    };
    window.addEventListener('keydown', on);
    return () => window.removeEventListener('keydown', on);
  }, []);
}
