import type { Submission } from '../../api-types';
import { StatusBadge, TableWrap, formatTime } from '../../components/ui';
import type { Selection } from './bulk';

/** The first fields of a submission, on one line. */
export function preview(payload: Record<string, string>): string {
  const text = Object.entries(payload)
    .slice(0, 3)
    .map(([k, v]) => `${k}: ${v}`)
    .join(' · ');
  return text.length > 120 ? `${text.slice(0, 119)}…` : text || '(no fields)';
}

export function InboxTable({ rows, selection }: { rows: Submission[]; selection: Selection }) {
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
            <th scope="col">Received</th>
            <th scope="col">Fields</th>
            <th scope="col" class="num">
              Files
            </th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((s) => (
            <InboxRow key={s.id} submission={s} selection={selection} />
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

function InboxRow({ submission: s, selection }: { submission: Submission; selection: Selection }) {
  return (
    <tr>
      <td>
        <input
          type="checkbox"
          aria-label={`Select submission of ${formatTime(s.received_at)}`}
          checked={selection.selected.has(s.id)}
          onChange={(e) => selection.toggle(s.id, e.currentTarget.checked)}
        />
      </td>
      <td class="nowrap">
        <a href={`/console/submissions/${s.id}`}>{formatTime(s.received_at)}</a>
      </td>
      <td class="preview">{preview(s.payload)}</td>
      <td class="num">{s.files}</td>
      <td>
        <StatusBadge status={s.status} />
      </td>
    </tr>
  );
}
