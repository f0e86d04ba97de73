import { api } from '../api';
import type { Form, ListOf, Usage } from '../types';
import { ErrorBox, Link, Loading, StatusBadge, TableWrap, useAction, useResource } from '../components/ui';
import { Snippets } from '../components/snippets';

export function FormsPage() {
  const forms = useResource(async () => {
    const [list, usage] = await Promise.all([
      api<ListOf<Form>>('GET', '/v1/forms'),
      api<Usage>('GET', '/v1/usage').catch(() => undefined),
    ]);
    const counts = new Map((usage?.forms ?? []).map((f) => [f.form_id, f.received]));
    return list.data.map((f) => ({ ...f, month: counts.get(f.id) ?? 0 }));
  }, []);
  const toggle = useAction();
  const setStatus = async (form: Form, status: Form['status']) => {
    await toggle.run(() => api('PATCH', `/v1/forms/${form.id}`, { status }));
    await forms.reload();
  };
  return (
    <>
      <div class="page-head">
        <h1>Forms</h1>
        <Link href="/console/forms/new" class="button">
          New form
        </Link>
      </div>
      <ErrorBox error={forms.error ?? toggle.error} />
      {forms.loading && !forms.data && <Loading what="forms" />}
      {forms.data && forms.data.length === 0 && (
        <div class="empty">
          <h2>No forms yet</h2>
          <p>
            Create a form, then point your website at its ingest URL. With a form named “Contact” your page would post
            like this:
          </p>
          <Snippets form={{ ingest_url: `${window.location.origin}/v1/f/contact`, honeypot_field: '_gotcha' }} />
        </div>
      )}
      {forms.data && forms.data.length > 0 && (
        <TableWrap label="Forms">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  This month
                </th>
                <th scope="col">Ingest URL</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {forms.data.map((f) => (
                <tr key={f.id}>
                  <th scope="row">
                    <Link href={`/console/forms/${f.id}/submissions`}>{f.name}</Link>
                  </th>
                  <td>
                    <StatusBadge status={f.status} />
                  </td>
                  <td class="num">{f.month}</td>
                  <td>
                    <code class="wrap">{f.ingest_url}</code>
                  </td>
                  <td class="row-actions">
                    <Link href={`/console/forms/${f.id}/webhooks`}>Webhooks</Link>
                    <Link href={`/console/forms/${f.id}`}>Settings</Link>
                    {f.status === 'live' ? (
                      <button
                        type="button"
                        class="link"
                        disabled={toggle.pending}
                        onClick={() => setStatus(f, 'paused')}
                      >
                        Pause <span class="sr-only">{f.name}</span>
                      </button>
                    ) : (
                      <button type="button" class="link" disabled={toggle.pending} onClick={() => setStatus(f, 'live')}>
                        Resume <span class="sr-only">{f.name}</span>
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </>
  );
}
