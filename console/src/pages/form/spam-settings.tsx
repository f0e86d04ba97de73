import type { Form } from '../../api-types';
import { useSettingsSection, type Binding } from './settings-section';
import { Check, SaveRow, SelectField, TextField } from '../../components/ui';
import { InheritLine, inheritNote, withNote, type ProjectDefaults } from './inherited';

type Rules = Form['spam_rules'];
type Mode = Form['spam_filter'];

const list = (text: string) =>
  text
    .split(/[\n,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

/** The rules as the fields hold them (what a project may set too). */
export function rulesValues(form: Pick<Form, 'spam_rules'>) {
  const r = form.spam_rules;
  return {
    domains: (r.blocked_domains ?? []).join('\n'),
    addresses: (r.blocked_addresses ?? []).join('\n'),
    disposable: r.block_disposable ?? false,
    linksInName: r.links_in_name ?? false,
    knownSpam: r.known_spam ?? false,
    startingModel: r.starting_model ?? false,
    words: (r.blocked_words ?? []).join('\n'),
    maxLinks: r.max_links === undefined ? '' : String(r.max_links),
    required: (r.required_fields ?? []).join('\n'),
    duplicates: r.reject_duplicates ?? false,
    windowHours: String(r.duplicate_window_hours ?? 24),
  };
}
export type RulesValues = ReturnType<typeof rulesValues>;
const RULE_FIELDS = Object.keys(rulesValues({ spam_rules: {} })) as (keyof RulesValues)[];

const valuesOf = (form: Form) => ({ mode: form.spam_filter, model: form.spam_model, ...rulesValues(form) });
type Values = ReturnType<typeof valuesOf>;

/** The rules as the API takes them: empty lists and unset numbers left out. */
export function rulesOf(v: RulesValues): Rules {
  const rules: Rules = {};
  if (list(v.domains).length) rules.blocked_domains = list(v.domains);
  if (list(v.addresses).length) rules.blocked_addresses = list(v.addresses);
  if (v.disposable) rules.block_disposable = true;
  if (v.linksInName) rules.links_in_name = true;
  if (v.knownSpam) rules.known_spam = true;
  if (v.startingModel) rules.starting_model = true;
  if (list(v.words).length) rules.blocked_words = list(v.words.replace(/,/g, '\n'));
  if (v.maxLinks.trim() !== '') rules.max_links = Number(v.maxLinks);
  if (list(v.required).length) rules.required_fields = list(v.required);
  if (v.duplicates) rules.reject_duplicates = true;
  if (v.duplicates && v.windowHours.trim() !== '') rules.duplicate_window_hours = Number(v.windowHours);
  return rules;
}

const MODELS: [Form['spam_model'], string][] = [
  ['project', 'The project’s: learns from the marks on all its forms'],
  ['form', 'This form’s own: learns from this form alone'],
];

export const MODES: [Mode, string][] = [
  ['off', 'Off: only the honeypot and the bot challenge'],
  ['shadow', 'Shadow: score and record reasons, change nothing'],
  ['on', 'On: what the rules and the classifier catch is spam'],
];

/** The form's spam filter: its mode and rules, saved on their own. */
export function SpamSettings(props: { form: Form; project?: ProjectDefaults; onSaved(): Promise<void> }) {
  const section = useSettingsSection({
    ...props,
    name: 'Spam filter',
    settings: { spam_filter: ['mode'], spam_rules: RULE_FIELDS },
    valuesOf,
    bodyOf: (v: Values) => ({ spam_filter: v.mode, spam_rules: rulesOf(v), spam_model: v.model }),
  });
  const { bind, saved, dirty, action, submit, inheritance } = section;
  return (
    <form class="stack" aria-labelledby="spam-title" onSubmit={(e) => void submit(e)}>
      <h2 id="spam-title">Spam filter</h2>
      <SelectField
        id="s-mode"
        label="Mode"
        help={withNote(
          'The classifier learns from your “spam” and “not spam” marks.',
          inheritNote(inheritance, 'spam_filter', 'spam filter mode'),
        )}
        options={MODES}
        {...bind('mode')}
      />
      <SelectField
        id="s-model"
        label="Classifier"
        help="Marks teach only the classifier of the form they are made on: its project’s, or its own."
        options={MODELS}
        {...bind('model')}
      />
      <SpamRuleFields {...section} />
      <InheritLine of={inheritance} setting="spam_rules" what="spam rules" />
      <SaveRow action={action} saved={saved} dirty={dirty}>
        Save spam filter
      </SaveRow>
    </form>
  );
}

/** The rules' fields: a form's, or (on a project's page) its forms' defaults. */
export function SpamRuleFields({ values, set, bind }: Binding<RulesValues>) {
  const text = (id: string, label: string, name: 'domains' | 'addresses' | 'words' | 'required', help: string) => (
    <TextField id={id} label={label} help={help} rows={2} {...bind(name)} />
  );
  return (
    <>
      {text('s-domains', 'Blocked e-mail domains', 'domains', 'One per line; their subdomains too.')}
      {text('s-addresses', 'Blocked e-mail addresses', 'addresses', 'One per line.')}
      {text('s-words', 'Blocked words or phrases', 'words', 'One per line; whole words, any case.')}
      {text(
        's-required',
        'Required fields',
        'required',
        'Field names, one per line: a post without a value for one is spam.',
      )}
      <TextField
        id="s-links"
        label="Most links allowed"
        help="Empty: no limit."
        type="number"
        min="0"
        {...bind('maxLinks')}
      />
      <Check checked={values.disposable} onValue={set('disposable')}>
        Block disposable e-mail addresses
      </Check>
      <Check checked={values.linksInName} onValue={set('linksInName')}>
        A link in a name field is spam
      </Check>
      <Check checked={values.knownSpam} onValue={set('knownSpam')}>
        Known spam is spam (crypto and SEO pitches, earnings claims, pills, casinos, prizes, HTML links)
      </Check>
      <Check checked={values.startingModel} onValue={set('startingModel')}>
        Starting classifier: scores posts until your marks have taught this filter (it only records)
      </Check>
      <Check checked={values.duplicates} onValue={set('duplicates')}>
        The same fields posted again are spam
      </Check>
      {values.duplicates && (
        <TextField id="s-window" label="Within (hours)" type="number" min="1" max="720" {...bind('windowHours')} />
      )}
    </>
  );
}
