import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ok } from '../api';
import type { Delivery, SubmissionDetail } from '../api-types';
import {
  Confirm,
  CopyButton,
  ErrorBox,
  Loading,
  StatusBadge,
  formatBytes,
  formatTime,
  useAction,
  useResource,
  type Resource,
} from '../components/ui';
import { AttemptTimeline, DeliverySummary } from '../components/deliveries';
import { AutoresponseLine } from '../components/autoresponse-line';

/** Raster images are previewed (through <img>, so nothing in them runs); everything else is only downloaded. */
const PREVIEWABLE = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

export function SubmissionPage({ id }: { id: string }) {
  const sub = useResource(() => ok(api.GET('/v1/submissions/{id}', { params: { path: { id } } })), [id]);
  const deliveries = useResource(
    () => ok(api.GET('/v1/submissions/{id}/deliveries', { params: { path: { id } } })),
    [id],
  );
  if (sub.error) return <ErrorBox error={sub.error} />;
  if (!sub.data) return <Loading what="the submission" />;
  const s = sub.data;
  return (
    <>
      <p class="crumbs">
        <a href="/console/forms">Forms</a> / <a href={`/console/forms/${s.form_id}/submissions`}>Submissions</a> /
      </p>
      <h1>
        Submission <StatusBadge status={s.status} />
      </h1>
      <p class="muted">
        Received {formatTime(s.received_at)} · <code>{s.id}</code>
        {s.spam_reason ? ` · spam reason: ${s.spam_reason}` : ''}
      </p>
      <SubmissionActions submission={s} onChange={sub.reload} />
      <h2>Fields</h2>
      <Fields payload={s.payload} />
      <h2>Files</h2>
      <Files attachments={s.attachments} />
      <h2>Deliveries</h2>
      <Deliveries submission={s} deliveries={deliveries} />
      <h2>Autoresponse</h2>
      <AutoresponseLine autoresponse={s.autoresponse} />
    </>
  );
}

/** Mark as spam or not, copy as JSON, delete (after asking; then back to the inbox). */
function SubmissionActions({ submission: s, onChange }: { submission: SubmissionDetail; onChange(): Promise<void> }) {
  const { route } = useLocation();
  const action = useAction();
  const [confirm, setConfirm] = useState(false);
  const path = { params: { path: { id: s.id } } };
  const setStatus = async (status: SubmissionDetail['status']) => {
    await action.run(() => ok(api.PATCH('/v1/submissions/{id}', { ...path, body: { status } })));
    await onChange();
  };
  const remove = async () => {
    setConfirm(false);
    const deleted = await action.run(async () => {
      await ok(api.DELETE('/v1/submissions/{id}', path));
      return true;
    });
    if (deleted) route(`/console/forms/${s.form_id}/submissions`);
  };
  const { id, form_id, received_at, status, payload } = s;
  const json = JSON.stringify({ id, form_id, received_at, status, payload }, null, 2);
  return (
    <>
      <div class="toolbar">
        {s.status === 'spam' ? (
          <button type="button" class="secondary" disabled={action.pending} onClick={() => setStatus('received')}>
            Mark as not spam
          </button>
        ) : (
          <button type="button" class="secondary" disabled={action.pending} onClick={() => setStatus('spam')}>
            Mark as spam
          </button>
        )}
        <CopyButton text={json} label="Copy as JSON" />
        <button type="button" class="danger" onClick={() => setConfirm(true)}>
          Delete
        </button>
      </div>
      <Confirm
        open={confirm}
        title="Delete this submission?"
        confirmLabel="Delete submission"
        onConfirm={remove}
        onCancel={() => setConfirm(false)}
      >
        <p>Its files are deleted too. This cannot be undone.</p>
      </Confirm>
      <ErrorBox error={action.error} />
    </>
  );
}

function Fields({ payload }: { payload: SubmissionDetail['payload'] }) {
  if (Object.keys(payload).length === 0) return <p class="muted">No fields.</p>;
  return (
    <dl class="fields">
      {Object.entries(payload).map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

function Files({ attachments }: { attachments: SubmissionDetail['attachments'] }) {
  if (attachments.length === 0) return <p class="muted">No files.</p>;
  return (
    <ul class="files">
      {attachments.map((f) => (
        <li key={f.id}>
          {PREVIEWABLE.has(f.content_type) && <img src={f.url} alt={`Preview of ${f.filename}`} />}
          <div>
            <a href={f.url} download={f.filename}>
              Download {f.filename}
            </a>
            <p class="muted small">
              {f.field} · {f.content_type} · {formatBytes(f.size)}
            </p>
          </div>
        </li>
      ))}
    </ul>
  );
}

/** The submission's deliveries to the form's webhooks, each with its attempts. */
function Deliveries(props: { submission: SubmissionDetail; deliveries: Resource<{ data: Delivery[] }> }) {
  const { submission: s, deliveries } = props;
  return (
    <>
      <ErrorBox error={deliveries.error} />
      {deliveries.data && deliveries.data.data.length === 0 && (
        <p class="muted">Not sent to any webhook{s.status === 'spam' ? ' (spam is not delivered)' : ''}.</p>
      )}
      {deliveries.data?.data.map((d) => (
        <details key={d.id} class="delivery">
          <summary>
            <DeliverySummary delivery={d} />
          </summary>
          <AttemptTimeline delivery={d} />
        </details>
      ))}
    </>
  );
}
