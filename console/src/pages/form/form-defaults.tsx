import { api, ok } from '../../api';
import type { Project } from '../../api-types';
import { CheckboxField, ErrorBox, SelectField, SubmitRow, UnsavedNote, useAction } from '../../components/ui';
import { fieldErrors } from '../../components/field-errors';
import { useUnsaved } from '../../components/unsaved';
import { differ, useValues } from './settings-section';
import { lines } from './editor';
import { AllowedOriginsField, NotifyEmailsField } from './fields';
import { senderBody, SenderFields, senderValues } from './mail-settings';
import { PagesFields, pagesBody, pagesValues } from './visitor-pages';
import { MODES, rulesOf, SpamRuleFields, rulesValues } from './spam-settings';
import { daysBody, DaysFields, daysValues } from './retention-settings';
import type { FormDefaults } from './inherited';

/**
 * A form with none of the inheritable settings set: what an empty field of the project's defaults reads as (the time
 * zone, a choice, is empty when not set).
 */
const NONE = {
  notify_emails: [],
  allowed_origins: [],
  mail_from_name: null,
  notification_template: null,
  pages: null,
  spam_rules: {},
  retention_days: null,
  spam_retention_days: null,
} satisfies Required<Omit<FormDefaults, 'spam_filter' | 'time_zone'>>;

/** The project's defaults as the fields hold them, each read as a form's own fields read it. */
function valuesOf(defaults: FormDefaults) {
  const d = { ...NONE, ...defaults };
  return {
    emails: d.notify_emails.join('\n'),
    origins: d.allowed_origins.join('\n'),
    ...senderValues(d),
    ...pagesValues(d),
    mode: (defaults.spam_filter ?? '') as NonNullable<FormDefaults['spam_filter']> | '',
    ...rulesValues(d),
    ...daysValues(d),
    // Set to null ("keep until deleted") is a value of its own here, not an empty field (which sets nothing).
    keepForever: defaults.retention_days === null,
    keepSpamForever: defaults.spam_retention_days === null,
  };
}
type Values = ReturnType<typeof valuesOf>;

/** The defaults as the API takes them (the whole object): each setting whose fields are empty is not set. */
function bodyOf(v: Values): FormDefaults {
  const emails = lines(v.emails);
  const origins = lines(v.origins);
  const sender = senderBody(v);
  const { pages } = pagesBody(v);
  const rules = rulesOf(v);
  const days = daysBody(v);
  return {
    ...(emails.length ? { notify_emails: emails } : {}),
    ...(origins.length ? { allowed_origins: origins } : {}),
    ...(sender.mail_from_name !== null ? { mail_from_name: sender.mail_from_name } : {}),
    ...(sender.notification_template !== null ? { notification_template: sender.notification_template } : {}),
    ...(sender.time_zone ? { time_zone: sender.time_zone } : {}),
    ...(pages !== null ? { pages } : {}),
    ...(v.mode ? { spam_filter: v.mode } : {}),
    ...(Object.keys(rules).length ? { spam_rules: rules } : {}),
    ...(v.keepForever
      ? { retention_days: null }
      : days.retention_days !== null
        ? { retention_days: days.retention_days }
        : {}),
    ...(v.keepSpamForever
      ? { spam_retention_days: null }
      : days.spam_retention_days !== null
        ? { spam_retention_days: days.spam_retention_days }
        : {}),
  };
}

const MODE_OPTIONS: [Values['mode'], string][] = [['', 'Each form’s own'], ...MODES];

/**
 * A project's form defaults, saved together: what its forms take unless they set it themselves. The fields are the
 * form settings' own; a field left empty is not set, and each form keeps its own value of it.
 */
export function FormDefaultsSettings({ project, onSaved }: { project: Project; onSaved(): Promise<void> }) {
  const { values, setValues, set, bind, saved, setSaved } = useValues(() => valuesOf(project.form_defaults));
  const action = useAction();
  const dirty = differ(values, valuesOf(project.form_defaults));
  useUnsaved('Form defaults', dirty);
  const errors = fieldErrors(action.error, 'form_defaults');
  const submit = async (e: Event) => {
    e.preventDefault();
    const done = await action.run(() =>
      ok(
        api.PATCH('/v1/projects/{id}', {
          params: { path: { id: project.id } },
          body: { form_defaults: bodyOf(values) },
        }),
      ),
    );
    if (!done) return;
    setValues(valuesOf(done.form_defaults));
    setSaved(true);
    await onSaved();
  };
  return (
    <form class="stack" aria-labelledby="defaults-title" onSubmit={(e) => void submit(e)}>
      <h2 id="defaults-title">Form defaults</h2>
      <p class="muted">
        Settings every form of {project.name} takes unless the form sets its own: saving writes them into each such form
        at once, and new forms and forms moved here start with them. A field left empty is not set here: each form keeps
        its own.
      </p>
      <h3>Notifications and origins</h3>
      <NotifyEmailsField {...bind('emails')} error={errors['notify_emails']} />
      <AllowedOriginsField
        {...bind('origins')}
        error={errors['allowed_origins']}
        help="One origin per line; browser posts from other websites are refused."
      />
      <SenderFields bind={bind} errors={errors} unset="Each form’s own (UTC unless set)" />
      <h3>Pages for visitors</h3>
      <PagesFields bind={bind} />
      <h3>Spam filter</h3>
      <SelectField id="s-mode" label="Spam filter mode" options={MODE_OPTIONS} {...bind('mode')} />
      <SpamRuleFields values={values} set={set} bind={bind} />
      <h3>Data retention</h3>
      <DaysFields bind={bind} spamHelp="Empty: each form’s own (30 days unless it says otherwise)." />
      <CheckboxField
        id="d-keep"
        label="Keep submissions until they are deleted"
        help="Every form keeps its submissions (the days above are not used)."
        checked={values.keepForever}
        onValue={set('keepForever')}
      />
      <CheckboxField
        id="d-keep-spam"
        label="Keep spam until it is deleted"
        help="Every form keeps its spam (the days above are not used)."
        checked={values.keepSpamForever}
        onValue={set('keepSpamForever')}
      />
      <ErrorBox error={action.error} atFields={['form_defaults']} />
      {saved && (
        <p class="ok" role="status">
          Form defaults saved.
        </p>
      )}
      <UnsavedNote dirty={dirty} />
      <SubmitRow pending={action.pending}>Save form defaults</SubmitRow>
    </form>
  );
}
