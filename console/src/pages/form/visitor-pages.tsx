import type { Form } from '../../api-types';
import { useSettingsSection, type Bind } from './settings-section';
import { SaveRow, TextField } from '../../components/ui';
import { InheritLine, type Inheritance, type ProjectDefaults } from './inherited';

/** The pages' words as the fields hold them (what a project may set too). */
export function pagesValues(form: Pick<Form, 'pages'>) {
  return {
    thanksTitle: form.pages?.thank_you?.title ?? '',
    thanksMessage: form.pages?.thank_you?.message ?? '',
    refusedTitle: form.pages?.refused?.title ?? '',
    refusedMessage: form.pages?.refused?.message ?? '',
  };
}
export type PagesValues = ReturnType<typeof pagesValues>;

/** One page's words as the API takes them: what is empty is left out (Intake's own words then). */
function pageOf(title: string, message: string) {
  const page = {
    ...(title.trim() ? { title: title.trim() } : {}),
    ...(message.trim() ? { message: message.trim() } : {}),
  };
  return Object.keys(page).length ? page : undefined;
}

export function pagesBody(v: PagesValues) {
  const thanks = pageOf(v.thanksTitle, v.thanksMessage);
  const refused = pageOf(v.refusedTitle, v.refusedMessage);
  return {
    pages: thanks || refused ? { ...(thanks ? { thank_you: thanks } : {}), ...(refused ? { refused } : {}) } : null,
  };
}

/** The thank-you and not-sent pages' titles and messages: a form's, or (on a project's page) its forms' defaults. */
export function PagesFields({ bind, of }: { bind: Bind<PagesValues>; of?: Inheritance }) {
  return (
    <>
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
      <InheritLine of={of} setting="pages" what="pages" />
    </>
  );
}

/** What a visitor's browser shows after a plain form post, saved on its own. */
export function VisitorPagesSettings(props: { form: Form; project?: ProjectDefaults; onSaved?(): Promise<void> }) {
  const { bind, saved, dirty, action, submit, inheritance } = useSettingsSection({
    ...props,
    name: 'Pages for visitors',
    settings: { pages: ['thanksTitle', 'thanksMessage', 'refusedTitle', 'refusedMessage'] },
    valuesOf: pagesValues,
    bodyOf: pagesBody,
  });
  return (
    <form class="stack" aria-labelledby="pages-title" onSubmit={(e) => void submit(e)}>
      <h2 id="pages-title">Pages for visitors</h2>
      <p class="muted">
        What a visitor sees after posting the form from a plain HTML page, when the form has no redirect URL. Empty:
        Intake’s own words, in the visitor’s language.
      </p>
      <PagesFields bind={bind} of={inheritance} />
      <SaveRow action={action} saved={saved} dirty={dirty}>
        Save pages
      </SaveRow>
    </form>
  );
}
