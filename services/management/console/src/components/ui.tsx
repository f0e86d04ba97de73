import type { ComponentChildren, JSX } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api';
import { navigate } from '../router';

/** An in-console link: plain clicks navigate without reloading; modified clicks open as usual. */
export function Link(props: JSX.HTMLAttributes<HTMLAnchorElement> & { href: string }) {
  const onClick = (e: MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(props.href);
  };
  return <a {...props} onClick={onClick} />;
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

/** A problem document shown as its title and detail (and field errors). */
export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const e = error instanceof ApiError ? error : new ApiError(0, 'Something went wrong', String(error));
  return (
    <div class="error" role="alert">
      <strong>{e.title}</strong>
      {e.detail && <p>{e.detail}</p>}
      {e.errors.length > 0 && (
        <ul>
          {e.errors.map((f) => (
            <li key={f.field}>
              {f.field.replace(/^body\//, '')}: {f.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Loads data for a view: `{ data, error, loading, reload }`. */
export function useResource<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const seq = useRef(0);
  const reload = useCallback(async () => {
    const n = ++seq.current;
    setState((s) => ({ ...s, loading: true, error: undefined }));
    try {
      const data = await load();
      if (n === seq.current) setState({ data, loading: false });
    } catch (error) {
      if (n === seq.current) setState({ error, loading: false });
    }
  }, deps);
  useEffect(() => {
    // New inputs (another page, other filters): never show the previous inputs' data meanwhile.
    setState({ loading: true });
    void reload();
  }, [reload]);
  return { ...state, reload };
}

/** Runs an action, exposing its pending state and error. */
export function useAction() {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = useCallback(async <T,>(action: () => Promise<T>): Promise<T | undefined> => {
    setPending(true);
    setError(undefined);
    try {
      return await action();
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setPending(false);
    }
  }, []);
  return { pending, error, run, setError };
}

/** Copies text; says so, or asks the owner to copy by hand when the clipboard is not available. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <span class="copy">
      <button type="button" class="secondary" onClick={copy}>
        {label}
      </button>
      <span role="status" class="muted small">
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'Select the text and copy it' : ''}
      </span>
    </span>
  );
}

/** A value shown once (a new key or secret), with a copy button. */
export function ShownOnce({ label, value, children }: { label: string; value: string; children?: ComponentChildren }) {
  return (
    <div class="notice" role="status">
      <p>
        <strong>{label}</strong> {children ?? 'It is shown only this once: copy it now.'}
      </p>
      <div class="secret-row">
        <code class="secret" aria-label={label}>
          {value}
        </code>
        <CopyButton text={value} />
      </div>
    </div>
  );
}

/** A modal confirmation (native <dialog>: focus is trapped and Escape cancels). */
export function Confirm(props: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  onConfirm(): void;
  onCancel(): void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={ref} aria-labelledby="confirm-title" onCancel={props.onCancel} onClose={props.onCancel}>
      <h2 id="confirm-title">{props.title}</h2>
      <div>{props.children}</div>
      <div class="actions">
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

/** A scrollable table region that keyboard users can scroll too. */
export function TableWrap({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

export const formatTime = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 / 1024 / 1024).toFixed(1)} GB`;
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status}</span>;
}
