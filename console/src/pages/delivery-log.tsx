import { useState } from 'preact/hooks';
import { may } from '../people';
import { useLocation } from 'preact-iso';
import { api, ok } from '../api';
import type { Delivery, Webhook } from '../api-types';
import type { operations } from '../openapi';
import { qs } from '../location';
import { ErrorBox, Loading, useAction, useResource } from '../components/ui';
import { FormFrame } from '../components/form-nav';
import { AttemptTimeline, DeliverySummary } from '../components/deliveries';
import { useLive, unsettled } from '../live';
import { integrationName, isIntegration } from './integrations/settings';

const FILTERS = ['all', 'failed', 'pending', 'succeeded'] as const;
type Status = NonNullable<operations['listWebhookDeliveries']['parameters']['query']>['status'];

export function DeliveryLogPage({ id, webhookId }: { id: string; webhookId: string }) {
  return (
    <FormFrame formId={id} view="Delivery log">
      {() => <DeliveryLog formId={id} webhookId={webhookId} />}
    </FormFrame>
  );
}

/** The webhook (for its URL) and its deliveries with the status the URL asks for. */
function useDeliveryLog(formId: string, webhookId: string, status: string) {
  const hook = useResource(async () => {
    const hooks = await ok(api.GET('/v1/forms/{id}/webhooks', { params: { path: { id: formId } } }));
    return hooks.data.find((h) => h.id === webhookId);
  }, [formId, webhookId]);
  const log = useResource(() => {
    // Whatever the URL says goes to the API, which explains a status it does not know.
    const query = { status: (status === 'all' ? undefined : status) as Status };
    return ok(api.GET('/v1/webhooks/{id}/deliveries', { params: { path: { id: webhookId }, query } }));
  }, [webhookId, status]);
  return { hook, log };
}

function DeliveryLog({ formId, webhookId }: { formId: string; webhookId: string }) {
  const { query, route, path } = useLocation();
  const status = query['status'] ?? 'all';
  const { hook, log } = useDeliveryLog(formId, webhookId, status);
  // The log follows retries as they run, and shows new deliveries as they come.
  useLive(unsettled(log.data?.data), log.reload, true);
  const action = useAction();
  const [message, setMessage] = useState('');
  // An integration's log is under its form's integrations, a webhook's under its webhooks.
  const base = `/console/forms/${formId}/${path.includes('/integrations/') ? 'integrations' : 'webhooks'}/${webhookId}`;
  const replay = async (id: string) => {
    const queued = await action.run(() => ok(api.POST('/v1/deliveries/{id}/replay', { params: { path: { id } } })));
    if (queued) setMessage('Replay queued; its attempt shows here as soon as it is made.');
    await log.reload();
  };
  const replayFailed = async () => {
    const done = await action.run(() =>
      ok(api.POST('/v1/webhooks/{id}/replay-failed', { params: { path: { id: webhookId } } })),
    );
    if (done)
      setMessage(`Queued ${done.replayed.length} failed deliver${done.replayed.length === 1 ? 'y' : 'ies'} again.`);
    await log.reload();
  };
  const integration = hook.data && isIntegration(hook.data);
  return (
    <>
      <LogHeading formId={formId} hook={hook.data} />
      <div class="toolbar">
        <label for="d-status">Show</label>
        <select
          id="d-status"
          value={status}
          onChange={(e) =>
            route(`${base}${qs({ status: e.currentTarget.value === 'all' ? '' : e.currentTarget.value })}`)
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
        {may('replayFailedDeliveries') && (
          <button type="button" disabled={action.pending} onClick={replayFailed}>
            Replay all failed
          </button>
        )}
      </div>
      <p class="muted small" aria-live="polite">
        {unsettled(log.data?.data) ? 'Deliveries are under way: this log updates on its own.' : ''}
      </p>
      {message && (
        <p class="ok" role="status">
          {message}
        </p>
      )}
      <ErrorBox error={log.error ?? action.error} />
      {log.loading && !log.data && <Loading what="deliveries" />}
      {log.data && log.data.data.length === 0 && (
        <p class="empty">
          No {status === 'all' ? '' : `${status} `}deliveries.
          {may('testWebhook')
            ? integration
              ? ' Check the connection from the integrations list.'
              : ' Send a test ping from the webhook list.'
            : ''}
        </p>
      )}
      {log.data?.data.map((d) => (
        <DeliveryEntry key={d.id} delivery={d} pending={action.pending} onReplay={() => replay(d.id)} />
      ))}
    </>
  );
}

/** The log's way back and heading: an integration's is reached from the integrations, named by tool and destination. */
function LogHeading({ formId, hook }: { formId: string; hook: Webhook | undefined }) {
  const integration = hook && isIntegration(hook);
  return (
    <>
      <p class="crumbs">
        {integration ? (
          <a href={`/console/forms/${formId}/integrations`}>Integrations</a>
        ) : (
          <a href={`/console/forms/${formId}/webhooks`}>Webhooks</a>
        )}{' '}
        /
      </p>
      <h2>
        Delivery log{hook ? ':' : ''}{' '}
        {hook && <span class="wrap">{integration ? integrationName(hook) : hook.url}</span>}
      </h2>
    </>
  );
}

/** One delivery: its summary, a link to its submission, Replay, and its attempts. */
function DeliveryEntry({ delivery: d, pending, onReplay }: { delivery: Delivery; pending: boolean; onReplay(): void }) {
  return (
    <details class="delivery">
      <summary>
        <DeliverySummary delivery={d} />
      </summary>
      <div class="toolbar">
        {d.submission_id && <a href={`/console/submissions/${d.submission_id}`}>Open the submission</a>}
        {may('replayDelivery') && (
          <button type="button" class="secondary" disabled={pending} onClick={onReplay}>
            Replay
          </button>
        )}
        {d.last_error && <span class="muted">Last error: {d.last_error}</span>}
      </div>
      <AttemptTimeline delivery={d} />
    </details>
  );
}
