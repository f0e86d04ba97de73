import type { Submission } from '../../api-types';
import { StatusBadge, TableWrap, formatTime } from '../../components/ui';
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
};

export function InboxTable({ rows, selection, fields, order, listQuery }: Props) {
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
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((s) => (
            <InboxRow key={s.id} submission={s} selection={selection} fields={fields} listQuery={listQuery} />
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

function InboxRow(props: { submission: Submission; selection: Selection; fields: string[]; listQuery: string }) {
  const { submission: s, selection, fields } = props;
  return (
    <tr class={s.read ? undefined : 'unread'}>
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
      <td>
        <StatusBadge status={s.status} />
      </td>
    </tr>
  );
}
