import { useState } from 'preact/hooks';
import { Confirm } from '../../components/ui';

/** Which submissions are selected: ids of the page shown, or every one the filter matches (`all`). */
export function useSelection() {
  const [state, setState] = useState<{ ids: Set<string>; all: boolean }>({ ids: new Set(), all: false });
  const set = (ids: Set<string>) => setState({ ids, all: false });
  const toggle = (id: string, on: boolean) => {
    const next = new Set(state.ids);
    if (on) next.add(id);
    else next.delete(id);
    set(next);
  };
  return {
    selected: state.ids,
    all: state.all,
    set,
    toggle,
    selectAll: () => setState((s) => ({ ...s, all: true })),
    clear: () => setState({ ids: new Set(), all: false }),
  };
}
export type Selection = ReturnType<typeof useSelection>;

export type BulkAction = 'delete' | 'spam' | 'received';

type Props = {
  selection: Selection;
  /** How many the filter matches, when known. */
  total: number | undefined;
  /** How many rows the page shows. */
  pageRows: number;
  spamView: boolean;
  pending: boolean;
  exportLinks: { csv: string; ndjson: string };
  onAct(action: BulkAction): void;
};

const plural = (n: number) => `${n.toLocaleString()} submission${n === 1 ? '' : 's'}`;

/** The actions on the selection (deleting asks first); when a whole page is selected, the offer to take every match. */
export function BulkActions(props: Props) {
  const { selection, total, pending } = props;
  const [confirmDelete, setConfirmDelete] = useState(false);
  const count = selection.all && total !== undefined ? total : selection.selected.size;
  const act = (action: BulkAction) => {
    setConfirmDelete(false);
    props.onAct(action);
  };
  const wholePage = props.pageRows > 0 && selection.selected.size === props.pageRows;
  return (
    <>
      {count > 0 && (
        <div class="toolbar bulk" role="group" aria-label="Selected submissions">
          <span>{selection.all ? `All ${plural(count)} that match selected` : `${count} selected`}</span>
          {wholePage && !selection.all && total !== undefined && total > props.pageRows && (
            <button type="button" class="link" onClick={selection.selectAll}>
              Select all {plural(total)} that match
            </button>
          )}
          {props.spamView ? (
            <button type="button" class="secondary" disabled={pending} onClick={() => act('received')}>
              Mark selected as not spam
            </button>
          ) : (
            <button type="button" class="secondary" disabled={pending} onClick={() => act('spam')}>
              Mark selected as spam
            </button>
          )}
          <button type="button" class="danger" disabled={pending} onClick={() => setConfirmDelete(true)}>
            Delete selected
          </button>
          {selection.all && (
            <>
              <a class="button secondary" href={props.exportLinks.csv} download>
                Export selected as CSV
              </a>
              <a class="button secondary" href={props.exportLinks.ndjson} download>
                Export selected as NDJSON
              </a>
            </>
          )}
          <button type="button" class="link" onClick={selection.clear}>
            Clear selection
          </button>
        </div>
      )}
      <Confirm
        open={confirmDelete}
        title={`Delete ${plural(count)}?`}
        confirmLabel="Delete"
        onConfirm={() => act('delete')}
        onCancel={() => setConfirmDelete(false)}
      >
        <p>Their files are deleted too. This cannot be undone.</p>
      </Confirm>
    </>
  );
}
