import type { Form } from '../../api-types';
import { useSettingsSection } from './settings-section';
import { Check, SaveRow, TextField } from '../../components/ui';

function valuesOf(form: Form) {
  const a = form.autoresponse;
  return {
    enabled: a?.enabled ?? false,
    subject: a?.subject ?? 'Thanks for your message',
    text: a?.text ?? 'Hello {{name}},\n\nthank you for writing to us. We will get back to you soon.\n',
    replyTo: a?.reply_to ?? '',
    emailField: a?.email_field ?? '',
  };
}

type Values = ReturnType<typeof valuesOf>;

/** The settings as the API takes them; switched off without a text, the setting is removed. */
function bodyOf(v: Values): Form['autoresponse'] {
  if (!v.enabled && !v.text.trim()) return null;
  return {
    enabled: v.enabled,
    subject: v.subject.trim(),
    text: v.text,
    ...(v.replyTo.trim() ? { reply_to: v.replyTo.trim() } : {}),
    ...(v.emailField.trim() ? { email_field: v.emailField.trim() } : {}),
  };
}

/** The confirmation mailed to whoever fills the form in, saved on its own. */
export function AutoresponseSettings({ form, onSaved }: { form: Form; onSaved?(): Promise<void> }) {
  const { values, set, bind, saved, dirty, action, submit } = useSettingsSection({
    name: 'Autoresponse',
    form,
    valuesOf,
    bodyOf: (v: Values) => ({ autoresponse: bodyOf(v) }),
    onSaved,
  });
  return (
    <form class="stack" aria-labelledby="autoresponse-title" onSubmit={(e) => void submit(e)}>
      <h2 id="autoresponse-title">Autoresponse</h2>
      <p class="muted">
        A confirmation mailed to whoever filled the form in, for received submissions only, at most one per address in
        10 minutes. Write <code>{'{{field name}}'}</code> to insert a field’s value (as plain text),{' '}
        <code>{'{{form}}'}</code> and <code>{'{{project}}'}</code> for the form’s and its project’s names.
      </p>
      <Check checked={values.enabled} onValue={set('enabled')}>
        Send an autoresponse
      </Check>
      <TextField id="a-subject" label="Subject" maxLength={200} {...bind('subject')} />
      <TextField id="a-text" label="Text" rows={6} {...bind('text')} />
      <TextField
        id="a-reply-to"
        label="Reply-To address"
        help="Optional: where replies to the confirmation go."
        type="email"
        {...bind('replyTo')}
      />
      <TextField
        id="a-email-field"
        label="Field with the recipient’s address"
        help="Empty: the first field named email, e-mail, email_address or _replyto."
        {...bind('emailField')}
      />
      <SaveRow action={action} saved={saved} dirty={dirty}>
        Save autoresponse
      </SaveRow>
    </form>
  );
}
