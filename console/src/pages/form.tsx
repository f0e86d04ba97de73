import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ok } from '../api';
import type { Form } from '../api-types';
import { Confirm, ErrorBox, useAction, useResource } from '../components/ui';
import { confirmAfterNavigation } from '../flash';
import { useTitle } from '../title';
import { may } from '../people';
import { FormFrame } from '../components/form-nav';
import { formTitle } from '../components/projects';
import { Snippets } from '../components/snippets';
import { FormEditor } from './form/editor';
import { AutoresponseSettings } from './form/autoresponse-settings';
import { MailSettings } from './form/mail-settings';
import { VisitorPagesSettings } from './form/visitor-pages';
import { SpamSettings } from './form/spam-settings';
import { RetentionSettings } from './form/retention-settings';

/** `/console/forms/new` creates; `/console/forms/:id` edits every setting, shows the snippets, deletes. */
export function FormPage({ id }: { id?: string }) {
  if (!id) return <NewForm />;
  return (
    <FormFrame formId={id} view="Settings">
      {(form, reload) => (
        <>
          <Snippets form={form} />
          <h2>Settings</h2>
          {may('updateForm') ? (
            <>
              <FormEditor form={form} onSaved={reload} />
              <MailSettings form={form} onSaved={reload} />
              <VisitorPagesSettings form={form} onSaved={reload} />
              <AutoresponseSettings form={form} onSaved={reload} />
              <SpamSettings form={form} onSaved={reload} />
              <RetentionSettings form={form} onSaved={reload} />
            </>
          ) : (
            <ReadOnlySettings form={form} />
          )}
          {may('deleteForm') && <DeleteForm form={form} />}
        </>
      )}
    </FormFrame>
  );
}

const days = (n: number | null) => (n === null ? 'kept until deleted' : `${n} days`);

/** What a role that may not change the form reads instead of its editors. */
function ReadOnlySettings({ form }: { form: Form }) {
  const rows: [string, string][] = [
    ['Name', form.name],
    ['Status', form.status],
    ['Notification e-mails', form.notify_emails.join(', ') || 'none'],
    ['Notifications', form.notification_schedule === 'daily' ? 'one digest a day' : 'a mail for each submission'],
    ['Sender name', form.mail_from_name ?? 'this Intake’s'],
    ['Thank-you page', form.pages?.thank_you?.title ?? 'Intake’s own, in the visitor’s language'],
    ['Redirect after a post', form.redirect_url ?? 'the built-in thank-you page'],
    ['Allowed origins', form.allowed_origins.join(', ') || 'any'],
    ['Honeypot field', form.honeypot_field],
    ['Bot challenge', form.bot_challenge ? form.bot_challenge.provider : 'none'],
    ['Spam filter', form.spam_filter],
    ['Autoresponse', form.autoresponse ? 'on' : 'off'],
    ['Submissions kept', days(form.retention_days)],
    ['Spam kept', days(form.spam_retention_days)],
    ['Payload deleted once delivered', form.delete_after_delivery ? 'yes' : 'no'],
  ];
  return (
    <>
      <p class="muted">Your role may read this form’s settings; changing them needs the editor role.</p>
      <dl class="settings">
        {rows.map(([term, value]) => (
          <div key={term}>
            <dt>{term}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
    </>
  );
}

function NewForm() {
  useTitle('New form');
  return (
    <>
      <p class="crumbs">
        <a href="/console/forms">Forms</a> /
      </p>
      <h1>New form</h1>
      <FormEditor />
    </>
  );
}

/** How many submissions the form holds, as the inbox counts them ("about N" beyond 10,000). */
function useSubmissionCount(formId: string) {
  const counted = useResource(
    () =>
      ok(api.GET('/v1/forms/{id}/submissions', { params: { path: { id: formId }, query: { limit: 1, total: true } } })),
    [formId],
  );
  const total = counted.data?.total;
  if (total === undefined) return undefined;
  const n = total.toLocaleString('en');
  return counted.data?.total_is_estimate ? `about ${n}` : n;
}

function DeleteForm({ form }: { form: Form }) {
  const { route } = useLocation();
  const [open, setOpen] = useState(false);
  const { error, run } = useAction();
  const count = useSubmissionCount(form.id);
  const withSubmissions =
    count === undefined ? 'its submissions' : count === '1' ? 'its 1 submission' : `its ${count} submissions`;
  const remove = async () => {
    setOpen(false);
    const deleted = await run(async () => {
      await ok(api.DELETE('/v1/forms/{id}', { params: { path: { id: form.id } } }));
      return true;
    });
    if (!deleted) return;
    confirmAfterNavigation(
      `Form “${formTitle(form)}” moved to the trash with ${withSubmissions}. It can be restored from Forms → Trash.`,
      '/console/forms',
    );
    route('/console/forms');
  };
  return (
    <section class="danger-zone" aria-labelledby="delete-title">
      <h2 id="delete-title">Delete this form</h2>
      <p>
        Moves the form to the trash with {withSubmissions}, their files and its webhooks: it stops accepting posts at
        once. It can be restored from the trash until it is deleted for good (the trash says when).
      </p>
      <ErrorBox error={error} />
      <button type="button" class="danger" onClick={() => setOpen(true)}>
        Delete form
      </button>
      <Confirm
        open={open}
        title={`Delete “${formTitle(form)}” and ${withSubmissions}?`}
        confirmLabel="Move to the trash"
        onConfirm={remove}
        onCancel={() => setOpen(false)}
      >
        <p>
          “{formTitle(form)}” stops accepting posts now. It stays in the trash with {withSubmissions}, and can be
          restored from Forms → Trash until it is deleted for good.
        </p>
      </Confirm>
    </section>
  );
}
