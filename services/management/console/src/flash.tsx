import { signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { useLocation } from 'preact-iso';

/**
 * A confirmation that outlives a navigation (a form created, then its page opened; a form deleted, then the list):
 * shown on the view at `on`, and gone once the owner moves elsewhere.
 */
export const flash = signal<{ text: string; on: string } | null>(null);

export function confirmAfterNavigation(text: string, on: string) {
  flash.value = { text, on };
}

export function Flash() {
  const { path } = useLocation();
  const shown = flash.value;
  useEffect(() => {
    if (flash.peek() && flash.peek()?.on !== path) flash.value = null;
  }, [path]);
  if (!shown || shown.on !== path) return null;
  return (
    <p class="ok" role="status">
      {shown.text}
    </p>
  );
}
