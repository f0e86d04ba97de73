import { useState } from 'preact/hooks';
import { may } from '../../people';
import { Confirm } from '../../components/ui';

/** Which submissions are selected: ids of the page shown, or every one the filter matches (`all`). */
/** The export links of what the inbox shows, one per format. */
export interface ExportLinkSet {
  xlsx: string;
  csv: string;
  ndjson: string;
}

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

export type BulkAction = 'delete' | 'spam' | 'received' | 'read' | 'unread';

/** How many the filter matches, when asked: `estimate` when it is the planner's figure (over 10,000). */
export type Total = { count: number; estimate: boolean } | undefined;

/** "12 submissions", or for an estimate "about 940,000 submissions" (two significant figures: it is no more exact). */
export function submissionCount(total: { count: number; estimate: boolean }): string {
  if (!total.estimate) return plural(total.count);
  const step = 10 ** Math.max(0, Math.floor(Math.log10(total.count)) - 1);
  return `about ${plural(Math.round(total.count / step) * step)}`;
}

type Props = {
  selection: Selection;
  total: Total;
  /** How many rows the page shows. */
  pageRows: number;
  spamView: boolean;
  pending: boolean;
  exportLinks: ExportLinkSet;
  onAct(action: BulkAction): void;
};

const plural = (n: number) => `${n.toLocaleString()} submission${n === 1 ? '' : 's'}`;
/** "Select all of about N", as "Select all 59". */
const of = (total: Total) => (total?.estimate ? 'of ' : '');

/** The actions on the selection (deleting asks first); when a whole page is selected, the offer to take every match. */
export function BulkActions(props: Props) {
  const { selection, total, pending } = props;
  const [confirmDelete, setConfirmDelete] = useState(false);
  const count = selection.all && total !== undefined ? total.count : selection.selected.size;
  const counted = selection.all && total !== undefined ? submissionCount(total) : plural(count);
  const act = (action: BulkAction) => {
    setConfirmDelete(false);
    props.onAct(action);
  };
  const wholePage = props.pageRows > 0 && selection.selected.size === props.pageRows;
  return (
    <>
      {count > 0 && (
        <div class="toolbar bulk" role="group" aria-label="Selected submissions">
          <span>{selection.all ? `All ${of(total)}${counted} that match selected` : `${count} selected`}</span>
          {wholePage && !selection.all && total !== undefined && total.count > props.pageRows && (
            <button type="button" class="link" onClick={selection.selectAll}>
              Select all {of(total)}
              {submissionCount(total)} that match
            </button>
          )}
          {may('bulkSubmissions') && (
            <>
              {props.spamView ? (
                <button type="button" class="secondary" disabled={pending} onClick={() => act('received')}>
                  Mark selected as not spam
                </button>
              ) : (
                <button type="button" class="secondary" disabled={pending} onClick={() => act('spam')}>
                  Mark selected as spam
                </button>
              )}
              <button type="button" class="secondary" disabled={pending} onClick={() => act('read')}>
                Mark selected as read
              </button>
              <button type="button" class="secondary" disabled={pending} onClick={() => act('unread')}>
                Mark selected as unread
              </button>
              <button type="button" class="danger" disabled={pending} onClick={() => setConfirmDelete(true)}>
                Delete selected
              </button>
            </>
          )}
          {selection.all && (
            <>
              <a class="button secondary" href={props.exportLinks.xlsx} download>
                Export selected as Excel
              </a>
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
        title={`Delete ${counted}?`}
        confirmLabel="Delete"
        onConfirm={() => act('delete')}
        onCancel={() => setConfirmDelete(false)}
      >
        <p>They go to the trash with their files, and can be restored until the trash is emptied.</p>
      </Confirm>
    </>
  );
}
