import type { Form } from '../../api-types';
import { useSettingsSection, type Bind } from './settings-section';
import { SaveRow, SelectField, TextField } from '../../components/ui';
import { fieldErrors } from '../../components/field-errors';
import { InheritLine, inheritNote, withNote, type Inheritance, type ProjectDefaults } from './inherited';
import { zones } from '../../time';

/**
 * The sender's name, the notification's template and the mails' time zone as the fields hold them (what a project may
 * set too; a project that does not set the zone holds it empty).
 */
export function senderValues(
  form: Pick<Form, 'mail_from_name' | 'notification_template'> & { time_zone?: string | undefined },
) {
  return {
    fromName: form.mail_from_name ?? '',
    subject: form.notification_template?.subject ?? '',
    text: form.notification_template?.text ?? '',
    timeZone: form.time_zone ?? '',
  };
}
export type SenderValues = ReturnType<typeof senderValues>;

/** The sender and template as the API takes them: an empty name or template is none (Intake's own). */
export function senderBody(v: SenderValues) {
  const subject = v.subject.trim();
  const text = v.text.trim() ? v.text : '';
  return {
    mail_from_name: v.fromName.trim() || null,
    notification_template: subject || text ? { ...(subject ? { subject } : {}), ...(text ? { text } : {}) } : null,
    ...(v.timeZone ? { time_zone: v.timeZone } : {}),
  };
}

const valuesOf = (form: Form) => ({ ...senderValues(form), schedule: form.notification_schedule });
type Values = ReturnType<typeof valuesOf>;
const bodyOf = (v: Values) => ({ ...senderBody(v), notification_schedule: v.schedule });

const SCHEDULES = [
  ['each', 'A mail for each submission'],
  ['daily', 'One digest a day'],
] as const;

/**
 * The sender's name, the subject, the text and the time zone: a form's, or (on a project's page, with `unset` naming
 * the zone's empty choice) its forms' defaults.
 */
export function SenderFields(props: {
  bind: Bind<SenderValues>;
  errors: Record<string, string>;
  of?: Inheritance;
  unset?: string;
}) {
  const { bind, errors, of, unset } = props;
  const zoneOptions: [string, string][] = [
    ...(unset !== undefined ? [['', unset] as [string, string]] : []),
    ...zones().map((z): [string, string] => [z, z.replace(/_/g, ' ')]),
  ];
  return (
    <>
      <TextField
        id="m-from-name"
        label="Sender"
        help={withNote(
          'The name the mails show as from. Empty: the form’s project, or (in the default project) the name this Intake sends as. The address stays the same.',
          inheritNote(of, 'mail_from_name', 'sender'),
        )}
        maxLength={64}
        error={errors['mail_from_name']}
        {...bind('fromName')}
      />
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
        help="Empty: when it arrived and every field, one per line. Your text is the whole message: files follow it, and the link to the submission for members who can open it."
        rows={5}
        error={errors['notification_template']}
        {...bind('text')}
      />
      <InheritLine of={of} setting="notification_template" what="subject and text" />
      <SelectField
        id="m-time-zone"
        label="Time zone"
        help={withNote(
          'The zone the mails give times in, and {{received_at}}.',
          inheritNote(of, 'time_zone', 'time zone'),
        )}
        options={zoneOptions}
        error={errors['time_zone']}
        {...bind('timeZone')}
      />
    </>
  );
}

/** How the form's mails look and how often its owner gets them, saved on its own. */
export function MailSettings(props: { form: Form; project?: ProjectDefaults; onSaved?(): Promise<void> }) {
  const { bind, saved, dirty, action, submit, inheritance } = useSettingsSection({
    ...props,
    name: 'Notification e-mail',
    settings: { mail_from_name: ['fromName'], notification_template: ['subject', 'text'], time_zone: ['timeZone'] },
    valuesOf,
    bodyOf,
  });
  return (
    <form class="stack" aria-labelledby="mail-title" onSubmit={(e) => void submit(e)}>
      <h2 id="mail-title">Notification e-mail</h2>
      <p class="muted">
        What the form’s notification addresses receive, and in whose name its mails (autoresponses too) arrive. Write{' '}
        <code>{'{{field name}}'}</code> to insert a field’s value (as plain text), <code>{'{{form}}'}</code> and{' '}
        <code>{'{{project}}'}</code> for the form’s and its project’s names, <code>{'{{received_at}}'}</code> for when
        it arrived; a post’s <code>_subject</code> still names its own mail. Left empty, the subject names the form and
        its project. Each address gets a mail of its own.
      </p>
      <SenderFields bind={bind} errors={fieldErrors(action.error)} of={inheritance} />
      <SelectField id="m-schedule" label="How often" options={SCHEDULES} {...bind('schedule')} />
      <SaveRow
        action={action}
        saved={saved}
        dirty={dirty}
        atFields={['mail_from_name', 'notification_template', 'time_zone']}
      >
        Save notification e-mail
      </SaveRow>
    </form>
  );
}
