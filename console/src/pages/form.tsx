import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ok } from '../api';
import type { Form } from '../api-types';
import { Confirm, ErrorBox, TextField, useAction, useModal, useResource } from '../components/ui';
import { fieldErrors } from '../components/field-errors';
import { confirmAfterNavigation } from '../flash';
import { useTitle } from '../title';
import { may } from '../people';
import { FormFrame } from '../components/form-nav';
import { formTitle, ProjectSelect, useProjects } from '../components/projects';
import { Snippets } from '../components/snippets';
import { FormEditor } from './form/editor';
import { AutoresponseSettings } from './form/autoresponse-settings';
import { MailSettings } from './form/mail-settings';
import { VisitorPagesSettings } from './form/visitor-pages';
import { SpamSettings } from './form/spam-settings';
import { RetentionSettings } from './form/retention-settings';
import type { Inheritable } from './form/inherited';
import { limitWords, RateLimitSettings, refusedWords, useRateLimit } from './form/rate-limit-settings';
import { useProjectDefaults } from './form/inherited';

/** `/console/forms/new` creates; `/console/forms/:id` edits every setting, shows the snippets, deletes. */
export function FormPage({ id }: { id?: string }) {
  if (!id) return <NewForm />;
  return (
    <FormFrame formId={id} view="Settings">
      {(form, reload) => <Settings form={form} reload={reload} />}
    </FormFrame>
  );
}

/**
 * The form's settings, each section saved on its own: what the form takes from its project says so, and the page asks
 * before edits not saved are lost.
 */
function Settings({ form, reload }: { form: Form; reload(): Promise<void> }) {
  const project = useProjectDefaults(form);
  const section = { form, project, onSaved: reload };
  return (
    <>
      <Snippets form={form} />
      <h2>Settings</h2>
      {may('updateForm') ? (
        <>
          {project && Object.keys(project.defaults).length > 0 && (
            <p class="muted">
              Settings marked “From {project.name}” follow the form defaults of its project; changing one here sets this
              form’s own.
            </p>
          )}
          <FormEditor {...section} />
          <MailSettings {...section} />
          <VisitorPagesSettings {...section} />
          <AutoresponseSettings {...section} />
          <SpamSettings {...section} />
          <RetentionSettings {...section} />
          <RateLimitSettings form={form} onSaved={reload} />
        </>
      ) : (
        <ReadOnlySettings form={form} project={project?.name} />
      )}
      {may('duplicateForm') && <DuplicateForm form={form} />}
      {may('deleteForm') && <DeleteForm form={form} />}
    </>
  );
}

/**
 * Makes a copy of the form with its settings (not its webhooks or submissions), in its project or another: a button
 * that asks for the copy's name and project in a dialog.
 */
function DuplicateForm({ form }: { form: Form }) {
  const [open, setOpen] = useState(false);
  const ref = useModal(open);
  return (
    <section aria-labelledby="duplicate-title">
      <h2 id="duplicate-title">Duplicate this form</h2>
      <p class="muted">
        A new form with every setting of this one and a slug of its own. Its webhooks, integrations, saved views and
        submissions are not copied, so the copy never sends to this form’s endpoints.
      </p>
      <button type="button" class="secondary" onClick={() => setOpen(true)}>
        Duplicate form…
      </button>
      <dialog ref={ref} aria-labelledby="duplicate-dialog-title" onClose={() => setOpen(false)}>
        <h2 id="duplicate-dialog-title">Duplicate “{formTitle(form)}”</h2>
        {open && <DuplicateFields form={form} onCancel={() => setOpen(false)} />}
      </dialog>
    </section>
  );
}

/** The copy's name and project, and the button that makes it (then opens it, saying so). */
function DuplicateFields({ form, onCancel }: { form: Form; onCancel(): void }) {
  const { route } = useLocation();
  const projects = useProjects();
  const [name, setName] = useState(`${form.name} (copy)`);
  const [project, setProject] = useState(form.project_id);
  const action = useAction();
  const duplicate = async (e: Event) => {
    e.preventDefault();
    const body = { name: name.trim(), project_id: project };
    const copy = await action.run(() =>
      ok(api.POST('/v1/forms/{id}/duplicate', { params: { path: { id: form.id } }, body })),
    );
    if (!copy) return;
    const said = `Form “${formTitle(copy)}” created as a copy of “${formTitle(form)}”.`;
    confirmAfterNavigation(said, `/console/forms/${copy.id}`);
    route(`/console/forms/${copy.id}`);
  };
  const errors = fieldErrors(action.error);
  return (
    <form class="stack" onSubmit={(e) => void duplicate(e)}>
      <TextField
        id="d-name"
        label="Name"
        required
        maxLength={200}
        value={name}
        onValue={setName}
        error={errors['name']}
      />
      <ProjectSelect
        id="d-project"
        help="In another project, the copy takes that project’s form defaults for what this form does not set itself."
        projects={projects.data}
        value={project}
        onValue={setProject}
        error={errors['project_id']}
      />
      <ErrorBox error={action.error} atFields={['name', 'project_id']} />
      <div class="actions">
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" disabled={action.pending}>
          Duplicate
        </button>
      </div>
    </form>
  );
}

const days = (n: number | null) => (n === null ? 'kept until deleted' : `${n} days`);

/**
 * What a role that may not change the form reads instead of its editors; a setting the form takes from its project
 * is marked "From <project>", as the editors mark it.
 */
function ReadOnlySettings({ form, project }: { form: Form; project: string | undefined }) {
  const limit = useRateLimit(form.id).data;
  const rows: [string, string, Inheritable?][] = [
    ['Name', form.name],
    ['Status', form.status],
    ['Notification e-mails', form.notify_emails.join(', ') || 'none', 'notify_emails'],
    ['Notifications', form.notification_schedule === 'daily' ? 'one digest a day' : 'a mail for each submission'],
    ['Sender name', form.mail_from_name ?? 'this Intake’s', 'mail_from_name'],
    ['Thank-you page', form.pages?.thank_you?.title ?? 'Intake’s own, in the visitor’s language', 'pages'],
    ['Redirect after a post', form.redirect_url ?? 'the built-in thank-you page'],
    ['Allowed origins', form.allowed_origins.join(', ') || 'any', 'allowed_origins'],
    ['Honeypot field', form.honeypot_field],
    ['Bot challenge', form.bot_challenge ? form.bot_challenge.provider : 'none'],
    ['Spam filter', form.spam_filter],
    ['Spam rules', spamRulesWords(form.spam_rules), 'spam_rules'],
    ['Autoresponse', form.autoresponse ? 'on' : 'off'],
    ['Submissions kept', days(form.retention_days), 'retention_days'],
    ['Spam kept', days(form.spam_retention_days), 'spam_retention_days'],
    ['Payload deleted once delivered', form.delete_after_delivery ? 'yes' : 'no'],
    ...(limit
      ? ([
          ['Rate limit', limitWords(limit)],
          ['Refused posts', refusedWords(limit.refused)],
        ] as [string, string][])
      : []),
  ];
  const from = project ?? form.project?.name ?? 'its project';
  return (
    <>
      <p class="muted">Your role may read this form’s settings; changing them needs the editor role.</p>
      <dl class="settings">
        {rows.map(([term, value, setting]) => (
          <div key={term}>
            <dt>{term}</dt>
            <dd>
              {value}
              {setting && (form.inherited as string[]).includes(setting) && (
                <span class="muted small"> · From {from}</span>
              )}
            </dd>
          </div>
        ))}
      </dl>
    </>
  );
}

/** The spam rules that are on, in words. */
function spamRulesWords(rules: Form['spam_rules']): string {
  const on = Object.entries(rules)
    .filter(([, value]) => value === true || (Array.isArray(value) && value.length > 0) || typeof value === 'number')
    .map(([name]) => name.replace(/_/g, ' '));
  return on.length ? on.join(', ') : 'none';
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
