import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { api, ApiError, ok } from '../api';
import type { Form } from '../api-types';
import { useTitle } from '../title';
import { ClientCrumb, formTitle } from './projects';
import { NotFound } from '../pages/not-found';
import { ErrorBox, Loading, StatusBadge, useResource } from './ui';

/** The form's own navigation: its submissions, its webhooks, its integrations, its settings. */
function FormTabs({ base }: { base: string }) {
  const { path } = useLocation();
  const tabs = [
    { href: `${base}/submissions`, label: 'Submissions' },
    { href: `${base}/webhooks`, label: 'Webhooks' },
    { href: `${base}/integrations`, label: 'Integrations' },
    { href: base, label: 'Settings and snippets' },
  ];
  return (
    <nav aria-label="Form" class="tabs">
      <ul>
        {tabs.map((t) => (
          <li key={t.href}>
            <a
              href={t.href}
              aria-current={(t.href === base ? path === base : path.startsWith(t.href)) ? 'page' : undefined}
            >
              {t.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/**
 * Loads a form and frames one of its views (`view` names it in the document title) with the form's name, its client
 * (a breadcrumb, and the title: `Submissions · Contact · Acme Dental`) and its own navigation; the view gets the form
 * and a way to load it again (after its settings change).
 */
export function FormFrame(props: {
  formId: string;
  view: string;
  children: (form: Form, reload: () => Promise<void>) => ComponentChildren;
}) {
  const { formId, children } = props;
  const form = useResource(() => ok(api.GET('/v1/forms/{id}', { params: { path: { id: formId } } })), [formId]);
  useTitle(form.data ? `${props.view} · ${formTitle(form.data)}` : undefined);
  if (form.error instanceof ApiError && form.error.status === 404) return <NotFound what="form" />;
  if (form.error) return <ErrorBox error={form.error} />;
  if (!form.data) return <Loading what="the form" />;
  return (
    <>
      <p class="crumbs">
        <a href="/console/forms">Forms</a> /<ClientCrumb project={form.data.project} />
      </p>
      <h1>
        <span class="wrap">{form.data.name}</span> <StatusBadge status={form.data.status} />
      </h1>
      <FormTabs base={`/console/forms/${encodeURIComponent(formId)}`} />
      {children(form.data, form.reload)}
    </>
  );
}
