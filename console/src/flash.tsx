import { signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { useLocation } from 'preact-iso';

/**
 * A confirmation that outlives a navigation (a form created, then its page opened; a form deleted, then the list):
 * shown on the view at `on`, and gone once the owner moves elsewhere.
 */
export const flash = signal<{ text: string; on: string; undo?: Undo } | null>(null);

/** Bumped when the confirmation's Undo has restored something: views showing what it restored load again. */
export const restoredFromTrash = signal(0);

/** What the confirmation offers to take back (submissions moved to the trash): its button's name and what it does. */
export interface Undo {
  label: string;
  run(): Promise<unknown>;
}

export function confirmAfterNavigation(text: string, on: string, undo?: Undo) {
  flash.value = { text, on, ...(undo ? { undo } : {}) };
}

export function Flash() {
  const { path } = useLocation();
  const shown = flash.value;
  useEffect(() => {
    if (flash.peek() && flash.peek()?.on !== path) flash.value = null;
  }, [path]);
  if (!shown || shown.on !== path) return null;
  const { undo } = shown;
  return (
    <p class="ok" role="status">
      {shown.text}
      {undo && (
        <>
          {' '}
          <button
            type="button"
            class="link"
            onClick={() =>
              void undo.run().then(
                () => {
                  flash.value = { text: 'Restored from the trash.', on: shown.on };
                  restoredFromTrash.value += 1;
                },
                (err: unknown) => (flash.value = { text: `Could not restore: ${String(err)}`, on: shown.on }),
              )
            }
          >
            {undo.label}
          </button>
        </>
      )}
    </p>
  );
}
