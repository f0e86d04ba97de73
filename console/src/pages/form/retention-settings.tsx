import type { Form } from '../../api-types';
import { useSettingsSection } from './settings-section';
import { CheckboxField, ErrorBox, SubmitRow, TextField } from '../../components/ui';

interface Values {
  retention: string;
  spamRetention: string;
  deleteAfterDelivery: boolean;
}

const valuesOf = (form: Form): Values => ({
  retention: form.retention_days === null ? '' : String(form.retention_days),
  spamRetention: form.spam_retention_days === null ? '' : String(form.spam_retention_days),
  deleteAfterDelivery: form.delete_after_delivery,
});

/** Empty: kept until deleted (null); anything else is sent as a number for the API to check (1–3650). */
const days = (text: string) => (text.trim() === '' ? null : Number(text.trim()));

/** How long the form keeps submissions and spam, and whether it keeps what it has delivered; saved on their own. */
export function RetentionSettings({ form, onSaved }: { form: Form; onSaved?(): Promise<void> }) {
  const { values, set, bind, saved, action, submit } = useSettingsSection({
    form,
    valuesOf,
    bodyOf: (v: Values) => ({
      retention_days: days(v.retention),
      spam_retention_days: days(v.spamRetention),
      delete_after_delivery: v.deleteAfterDelivery,
    }),
    onSaved,
  });
  const daysField = (id: string, label: string, name: 'retention' | 'spamRetention', help: string) => (
    <TextField id={id} label={label} help={help} inputMode="numeric" pattern="[0-9]*" {...bind(name)} />
  );
  return (
    <section aria-labelledby="retention-title">
      <h2 id="retention-title">Data retention</h2>
      <form class="stack" onSubmit={(e) => void submit(e)}>
        {daysField(
          'r-days',
          'Delete submissions after (days)',
          'retention',
          'Empty keeps them until you delete them. Files, deliveries and e-mail records go with them.',
        )}
        {daysField(
          'r-spam-days',
          'Delete spam after (days)',
          'spamRetention',
          '30 by default; empty keeps spam until you delete it.',
        )}
        <CheckboxField
          id="r-relay"
          label="Delete after delivery"
          help="Once every webhook has received a submission and its e-mail is sent, its fields and files are deleted; a record of it stays. Failed deliveries keep their data."
          checked={values.deleteAfterDelivery}
          onValue={set('deleteAfterDelivery')}
        />
        <ErrorBox error={action.error} />
        {saved && (
          <p class="ok" role="status">
            Retention saved.
          </p>
        )}
        <SubmitRow pending={action.pending}>Save retention</SubmitRow>
      </form>
    </section>
  );
}
