import { signal } from '@preact/signals';
import { useEffect, useId } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { Confirm } from './ui';

/** The parts of the page with edits not saved yet, by a key of each, named as the page names them. */
const unsaved = signal<Record<string, string>>({});

/** Says while `dirty` that the part of the page named `name` holds edits not saved yet (until it unmounts). */
export function useUnsaved(name: string, dirty: boolean) {
  const key = useId();
  useEffect(() => {
    const { [key]: _was, ...rest } = unsaved.peek();
    unsaved.value = dirty ? { ...rest, [key]: name } : rest;
    return () => {
      const { [key]: _gone, ...others } = unsaved.peek();
      unsaved.value = others;
    };
  }, [key, name, dirty]);
}

/** The console's own URL a click on a link goes to (as preact-iso routes it), or undefined for any other click. */
function linkTarget(e: MouseEvent): string | undefined {
  if (e.button !== 0 || e.ctrlKey || e.metaKey || e.altKey || e.shiftKey) return undefined;
  const link = e.composedPath().find((el): el is HTMLAnchorElement => el instanceof HTMLAnchorElement && !!el.href);
  const href = link?.getAttribute('href');
  if (!link || !href || link.origin !== location.origin || href.startsWith('#')) return undefined;
  if (!/^(_?self)?$/i.test(link.target) || link.download) return undefined;
  const url = link.href.replace(location.origin, '');
  return url === location.pathname + location.search ? undefined : url;
}

/**
 * Where a navigation held back by the question was going, or what is to be done once the edits may go (signing out,
 * `askBeforeLeaving`); null: nothing asked.
 */
const leavingFor = signal<string | { verb: string; then(): void } | null>(null);

/** Runs `then` (what loses the page, as signing out does) now, or once the person says the unsaved edits may go. */
export function askBeforeLeaving(verb: string, then: () => void) {
  if (Object.keys(unsaved.peek()).length === 0) then();
  else leavingFor.value = { verb, then };
}

/**
 * Holds back the navigations that would lose edits not saved while any part of the page says it holds some: a link
 * within the console and the browser's back and forward (asked by `UnsavedGuard`), and closing or reloading the tab
 * (the browser's own question). Called once before the console renders: a window's listeners run in the order they
 * were added, and these must run before the router's, which would otherwise show the next view at once.
 */
export function guardUnsavedEdits() {
  const pending = () => Object.keys(unsaved.peek()).length > 0;
  const current = () => location.pathname + location.search;
  // Where the edits are: the page when a part of it last said so.
  let here = current();
  unsaved.subscribe(() => (here = current()));
  addEventListener(
    'click',
    (e) => {
      const url = pending() ? linkTarget(e) : undefined;
      if (url === undefined) return;
      e.preventDefault();
      e.stopImmediatePropagation();
      leavingFor.value = url;
    },
    true,
  );
  addEventListener('popstate', (e) => {
    const to = current();
    if (!pending() || to === here) return;
    // Back where the edits are, and asked whether to go.
    e.stopImmediatePropagation();
    history.pushState(null, '', here);
    leavingFor.value = to;
  });
  addEventListener('beforeunload', (e) => {
    if (pending()) e.preventDefault();
  });
}

/** The question before edits not saved are lost, naming the parts of the page that hold them. */
export function UnsavedGuard() {
  const { route } = useLocation();
  const parts = Object.values(unsaved.value);
  const asked = leavingFor.value;
  const verb = typeof asked === 'object' && asked !== null ? asked.verb : 'Leave';
  const leave = () => {
    leavingFor.value = null;
    unsaved.value = {};
    if (typeof asked === 'string') route(asked);
    else asked?.then();
  };
  return (
    <Confirm
      open={asked !== null}
      title={`${verb} without saving?`}
      confirmLabel={`${verb} without saving`}
      onConfirm={leave}
      onCancel={() => (leavingFor.value = null)}
    >
      <p>
        {parts.length > 0 ? `Not saved: ${[...new Set(parts)].join(', ')}.` : 'Some changes are not saved.'} Stay to
        save them with their section’s button.
      </p>
    </Confirm>
  );
}
