import type { Form } from '../../api-types';
import { useSettingsSection } from './settings-section';
import { SaveRow, TextField } from '../../components/ui';

function valuesOf(form: Form) {
  return {
    thanksTitle: form.pages?.thank_you?.title ?? '',
    thanksMessage: form.pages?.thank_you?.message ?? '',
    refusedTitle: form.pages?.refused?.title ?? '',
    refusedMessage: form.pages?.refused?.message ?? '',
  };
}

type Values = ReturnType<typeof valuesOf>;

/** One page's words as the API takes them: what is empty is left out (Intake's own words then). */
function pageOf(title: string, message: string) {
  const page = {
    ...(title.trim() ? { title: title.trim() } : {}),
    ...(message.trim() ? { message: message.trim() } : {}),
  };
  return Object.keys(page).length ? page : undefined;
}

function bodyOf(v: Values) {
  const thanks = pageOf(v.thanksTitle, v.thanksMessage);
  const refused = pageOf(v.refusedTitle, v.refusedMessage);
  return {
    pages: thanks || refused ? { ...(thanks ? { thank_you: thanks } : {}), ...(refused ? { refused } : {}) } : null,
  };
}

/** What a visitor's browser shows after a plain form post, saved on its own. */
export function VisitorPagesSettings({ form, onSaved }: { form: Form; onSaved?(): Promise<void> }) {
  const { bind, saved, action, submit } = useSettingsSection({ form, valuesOf, bodyOf, onSaved });
  return (
    <form class="stack" aria-labelledby="pages-title" onSubmit={(e) => void submit(e)}>
      <h2 id="pages-title">Pages for visitors</h2>
      <p class="muted">
        What a visitor sees after posting the form from a plain HTML page, when the form has no redirect URL. Empty:
        Intake’s own words, in the visitor’s language.
      </p>
      <TextField id="p-thanks-title" label="Thank-you title" maxLength={100} {...bind('thanksTitle')} />
      <TextField id="p-thanks-message" label="Thank-you message" rows={3} maxLength={1000} {...bind('thanksMessage')} />
      <TextField id="p-refused-title" label="Not-sent title" maxLength={100} {...bind('refusedTitle')} />
      <TextField
        id="p-refused-message"
        label="Not-sent message"
        help="Shown above the reason the post was refused."
        rows={3}
        maxLength={1000}
        {...bind('refusedMessage')}
      />
      <SaveRow action={action} saved={saved}>
        Save pages
      </SaveRow>
    </form>
  );
}
