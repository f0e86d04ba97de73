import type { ComponentChildren } from 'preact';
import { api } from '../api';
import { location } from '../router';
import type { Form } from '../types';
import { ErrorBox, Link, Loading, StatusBadge, useResource } from './ui';

/** Loads a form and frames one of its views with its name and the form's own navigation. */
export function FormFrame({ formId, children }: { formId: string; children: (form: Form) => ComponentChildren }) {
  const form = useResource(() => api<Form>('GET', `/v1/forms/${encodeURIComponent(formId)}`), [formId]);
  if (form.error) return <ErrorBox error={form.error} />;
  if (!form.data) return <Loading what="the form" />;
  const base = `/console/forms/${encodeURIComponent(formId)}`;
  const path = location.value.path;
  const tabs = [
    { href: `${base}/submissions`, label: 'Submissions' },
    { href: `${base}/webhooks`, label: 'Webhooks' },
    { href: base, label: 'Settings and snippets' },
  ];
  return (
    <>
      <p class="crumbs">
        <Link href="/console/forms">Forms</Link> /
      </p>
      <h1>
        {form.data.name} <StatusBadge status={form.data.status} />
      </h1>
      <nav aria-label="Form" class="tabs">
        <ul>
          {tabs.map((t) => (
            <li key={t.href}>
              <Link
                href={t.href}
                aria-current={(t.href === base ? path === base : path.startsWith(t.href)) ? 'page' : undefined}
              >
                {t.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      {children(form.data)}
    </>
  );
}
