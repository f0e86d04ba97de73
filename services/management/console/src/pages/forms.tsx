import { api, ok } from '../api';
import type { Form } from '../api-types';
import { ErrorBox, Loading, StatusBadge, Table, useAction, useResource } from '../components/ui';
import { Snippets } from '../components/snippets';
import { useTitle } from '../title';
import { may } from '../people';

type Listed = Form & { month: number };

/** The account's forms, each with this month's received count (left at 0 when usage cannot be read). */
async function loadForms(): Promise<Listed[]> {
  const [list, usage] = await Promise.all([
    ok(api.GET('/v1/forms', { params: { query: { limit: 25 } } })),
    ok(api.GET('/v1/usage')).catch(() => undefined),
  ]);
  const counts = new Map((usage?.forms ?? []).map((f) => [f.form_id, f.received]));
  return list.data.map((f) => ({ ...f, month: counts.get(f.id) ?? 0 }));
}

export function FormsPage() {
  useTitle('Forms');
  const forms = useResource(loadForms, []);
  const toggle = useAction();
  const setStatus = async (form: Form, status: Form['status']) => {
    await toggle.run(() => ok(api.PATCH('/v1/forms/{id}', { params: { path: { id: form.id } }, body: { status } })));
    await forms.reload();
  };
  return (
    <>
      <div class="page-head">
        <h1>Forms</h1>
        <span class="steps">
          {may('createForm') && (
            <a href="/console/forms/new" class="button">
              New form
            </a>
          )}
          <a href="/console/forms/trash" class="button secondary">
            Trash
          </a>
        </span>
      </div>
      <ErrorBox error={forms.error ?? toggle.error} />
      {forms.loading && !forms.data && <Loading what="forms" />}
      {forms.data && forms.data.length === 0 && <NoForms />}
      {forms.data && forms.data.length > 0 && (
        <FormsTable forms={forms.data} pending={toggle.pending} onStatus={setStatus} />
      )}
    </>
  );
}

function NoForms() {
  return (
    <div class="empty">
      <h2>No forms yet</h2>
      <p>
        Create a form, then point your website at its ingest URL. With a form named “Contact” your page would post like
        this:
      </p>
      <Snippets form={{ ingest_url: `${window.location.origin}/v1/f/contact`, honeypot_field: '_gotcha' }} />
    </div>
  );
}

type RowProps = { pending: boolean; onStatus(form: Form, status: Form['status']): void };

function FormsTable({ forms, ...row }: RowProps & { forms: Listed[] }) {
  return (
    <Table
      label="Forms"
      reflow
      columns={[
        { label: 'Name' },
        { label: 'Status' },
        { label: 'This month', num: true },
        { label: 'Ingest URL' },
        { label: 'Actions' },
      ]}
    >
      {forms.map((f) => (
        <FormRow key={f.id} form={f} {...row} />
      ))}
    </Table>
  );
}

function FormRow({ form: f, pending, onStatus }: RowProps & { form: Listed }) {
  return (
    <tr>
      <th scope="row">
        <a href={`/console/forms/${f.id}/submissions`}>{f.name}</a>
      </th>
      <td>
        <StatusBadge status={f.status} />
      </td>
      <td class="num">{f.month}</td>
      <td>
        <code class="wrap">{f.ingest_url}</code>
      </td>
      <td class="row-actions">
        <a href={`/console/forms/${f.id}/webhooks`}>Webhooks</a>
        <a href={`/console/forms/${f.id}`}>Settings</a>
        {!may('updateForm') ? null : f.status === 'live' ? (
          <button type="button" class="link" disabled={pending} onClick={() => onStatus(f, 'paused')}>
            Pause <span class="sr-only">{f.name}</span>
          </button>
        ) : (
          <button type="button" class="link" disabled={pending} onClick={() => onStatus(f, 'live')}>
            Resume <span class="sr-only">{f.name}</span>
          </button>
        )}
      </td>
    </tr>
  );
}
