import type { Submission } from '../../api-types';
import { StatusBadge, TableWrap, formatTime } from '../../components/ui';
import { spamReasonText } from '../../components/spam-line';
import type { Selection } from './bulk';

/** A value as a cell shows it: one line's worth. */
const cellText = (value: string | undefined) =>
  value === undefined ? '—' : value.length > 120 ? `${value.slice(0, 119)}…` : value;

type Props = {
  rows: Submission[];
  selection: Selection;
  fields: string[];
  order: 'asc' | 'desc';
  /** The list's query, carried to the detail view so it can step to the previous and next submission. */
  listQuery: string;
  /** The spam view: each row says its score and why it was caught. */
  spamView?: boolean;
};

export function InboxTable({ rows, selection, fields, order, listQuery, spamView = false }: Props) {
  const { selected } = selection;
  return (
    <TableWrap label="Submissions">
      <table class="inbox">
        <thead>
          <tr>
            <th scope="col">
              <input
                type="checkbox"
                aria-label="Select all on this page"
                checked={rows.every((r) => selected.has(r.id))}
                onChange={(e) => selection.set(e.currentTarget.checked ? new Set(rows.map((r) => r.id)) : new Set())}
              />
            </th>
            <th scope="col" aria-sort={order === 'desc' ? 'descending' : 'ascending'}>
              Received
            </th>
            {fields.map((f) => (
              <th scope="col" key={f} class="field-col">
                <bdi>{f}</bdi>
              </th>
            ))}
            <th scope="col" class="num">
              Files
            </th>
            {spamView && <th scope="col">Why spam</th>}
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((s) => (
            <InboxRow
              key={s.id}
              submission={s}
              selection={selection}
              fields={fields}
              listQuery={listQuery}
              spamView={spamView}
            />
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

function InboxRow(props: {
  submission: Submission;
  selection: Selection;
  fields: string[];
  listQuery: string;
  spamView: boolean;
}) {
  const { submission: s, selection, fields } = props;
  return (
    <tr class={s.read ? undefined : 'unread'} data-id={s.id}>
      <td>
        <input
          type="checkbox"
          aria-label={`Select submission of ${formatTime(s.received_at)}`}
          checked={selection.selected.has(s.id)}
          onChange={(e) => selection.toggle(s.id, e.currentTarget.checked)}
        />
      </td>
      <td class="received">
        <a href={`/console/submissions/${s.id}${props.listQuery}`}>
          {!s.read && <span class="dot">Unread: </span>}
          {formatTime(s.received_at)}
        </a>
      </td>
      {fields.map((f) => (
        <td key={f} class="value" data-label={f}>
          <bdi>{cellText(s.payload[f])}</bdi>
        </td>
      ))}
      <td class="num">{s.files}</td>
      {props.spamView && <SpamCell submission={s} />}
      <td>
        <StatusBadge status={s.status} />
      </td>
    </tr>
  );
}

/**
 * A caught post's score and reasons, short: "0.97 · blocked domain x; the classifier (0.97)". A reason can carry a
 * stranger's text (an address's domain), so each is isolated.
 */
function SpamCell({ submission: s }: { submission: Submission }) {
  const reasons = s.spam_reasons.length ? s.spam_reasons : s.spam_reason ? [s.spam_reason] : [];
  return (
    <td class="value spam-why" data-label="Why spam">
      {s.spam_score === null ? 'Not scored' : `Score ${s.spam_score.toFixed(2)}`}
      {reasons.map((r, i) => (
        <span key={i}>
          {i === 0 ? ' · ' : '; '}
          <bdi>{spamReasonText(r)}</bdi>
        </span>
      ))}
    </td>
  );
}
