import { useEffect } from 'preact/hooks';

/** Names the document after the view, so tabs, history and screen readers tell views apart. */
export function useTitle(title: string | undefined) {
  useEffect(() => {
    if (title) document.title = `${title} · Intake console`;
  }, [title]);
}
