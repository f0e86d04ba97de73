import type { Form } from '../../api-types';
import { useSettingsSection } from './settings-section';
import { ErrorBox, Field, SubmitRow, TextField } from '../../components/ui';

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
  const { values, set, saved, action, submit } = useSettingsSection({
    form,
    valuesOf,
    bodyOf: (v: Values) => ({
      retention_days: days(v.retention),
      spam_retention_days: days(v.spamRetention),
      delete_after_delivery: v.deleteAfterDelivery,
    }),
    onSaved,
  });
  return (
    <section aria-labelledby="retention-title">
      <h2 id="retention-title">Data retention</h2>
      <form class="stack" onSubmit={(e) => void submit(e)}>
        <TextField
          id="r-days"
          label="Delete submissions after (days)"
          help="Empty keeps them until you delete them. Files, deliveries and e-mail records go with them."
          inputMode="numeric"
          pattern="[0-9]*"
          value={values.retention}
          onValue={set('retention')}
        />
        <TextField
          id="r-spam-days"
          label="Delete spam after (days)"
          help="30 by default; empty keeps spam until you delete it."
          inputMode="numeric"
          pattern="[0-9]*"
          value={values.spamRetention}
          onValue={set('spamRetention')}
        />
        <Field
          id="r-relay"
          label="Delete after delivery"
          help="Once every webhook has received a submission and its e-mail is sent, its fields and files are deleted; a record of it stays. Failed deliveries keep their data."
        >
          <input
            id="r-relay"
            type="checkbox"
            checked={values.deleteAfterDelivery}
            onChange={(e) => set('deleteAfterDelivery')(e.currentTarget.checked)}
          />
        </Field>
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
