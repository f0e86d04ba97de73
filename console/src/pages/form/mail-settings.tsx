import type { Form } from '../../api-types';
import { useSettingsSection } from './settings-section';
import { SaveRow, SelectField, TextField } from '../../components/ui';
import { fieldErrors } from '../../components/field-errors';

function valuesOf(form: Form) {
  return {
    fromName: form.mail_from_name ?? '',
    subject: form.notification_template?.subject ?? '',
    text: form.notification_template?.text ?? '',
    schedule: form.notification_schedule,
  };
}

type Values = ReturnType<typeof valuesOf>;

const SCHEDULES = [
  ['each', 'A mail for each submission'],
  ['daily', 'One digest a day'],
] as const;

/** The settings as the API takes them: an empty name or template is none (Intake's own). */
function bodyOf(v: Values) {
  const subject = v.subject.trim();
  const text = v.text.trim() ? v.text : '';
  return {
    mail_from_name: v.fromName.trim() || null,
    notification_template: subject || text ? { ...(subject ? { subject } : {}), ...(text ? { text } : {}) } : null,
    notification_schedule: v.schedule,
  };
}

/** How the form's mails look and how often its owner gets them, saved on its own. */
export function MailSettings({ form, onSaved }: { form: Form; onSaved?(): Promise<void> }) {
  const { bind, saved, action, submit } = useSettingsSection({ form, valuesOf, bodyOf, onSaved });
  const errors = fieldErrors(action.error);
  return (
    <form class="stack" aria-labelledby="mail-title" onSubmit={(e) => void submit(e)}>
      <h2 id="mail-title">Notification e-mail</h2>
      <p class="muted">
        What the form’s notification addresses receive, and in whose name its mails (autoresponses too) arrive. Write{' '}
        <code>{'{{field name}}'}</code> to insert a field’s value (as plain text), <code>{'{{form}}'}</code> and{' '}
        <code>{'{{project}}'}</code> for the form’s and its project’s names; a post’s <code>_subject</code> still names
        its own mail. Left empty, the subject names the form and its project.
      </p>
      <TextField
        id="m-from-name"
        label="Sender"
        help="The name the mails show as from. Empty: the form’s project, or (in the default project) the name this Intake sends as. The address stays the same."
        maxLength={64}
        error={errors['mail_from_name']}
        {...bind('fromName')}
      />
      <SelectField id="m-schedule" label="How often" options={SCHEDULES} {...bind('schedule')} />
      <TextField
        id="m-subject"
        label="Subject"
        help="Empty: “New submission: <form name>”."
        maxLength={200}
        {...bind('subject')}
      />
      <TextField
        id="m-text"
        label="Text"
        help="Empty: every field, one per line. Files and the link to the submission follow it."
        rows={5}
        error={errors['notification_template']}
        {...bind('text')}
      />
      <SaveRow action={action} saved={saved} atFields={['mail_from_name', 'notification_template']}>
        Save notification e-mail
      </SaveRow>
    </form>
  );
}
