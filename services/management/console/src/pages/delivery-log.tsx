import { api, qs } from '../api';
import { location, navigate } from '../router';
import type { Delivery, ListOf, Webhook } from '../types';
import { ErrorBox, Link, Loading, useAction, useResource } from '../components/ui';
import { FormFrame } from '../components/form-nav';
import { AttemptTimeline, DeliverySummary } from '../components/deliveries';
import { useState } from 'preact/hooks';

const FILTERS = ['all', 'failed', 'pending', 'succeeded'] as const;

export function DeliveryLogPage({ formId, webhookId }: { formId: string; webhookId: string }) {
  return <FormFrame formId={formId}>{() => <DeliveryLog formId={formId} webhookId={webhookId} />}</FormFrame>;
}

function DeliveryLog({ formId, webhookId }: { formId: string; webhookId: string }) {
  const status = location.value.query.get('status') ?? 'all';
  const hook = useResource(
    async () =>
      (await api<ListOf<Webhook>>('GET', `/v1/forms/${formId}/webhooks`)).data.find((h) => h.id === webhookId),
    [formId, webhookId],
  );
  const log = useResource(
    () =>
      api<ListOf<Delivery>>(
        'GET',
        `/v1/webhooks/${encodeURIComponent(webhookId)}/deliveries${qs({ status: status === 'all' ? undefined : status })}`,
      ),
    [webhookId, status],
  );
  const action = useAction();
  const [message, setMessage] = useState('');
  const base = `/console/forms/${formId}/webhooks/${webhookId}`;
  const replay = async (id: string) => {
    const ok = await action.run(() => api('POST', `/v1/deliveries/${id}/replay`));
    if (ok) setMessage('Replay queued; refresh to see its attempt.');
    await log.reload();
  };
  const replayFailed = async () => {
    const ok = await action.run(() => api<{ replayed: string[] }>('POST', `/v1/webhooks/${webhookId}/replay-failed`));
    if (ok) setMessage(`Queued ${ok.replayed.length} failed deliver${ok.replayed.length === 1 ? 'y' : 'ies'} again.`);
    await log.reload();
  };
  return (
    <>
      <p class="crumbs">
        <Link href={`/console/forms/${formId}/webhooks`}>Webhooks</Link> /
      </p>
      <h2>
        Delivery log{hook.data ? ':' : ''} {hook.data && <span class="wrap">{hook.data.url}</span>}
      </h2>
      <div class="toolbar">
        <label for="d-status">Show</label>
        <select
          id="d-status"
          value={status}
          onChange={(e) =>
            navigate(`${base}${qs({ status: e.currentTarget.value === 'all' ? '' : e.currentTarget.value })}`)
          }
        >
          {FILTERS.map((f) => (
            <option key={f} value={f}>
              {f}
            </option>
          ))}
        </select>
        <button type="button" class="secondary" onClick={() => log.reload()}>
          Refresh
        </button>
        <button type="button" disabled={action.pending} onClick={replayFailed}>
          Replay all failed
        </button>
      </div>
      {message && (
        <p class="ok" role="status">
          {message}
        </p>
      )}
      <ErrorBox error={log.error ?? action.error} />
      {log.loading && !log.data && <Loading what="deliveries" />}
      {log.data && log.data.data.length === 0 && (
        <p class="empty">
          No {status === 'all' ? '' : `${status} `}deliveries. Send a test ping from the webhook list.
        </p>
      )}
      {log.data?.data.map((d) => (
        <details key={d.id} class="delivery">
          <summary>
            <DeliverySummary delivery={d} />
          </summary>
          <div class="toolbar">
            {d.submission_id && <Link href={`/console/submissions/${d.submission_id}`}>Open the submission</Link>}
            <button type="button" class="secondary" disabled={action.pending} onClick={() => replay(d.id)}>
              Replay
            </button>
            {d.last_error && <span class="muted">Last error: {d.last_error}</span>}
          </div>
          <AttemptTimeline delivery={d} />
        </details>
      ))}
    </>
  );
}
