import { signal } from '@preact/signals';

/** The console's location (path under /console and its query), kept in the URL so views can be linked and reloaded. */
export interface Location {
  path: string;
  query: URLSearchParams;
}

const read = (): Location => ({ path: window.location.pathname, query: new URLSearchParams(window.location.search) });

export const location = signal<Location>(read());

window.addEventListener('popstate', () => {
  location.value = read();
});

export function navigate(href: string, options: { replace?: boolean } = {}): void {
  if (options.replace) window.history.replaceState(null, '', href);
  else window.history.pushState(null, '', href);
  location.value = read();
  if (!options.replace) window.scrollTo(0, 0);
}

/** Matches `/console/forms/:id` style patterns; returns the params or undefined. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const p = pattern.split('/').filter(Boolean);
  const s = path.replace(/\/+$/, '').split('/').filter(Boolean);
  if (p.length !== s.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    const part = p[i] as string;
    const seg = s[i] as string;
    if (part.startsWith(':')) params[part.slice(1)] = decodeURIComponent(seg);
    else if (part !== seg) return undefined;
  }
  return params;
}
