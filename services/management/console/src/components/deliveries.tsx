import type { Delivery } from '../api-types';
import { StatusBadge, Table, formatTime } from './ui';

/** One delivery's attempts, oldest first: time, trigger, status code, duration, error, response body. */
export function AttemptTimeline({ delivery }: { delivery: Delivery }) {
  if (delivery.attempts.length === 0) return <p class="muted">No attempt yet.</p>;
  return (
    <Table
      label={`Attempts of delivery ${delivery.id}`}
      class="attempts"
      columns={[
        { label: '#' },
        { label: 'Time' },
        { label: 'Trigger' },
        { label: 'Status', num: true },
        { label: 'Duration', num: true },
        { label: 'Error' },
        { label: 'Response body' },
      ]}
    >
      {delivery.attempts.map((a, i) => (
        <tr key={i}>
          <td>{a.attempt}</td>
          <td class="nowrap">{formatTime(a.started_at)}</td>
          <td>{a.trigger}</td>
          <td class="num">{a.status_code ?? '—'}</td>
          <td class="num nowrap">{a.duration_ms} ms</td>
          <td>{a.error ?? '—'}</td>
          <td>{a.response_body ? <pre class="body">{a.response_body}</pre> : '—'}</td>
        </tr>
      ))}
    </Table>
  );
}

export function DeliverySummary({ delivery }: { delivery: Delivery }) {
  return (
    <span class="delivery-summary">
      <StatusBadge status={delivery.status} /> <span>{delivery.type}</span>{' '}
      <span class="muted">
        {formatTime(delivery.created_at)} · {delivery.attempt_count} attempt{delivery.attempt_count === 1 ? '' : 's'}
        {delivery.last_status_code !== null ? ` · last ${delivery.last_status_code}` : ''}
        {delivery.next_attempt_at ? ` · next ${formatTime(delivery.next_attempt_at)}` : ''}
      </span>
    </span>
  );
}
