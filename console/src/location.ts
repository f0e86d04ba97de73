import { useEffect, useRef } from 'preact/hooks';

/** A query string of the defined, non-empty values (for console URLs and download links). */
export function qs(params: Record<string, string | number | undefined | null>): string {
  const entries = Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== '');
  return entries.length ? `?${new URLSearchParams(entries.map(([k, v]) => [k, String(v)])).toString()}` : '';
}

/**
 * Scrolls to the top when the console's URL changes by a new history entry (a link, a filter, the next page), as a
 * page load would; back and forward leave the browser's own scroll restoration alone. The router scrolls on its own
 * only when the path changes, not the query.
 */
export function useScrollToTop(url: string) {
  const shown = useRef(url);
  const popped = useRef<string | null>(null);
  useEffect(() => {
    const onPop = () => (popped.current = window.location.pathname + window.location.search);
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  useEffect(() => {
    if (shown.current === url) return;
    shown.current = url;
    if (popped.current !== url) window.scrollTo(0, 0);
    popped.current = null;
  }, [url]);
}
