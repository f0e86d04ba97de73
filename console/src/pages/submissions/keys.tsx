import { useEffect, useRef } from 'preact/hooks';
import { useModal } from '../../components/ui';

/** The inbox's keyboard shortcuts, as the help lists them. */
export const SHORTCUTS: [string, string][] = [
  ['j', 'next submission'],
  ['k', 'previous submission'],
  ['o or Enter', 'open it'],
  ['x', 'select it (or not)'],
  ['e', 'mark the selected, or this one, as spam (in Spam: as not spam)'],
  ['?', 'show these shortcuts'],
];

/** Whether a key press belongs to a field being typed in (or carries a modifier): shortcuts leave it alone. */
function typing(e: KeyboardEvent): boolean {
  if (e.ctrlKey || e.metaKey || e.altKey) return true;
  const t = e.target as HTMLElement | null;
  return Boolean(t?.closest('input, select, textarea, [contenteditable="true"], dialog'));
}

/**
 * The inbox's shortcuts over its table's rows (each row's first link is where focus goes): j/k move, o opens, x
 * selects, e marks as spam (the selected rows, else the focused one), ? shows the help.
 */
export function useInboxKeys(props: { onSpam(ids: string[]): void; onHelp(): void; selectedIds(): string[] }) {
  const latest = useRef(props);
  latest.current = props;
  useEffect(() => {
    const links = () => [...document.querySelectorAll<HTMLAnchorElement>('table.inbox tbody td.received a')];
    const focused = () => links().findIndex((a) => a === document.activeElement);
    const onKey = (e: KeyboardEvent) => {
      if (typing(e)) return;
      const all = links();
      const at = focused();
      const row = all[at]?.closest('tr');
      if (e.key === 'j' || e.key === 'k') {
        const next = at === -1 ? 0 : Math.min(all.length - 1, Math.max(0, at + (e.key === 'j' ? 1 : -1)));
        all[next]?.focus();
      } else if (e.key === 'o' && at !== -1) all[at]?.click();
      else if (e.key === 'x' && row) row.querySelector<HTMLInputElement>('input[type="checkbox"]')?.click();
      else if (e.key === 'e') {
        const ids = latest.current.selectedIds();
        const one = row?.dataset['id'];
        if (ids.length || one) latest.current.onSpam(ids.length ? ids : [one as string]);
      } else if (e.key === '?') latest.current.onHelp();
      else return;
      e.preventDefault();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
}

/** The shortcuts, in a dialog (Escape or Close shuts it). */
export function ShortcutHelp(props: { open: boolean; onClose(): void }) {
  const ref = useModal(props.open);
  return (
    <dialog ref={ref} aria-labelledby="keys-title" onClose={props.onClose} onCancel={props.onClose}>
      <h2 id="keys-title">Keyboard shortcuts</h2>
      <dl class="settings">
        {SHORTCUTS.map(([key, what]) => (
          <div key={key}>
            <dt>
              <kbd>{key}</kbd>
            </dt>
            <dd>{what}</dd>
          </div>
        ))}
      </dl>
      <div class="actions">
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </div>
    </dialog>
  );
}

/** On a submission's page: j the next one of its list, k the previous, u back to the list. */
export function useSubmissionKeys() {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (typing(e)) return;
      const selector = { j: 'a[rel="next"]', k: 'a[rel="prev"]', u: '.sub-nav a[data-list]' }[e.key];
      const link = selector ? document.querySelector<HTMLAnchorElement>(selector) : null;
      if (!link) return;
      e.preventDefault();
      link.click();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
}
