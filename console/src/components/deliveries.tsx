import type { Delivery } from '../api-types';
import { StatusBadge, Table, formatTime } from './ui';

type Attempt = Delivery['attempts'][number];

/** How an attempt is named: scheduled ones by their number, replays and tests counted apart as what they are. */
function attemptLabels(attempts: Attempt[]): string[] {
  let replays = 0;
  let tests = 0;
  return attempts.map((a) => {
    if (a.trigger === 'replay') return `Replay ${++replays}`;
    if (a.trigger === 'test') return `Test ${++tests}`;
    return `#${a.attempt}`;
  });
}

/** One delivery's attempts, oldest first: which, time, trigger, status code, duration, error, response body. */
export function AttemptTimeline({ delivery }: { delivery: Delivery }) {
  if (delivery.attempts.length === 0) return <p class="muted">No attempt yet.</p>;
  const labels = attemptLabels(delivery.attempts);
  return (
    <Table
      label={`Attempts of delivery ${delivery.id}`}
      class="attempts"
      columns={[
        { label: 'Attempt' },
        { label: 'Time' },
        { label: 'Trigger' },
        { label: 'Status', num: true },
        { label: 'Duration', num: true },
        { label: 'Error' },
        { label: 'Response body' },
      ]}
    >
      {delivery.attempts.map((a, i) => (
        <tr key={i} class={a.trigger === 'replay' ? 'replay' : undefined}>
          <td class="nowrap">{labels[i]}</td>
          <td class="nowrap">{formatTime(a.started_at)}</td>
          <td>{a.trigger === 'schedule' ? 'scheduled' : a.trigger}</td>
          <td class="num">{a.status_code ?? '—'}</td>
          <td class="num nowrap">{a.duration_ms} ms</td>
          <td>{a.error ? <bdi>{a.error}</bdi> : '—'}</td>
          <td>
            {a.response_body ? (
              // A long answer scrolls: focusable, so keyboard users can scroll it too.
              <pre class="body" tabIndex={0} aria-label={`Response body of ${labels[i]}`}>
                <bdi>{a.response_body}</bdi>
              </pre>
            ) : (
              '—'
            )}
          </td>
        </tr>
      ))}
    </Table>
  );
}

/** A delivery in one line: its state, its webhook (when the view shows several), when, attempts, last answer. */
export function DeliverySummary({ delivery, webhookUrl }: { delivery: Delivery; webhookUrl?: string }) {
  return (
    <span class="delivery-summary">
      <StatusBadge status={delivery.status} /> <span>{delivery.type}</span>
      {webhookUrl && (
        <>
          {' to '}
          <span class="wrap webhook-url">{webhookUrl}</span>
        </>
      )}{' '}
      <span class="muted">
        {formatTime(delivery.created_at)} · {delivery.attempt_count} attempt{delivery.attempt_count === 1 ? '' : 's'}
        {delivery.last_status_code !== null ? ` · last ${delivery.last_status_code}` : ''}
        {delivery.next_attempt_at ? ` · next ${formatTime(delivery.next_attempt_at)}` : ''}
      </span>
    </span>
  );
}
