import { useState } from 'preact/hooks';
import { api } from '../api';
import { navigate } from '../router';
import type { Attachment, Delivery, ListOf, Submission } from '../types';
import {
  Confirm,
  CopyButton,
  ErrorBox,
  Link,
  Loading,
  StatusBadge,
  formatBytes,
  formatTime,
  useAction,
  useResource,
} from '../components/ui';
import { AttemptTimeline, DeliverySummary } from '../components/deliveries';

type Detail = Submission & { attachments: Attachment[] };

/** Raster images are previewed (through <img>, so nothing in them runs); everything else is only downloaded. */
const PREVIEWABLE = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

export function SubmissionPage({ id }: { id: string }) {
  const sub = useResource(() => api<Detail>('GET', `/v1/submissions/${encodeURIComponent(id)}`), [id]);
  const deliveries = useResource(
    () => api<ListOf<Delivery>>('GET', `/v1/submissions/${encodeURIComponent(id)}/deliveries`),
    [id],
  );
  const action = useAction();
  const [confirm, setConfirm] = useState(false);
  if (sub.error) return <ErrorBox error={sub.error} />;
  if (!sub.data) return <Loading what="the submission" />;
  const s = sub.data;
  const inbox = `/console/forms/${s.form_id}/submissions`;
  const setStatus = async (status: Submission['status']) => {
    await action.run(() => api('PATCH', `/v1/submissions/${s.id}`, { status }));
    await sub.reload();
  };
  const remove = async () => {
    setConfirm(false);
    const ok = await action.run(async () => {
      await api('DELETE', `/v1/submissions/${s.id}`);
      return true;
    });
    if (ok) navigate(inbox);
  };
  const json = JSON.stringify(
    { id: s.id, form_id: s.form_id, received_at: s.received_at, status: s.status, payload: s.payload },
    null,
    2,
  );
  return (
    <>
      <p class="crumbs">
        <Link href="/console/forms">Forms</Link> / <Link href={inbox}>Submissions</Link> /
      </p>
      <h1>
        Submission <StatusBadge status={s.status} />
      </h1>
      <p class="muted">
        Received {formatTime(s.received_at)} · <code>{s.id}</code>
        {s.spam_reason ? ` · spam reason: ${s.spam_reason}` : ''}
      </p>
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
      <h2>Fields</h2>
      {Object.keys(s.payload).length === 0 ? (
        <p class="muted">No fields.</p>
      ) : (
        <dl class="fields">
          {Object.entries(s.payload).map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{v}</dd>
            </div>
          ))}
        </dl>
      )}
      <h2>Files</h2>
      {s.attachments.length === 0 ? (
        <p class="muted">No files.</p>
      ) : (
        <ul class="files">
          {s.attachments.map((f) => (
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
      )}
      <h2>Deliveries</h2>
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
