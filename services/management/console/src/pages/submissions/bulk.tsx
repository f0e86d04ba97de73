import { useState } from 'preact/hooks';
import { Confirm } from '../../components/ui';

/** Which submissions of the page are selected. */
export function useSelection() {
  const [selected, set] = useState<Set<string>>(new Set());
  const toggle = (id: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(id);
    else next.delete(id);
    set(next);
  };
  return { selected, set, toggle };
}
export type Selection = ReturnType<typeof useSelection>;

type BulkAction = 'delete' | 'spam' | 'received';

/** The actions on the selected submissions; deleting asks first. */
export function BulkActions(props: { count: number; pending: boolean; onAct(action: BulkAction): void }) {
  const { count, pending } = props;
  const [confirmDelete, setConfirmDelete] = useState(false);
  const act = (action: BulkAction) => {
    setConfirmDelete(false);
    props.onAct(action);
  };
  return (
    <>
      {count > 0 && (
        <div class="toolbar bulk" role="group" aria-label="Selected submissions">
          <span>{count} selected</span>
          <button type="button" class="secondary" disabled={pending} onClick={() => act('spam')}>
            Mark selected as spam
          </button>
          <button type="button" class="secondary" disabled={pending} onClick={() => act('received')}>
            Mark selected as not spam
          </button>
          <button type="button" class="danger" disabled={pending} onClick={() => setConfirmDelete(true)}>
            Delete selected
          </button>
        </div>
      )}
      <Confirm
        open={confirmDelete}
        title={`Delete ${count} submission${count === 1 ? '' : 's'}?`}
        confirmLabel="Delete"
        onConfirm={() => act('delete')}
        onCancel={() => setConfirmDelete(false)}
      >
        <p>Their files are deleted too. This cannot be undone.</p>
      </Confirm>
    </>
  );
}
