import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { api, ok } from '../api';
import type { Form } from '../api-types';
import { ErrorBox, Loading, StatusBadge, useResource } from './ui';

/** The form's own navigation: its submissions, its webhooks, its settings. */
function FormTabs({ base }: { base: string }) {
  const { path } = useLocation();
  const tabs = [
    { href: `${base}/submissions`, label: 'Submissions' },
    { href: `${base}/webhooks`, label: 'Webhooks' },
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

/** Loads a form and frames one of its views with its name and the form's own navigation. */
export function FormFrame({ formId, children }: { formId: string; children: (form: Form) => ComponentChildren }) {
  const form = useResource(() => ok(api.GET('/v1/forms/{id}', { params: { path: { id: formId } } })), [formId]);
  if (form.error) return <ErrorBox error={form.error} />;
  if (!form.data) return <Loading what="the form" />;
  return (
    <>
      <p class="crumbs">
        <a href="/console/forms">Forms</a> /
      </p>
      <h1>
        {form.data.name} <StatusBadge status={form.data.status} />
      </h1>
      <FormTabs base={`/console/forms/${encodeURIComponent(formId)}`} />
      {children(form.data)}
    </>
  );
}
