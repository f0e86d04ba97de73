import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ApiError, ok } from '../api';
import type { Delivery, Form, SubmissionDetail } from '../api-types';
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
import { ClientCrumb, formTitle } from '../components/projects';
import { MarksTeachNote, marksTeach } from '../components/spam-model';
import { SpamLine, spamReasonText } from '../components/spam-line';
import { qs } from '../location';
import { useLive, unsettled } from '../live';
import { useTitle } from '../title';
import { may } from '../people';
import { confirmAfterNavigation } from '../flash';
import { NotFound } from './not-found';
import { apiFilters, filtersFromUrl, urlQuery } from './submissions/filters';
import { useSubmissionKeys } from './submissions/keys';

/** Raster images are previewed (through <img>, so nothing in them runs); everything else is only downloaded. */
const PREVIEWABLE = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** The submission, marked read once it is shown (the owner has now seen it). */
function useSubmission(id: string) {
  const sub = useResource(() => ok(api.GET('/v1/submissions/{id}', { params: { path: { id } } })), [id]);
  // Once per opening: after "Mark as unread" it stays unread.
  const marked = useRef('');
  const unread = sub.data?.id === id && !sub.data.read;
  useEffect(() => {
    if (!unread || marked.current === id || !may('updateSubmission')) return;
    marked.current = id;
    void api.PATCH('/v1/submissions/{id}', { params: { path: { id } }, body: { read: true } }).then(() => sub.reload());
  }, [unread, id]);
  return sub;
}

/** The submission's form, for its name and client (undefined until read, or when it cannot be). */
function useFormOf(formId: string | undefined): Form | undefined {
  const form = useResource(
    async () =>
      formId ? ok(api.GET('/v1/forms/{id}', { params: { path: { id: formId } } })).catch(() => undefined) : undefined,
    [formId],
  );
  return form.data;
}

export function SubmissionPage({ id }: { id: string }) {
  const sub = useSubmission(id);
  const form = useFormOf(sub.data?.form_id);
  useSubmissionKeys();
  const deliveries = useResource(
    () => ok(api.GET('/v1/submissions/{id}/deliveries', { params: { path: { id } } })),
    [id],
  );
  useLive(unsettled(deliveries.data?.data), deliveries.reload);
  useTitle(
    sub.data ? `Submission of ${formatTime(sub.data.received_at)}${form ? ` · ${formTitle(form)}` : ''}` : undefined,
  );
  if (sub.error instanceof ApiError && sub.error.status === 404) return <NotFound what="submission" />;
  if (sub.error) return <ErrorBox error={sub.error} />;
  if (!sub.data) return <Loading what="the submission" />;
  const s = sub.data;
  return (
    <>
      <SubmissionNav submission={s} form={form} />
      <h1>
        Submission <StatusBadge status={s.status} />
      </h1>
      <p class="muted">
        Received {formatTime(s.received_at)} · <code>{s.id}</code>
        {s.spam_reason ? ` · spam because ${spamReasonText(s.spam_reason)}` : ''}
      </p>
      {s.purged_at && (
        <p class="notice">
          Its fields and files were removed {formatTime(s.purged_at)}, once every webhook had it: the form deletes
          submissions after delivery. What is left is this record that it was received.
        </p>
      )}
      <SpamLine submission={s} />
      <SubmissionActions submission={s} form={form} onChange={sub.reload} />
      <h2>Fields</h2>
      <Fields payload={s.payload} />
      <h2>Files</h2>
      <Files attachments={s.attachments} />
      <FilesNotKept submission={s} />
      <h2>Deliveries</h2>
      <Deliveries submission={s} deliveries={deliveries} />
      <h2>Autoresponse</h2>
      <AutoresponseLine autoresponse={s.autoresponse} />
    </>
  );
}

/**
 * Where it is (the form's client and the form, when read) and back to the list it was opened from, and the previous and
 * next submission in that list (same filters, order).
 */
function SubmissionNav({ submission: s, form }: { submission: SubmissionDetail; form: Form | undefined }) {
  const { query } = useLocation();
  const filters = filtersFromUrl(query);
  const listQuery = qs(urlQuery({ ...filters, cursor: '', limit: undefined }));
  const neighbours = useResource(
    () =>
      ok(
        api.GET('/v1/submissions/{id}/neighbours', {
          params: { path: { id: s.id }, query: { order: filters.order, ...apiFilters(filters) } },
        }),
      ),
    [s.id, listQuery],
  );
  const list = `/console/forms/${s.form_id}/submissions${listQuery}`;
  const { previous, next } = neighbours.data ?? { previous: null, next: null };
  return (
    <nav class="crumbs sub-nav" aria-label="Submissions">
      <a href="/console/forms">Forms</a> /
      {form && (
        <>
          <ClientCrumb project={form.project} />{' '}
          <a href={`/console/forms/${encodeURIComponent(form.id)}`}>{form.name}</a> /
        </>
      )}{' '}
      <a href={list} data-list>
        {filters.status === 'spam' ? 'Spam' : 'Submissions'}
      </a>
      <span class="steps">
        {previous && (
          <a class="button secondary" href={`/console/submissions/${previous}${listQuery}`} rel="prev">
            Previous submission
          </a>
        )}
        {next && (
          <a class="button secondary" href={`/console/submissions/${next}${listQuery}`} rel="next">
            Next submission
          </a>
        )}
      </span>
    </nav>
  );
}

/** What "Copy as JSON" hands out: the submission with its files (their names, types, sizes and links). */
function asJson(s: SubmissionDetail): string {
  const { id, form_id, received_at, status, payload, attachments } = s;
  const files = attachments.map(({ field, filename, content_type, size, url }) => ({
    field,
    filename,
    content_type,
    size,
    url,
  }));
  return JSON.stringify({ id, form_id, received_at, status, payload, files }, null, 2);
}

/** Mark as spam or not, read or unread, copy as JSON, delete (after asking; then back to the inbox). */
function SubmissionActions(props: { submission: SubmissionDetail; form: Form | undefined; onChange(): Promise<void> }) {
  const { submission: s, form, onChange } = props;
  const { route } = useLocation();
  const action = useAction();
  const [confirm, setConfirm] = useState(false);
  const path = { params: { path: { id: s.id } } };
  const patch = async (body: { status?: SubmissionDetail['status']; read?: boolean }) => {
    await action.run(() => ok(api.PATCH('/v1/submissions/{id}', { ...path, body })));
    await onChange();
  };
  const remove = async () => {
    setConfirm(false);
    const deleted = await action.run(async () => {
      await ok(api.DELETE('/v1/submissions/{id}', path));
      return true;
    });
    if (!deleted) return;
    confirmAfterNavigation('Submission moved to the trash.', `/console/forms/${s.form_id}/submissions`, {
      label: 'Undo',
      run: () => ok(api.POST('/v1/submissions/restore', { body: { ids: [s.id] } })),
    });
    route(`/console/forms/${s.form_id}/submissions`);
  };
  const spam = s.status === 'spam';
  return (
    <>
      <div class="toolbar">
        {may('updateSubmission') && (
          <>
            <button
              type="button"
              class="secondary"
              disabled={action.pending}
              onClick={() => patch({ status: spam ? 'received' : 'spam' })}
            >
              {spam ? 'Mark as not spam' : 'Mark as spam'}
            </button>
            <button type="button" class="secondary" disabled={action.pending} onClick={() => patch({ read: !s.read })}>
              {s.read ? 'Mark as unread' : 'Mark as read'}
            </button>
          </>
        )}
        <CopyButton text={asJson(s)} label="Copy as JSON" />
        {may('deleteSubmission') && (
          <button type="button" class="danger" onClick={() => setConfirm(true)}>
            Delete
          </button>
        )}
      </div>
      {form && may('updateSubmission') && (
        <p>
          <MarksTeachNote text={marksTeach(form)} />
        </p>
      )}
      <Confirm
        open={confirm}
        title="Delete this submission?"
        confirmLabel="Delete submission"
        onConfirm={remove}
        onCancel={() => setConfirm(false)}
      >
        <p>It goes to the trash with its files, and can be restored until the trash is emptied.</p>
      </Confirm>
      <ErrorBox error={action.error} />
    </>
  );
}

/** The fields in posted order; names and values are a stranger's text, each isolated. */
function Fields({ payload }: { payload: SubmissionDetail['payload'] }) {
  if (Object.keys(payload).length === 0) return <p class="muted">No fields.</p>;
  return (
    <dl class="fields">
      {Object.entries(payload).map(([k, v]) => (
        <div key={k}>
          <dt>
            <bdi>{k}</bdi>
          </dt>
          <dd>
            <bdi>{v}</bdi>
          </dd>
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
              Download <bdi>{f.filename}</bdi>
            </a>
            <p class="muted small">
              <bdi>{f.field}</bdi> · <bdi>{f.content_type}</bdi> · {formatBytes(f.size)}
            </p>
          </div>
        </li>
      ))}
    </ul>
  );
}

/** Reasons that keep a post's files: the owner's own mark (stored as received first), an unavailable bot challenge. */
const KEEPS_FILES = ['marked-by-owner', 'challenge-unavailable'];
const NOT_KEPT = 'Files sent with a post marked spam are not kept.';

/**
 * Why a post caught as spam shows no files: spam stores none, and rescuing it does not bring them back. The stored
 * post does not say whether files were sent, so it is said plainly; a received post can only be told apart from a
 * shadow-mode one by the honeypot (which always catches), so otherwise it is said as a condition.
 */
function FilesNotKept({ submission: s }: { submission: SubmissionDetail }) {
  if (s.attachments.length > 0) return null;
  let note: string | null = null;
  if (s.status === 'spam') note = s.spam_reason && !KEEPS_FILES.includes(s.spam_reason) ? NOT_KEPT : null;
  else if (s.spam_reasons.includes('honeypot'))
    note = `This post was caught as spam before it was rescued. ${NOT_KEPT}`;
  else if (s.spam_reasons.some((r) => !KEEPS_FILES.includes(r)))
    note = `If this post was caught as spam before it was rescued, files sent with it are gone. ${NOT_KEPT}`;
  if (!note) return null;
  return (
    <p class="muted" data-testid="files-not-kept">
      {note}
    </p>
  );
}

/** The form's webhooks by id, to name each delivery's endpoint. */
function useWebhookUrls(formId: string) {
  const hooks = useResource(
    () => ok(api.GET('/v1/forms/{id}/webhooks', { params: { path: { id: formId } } })),
    [formId],
  );
  return new Map((hooks.data?.data ?? []).map((h) => [h.id, h.url]));
}

/** The submission's deliveries, one per webhook (named by its URL), each with its attempts; live while retrying. */
function Deliveries(props: { submission: SubmissionDetail; deliveries: Resource<{ data: Delivery[] }> }) {
  const { submission: s, deliveries } = props;
  const urls = useWebhookUrls(s.form_id);
  return (
    <>
      <ErrorBox error={deliveries.error} />
      {deliveries.data && deliveries.data.data.length === 0 && (
        <p class="muted">Not sent to any webhook{s.status === 'spam' ? ' (spam is not delivered)' : ''}.</p>
      )}
      {deliveries.data?.data.map((d) => (
        <details key={d.id} class="delivery">
          <summary>
            <DeliverySummary delivery={d} webhookUrl={urls.get(d.webhook_id) ?? 'a deleted webhook'} />
          </summary>
          <AttemptTimeline delivery={d} />
        </details>
      ))}
    </>
  );
}
