import { useState } from 'preact/hooks';
import { may } from '../../people';
import { Confirm } from '../../components/ui';
import { MarksTeachNote } from '../../components/spam-model';

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
  /** Whose spam filter a mark teaches (`marksTeach`), said beside the mark button and in its question. */
  teaches: string;
  pending: boolean;
  exportLinks: ExportLinkSet;
  onAct(action: BulkAction): void;
};

const plural = (n: number) => `${n.toLocaleString()} submission${n === 1 ? '' : 's'}`;
/** "Select all of about N", as "Select all 59". */
const of = (total: Total) => (total?.estimate ? 'of ' : '');

/** Marks at once beyond which the console asks before they train the spam filter. */
export const TRAIN_ASK_OVER = 20;

/** The actions on the selection (deleting asks first); when a whole page is selected, the offer to take every match. */
export function BulkActions(props: Props) {
  const { selection, total, pending } = props;
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [confirmMark, setConfirmMark] = useState<'spam' | 'received' | null>(null);
  const count = selection.all && total !== undefined ? total.count : selection.selected.size;
  const counted = selection.all && total !== undefined ? submissionCount(total) : plural(count);
  const act = (action: BulkAction) => {
    setConfirmDelete(false);
    setConfirmMark(null);
    props.onAct(action);
  };
  // Each mark teaches the form's client's spam filter: more than TRAIN_ASK_OVER at once is asked about first.
  const mark = (action: 'spam' | 'received') => (count > TRAIN_ASK_OVER ? setConfirmMark(action) : act(action));
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
                <button type="button" class="secondary" disabled={pending} onClick={() => mark('received')}>
                  Mark selected as not spam
                </button>
              ) : (
                <button type="button" class="secondary" disabled={pending} onClick={() => mark('spam')}>
                  Mark selected as spam
                </button>
              )}
              <MarksTeachNote text={props.teaches} />
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
      <BulkConfirms
        counted={counted}
        teaches={props.teaches}
        confirmDelete={confirmDelete}
        confirmMark={confirmMark}
        act={act}
        cancel={() => {
          setConfirmDelete(false);
          setConfirmMark(null);
        }}
      />
    </>
  );
}

/** The questions a bulk action asks first: a delete, and marks beyond TRAIN_ASK_OVER (they teach the spam filter). */
function BulkConfirms(props: {
  counted: string;
  teaches: string;
  confirmDelete: boolean;
  confirmMark: 'spam' | 'received' | null;
  act(action: BulkAction): void;
  cancel(): void;
}) {
  return (
    <>
      <Confirm
        open={props.confirmDelete}
        title={`Delete ${props.counted}?`}
        confirmLabel="Delete"
        onConfirm={() => props.act('delete')}
        onCancel={props.cancel}
      >
        <p>They go to the trash with their files, and can be restored until the trash is emptied.</p>
      </Confirm>
      <Confirm
        open={props.confirmMark !== null}
        title={`Mark ${props.counted} as ${props.confirmMark === 'spam' ? 'spam' : 'not spam'}?`}
        confirmLabel={props.confirmMark === 'spam' ? 'Mark as spam' : 'Mark as not spam'}
        onConfirm={() => props.confirmMark && props.act(props.confirmMark)}
        onCancel={props.cancel}
      >
        <p>
          {props.teaches} Marking many at once (a client’s test posts, say) can teach it more than you mean: mark them
          only if they all are what you say.
        </p>
      </Confirm>
    </>
  );
}
