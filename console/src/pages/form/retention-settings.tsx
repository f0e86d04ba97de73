import type { Form } from '../../api-types';
import { useSettingsSection, type Bind } from './settings-section';
import { CheckboxField, ErrorBox, SubmitRow, TextField, UnsavedNote } from '../../components/ui';
import { inheritNote, withNote, type Inheritable, type Inheritance, type ProjectDefaults } from './inherited';

/** How long submissions and spam are kept, as the fields hold them (what a project may set too). */
export const daysValues = (form: Pick<Form, 'retention_days' | 'spam_retention_days'>) => ({
  retention: form.retention_days === null ? '' : String(form.retention_days),
  spamRetention: form.spam_retention_days === null ? '' : String(form.spam_retention_days),
});
export type DaysValues = ReturnType<typeof daysValues>;

/** Empty: kept until deleted (null); anything else is sent as a number for the API to check (1–3650). */
const days = (text: string) => (text.trim() === '' ? null : Number(text.trim()));
export const daysBody = (v: DaysValues) => ({
  retention_days: days(v.retention),
  spam_retention_days: days(v.spamRetention),
});

type Values = DaysValues & { deleteAfterDelivery: boolean };
const valuesOf = (form: Form): Values => ({ ...daysValues(form), deleteAfterDelivery: form.delete_after_delivery });

/** The two retention fields: a form's, or (on a project's page, `spamHelp` saying what empty is) its forms' defaults. */
export function DaysFields(props: { bind: Bind<DaysValues>; of?: Inheritance; spamHelp?: string }) {
  const { bind, of } = props;
  const field = (
    id: string,
    label: string,
    name: keyof DaysValues,
    help: string,
    [setting, what]: [Inheritable, string],
  ) => (
    <TextField
      id={id}
      label={label}
      help={withNote(help, inheritNote(of, setting, what))}
      inputMode="numeric"
      pattern="[0-9]*"
      {...bind(name)}
    />
  );
  return (
    <>
      {field(
        'r-days',
        'Delete submissions after (days)',
        'retention',
        'Empty keeps them until you delete them. Files, deliveries and e-mail records go with them.',
        ['retention_days', 'days submissions are kept'],
      )}
      {field(
        'r-spam-days',
        'Delete spam after (days)',
        'spamRetention',
        props.spamHelp ?? '30 by default; empty keeps spam until you delete it.',
        ['spam_retention_days', 'days spam is kept'],
      )}
    </>
  );
}

/** How long the form keeps submissions and spam, and whether it keeps what it has delivered; saved on their own. */
export function RetentionSettings(props: { form: Form; project?: ProjectDefaults; onSaved?(): Promise<void> }) {
  const { values, set, bind, saved, dirty, action, submit, inheritance } = useSettingsSection({
    ...props,
    name: 'Data retention',
    settings: { retention_days: ['retention'], spam_retention_days: ['spamRetention'] },
    valuesOf,
    bodyOf: (v: Values) => ({ ...daysBody(v), delete_after_delivery: v.deleteAfterDelivery }),
  });
  return (
    <section aria-labelledby="retention-title">
      <h2 id="retention-title">Data retention</h2>
      <form class="stack" onSubmit={(e) => void submit(e)}>
        <DaysFields bind={bind} of={inheritance} />
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
        <UnsavedNote dirty={dirty} />
        <SubmitRow pending={action.pending}>Save retention</SubmitRow>
      </form>
    </section>
  );
}
