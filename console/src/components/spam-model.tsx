import { api, ok } from '../api';
import type { Form } from '../api-types';
import { ErrorBox, Figures, useResource } from './ui';
import { spamKindText } from './spam-line';

/** Whose spam filter a mark on the form teaches, in words: its client's (its project's forms') or its own, no other. */
export function marksTeach(form: Pick<Form, 'spam_model' | 'project'>): string {
  if (form.spam_model === 'form') return 'Marking teaches only this form’s own spam filter, no other form’s.';
  if (form.project) return `Marking teaches only ${form.project.name}’s spam filter, no other client’s.`;
  return 'Marking teaches only the spam filter of this project’s forms, no other client’s.';
}

const MONTH = new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric', timeZone: 'UTC' });

/** `marksTeach`'s words beside a mark button. */
export function MarksTeachNote({ text }: { text: string }) {
  return (
    <span class="muted" data-testid="marks-teach">
      {text}
    </span>
  );
}

/**
 * How the form's spam classifier (its project's, or its own) is doing, where the owner looks at spam: what it learns
 * from (the owner's marks, the honeypot's catches), whether it is still learning, and what shadow mode would have
 * caught this month.
 */
export function SpamModelPanel({ form }: { form: Form }) {
  const formId = form.id;
  const model = useResource(() => ok(api.GET('/v1/spam/model', { params: { query: { form_id: formId } } })), [formId]);
  if (model.error) return <ErrorBox error={model.error} />;
  const m = model.data;
  if (!m) return null;
  const figures: [string, string][] = [
    ['Marked spam', m.spam_marks.toLocaleString()],
    ['Honeypot catches', m.honeypot_catches.toLocaleString()],
    ['Marked not spam', m.not_spam_marks.toLocaleString()],
    [
      `Shadow would have caught (${MONTH.format(new Date(`${m.month}-01T00:00:00Z`))})`,
      m.shadow_caught.toLocaleString(),
    ],
  ];
  const spam = m.spam_marks + m.honeypot_catches;
  return (
    <>
      <KeptOut form={form} caught={m.caught} month={m.month} />
      <section aria-labelledby="spam-model-title" class="spam-model">
        <h2 id="spam-model-title">
          {m.scope.type === 'form' ? 'Spam classifier (this form’s own)' : 'Spam classifier (the project’s)'}
        </h2>
        <Figures figures={figures} />
        <p class="muted" data-testid="spam-model-state">
          {m.learning
            ? `Still learning: it needs ${m.min_examples} examples of each kind (it has ${spam} spam and ` +
              `${m.not_spam_marks} not spam) before its verdict counts. Until then it only records its score.`
            : `Learned from ${spam.toLocaleString()} spam and ${m.not_spam_marks.toLocaleString()} not spam examples; ` +
              `posts scoring ${m.threshold} or more are caught on forms whose filter is on.`}
        </p>
      </section>
    </>
  );
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** The form's rules that are on, in words, as the settings' check boxes name them. */
function rulesOn(rules: Form['spam_rules']): string[] {
  const on: string[] = [];
  if (rules.block_disposable) on.push('disposable addresses');
  if (rules.links_in_name) on.push('a link in a name');
  if (rules.known_spam) on.push('known spam');
  if (rules.blocked_domains?.length || rules.blocked_addresses?.length) on.push('the blocked domains and addresses');
  if (rules.blocked_words?.length) on.push('blocked words');
  if (rules.max_links !== undefined) on.push(`more than ${rules.max_links} links`);
  if (rules.required_fields?.length) on.push('a missing required field');
  if (rules.reject_duplicates) on.push('duplicates');
  return on;
}

/**
 * What kept this month's spam of the form out, by kind, and what its filter does, with the way to loosen it: the
 * rules a new form starts with are on, and an owner whose clients' real posts are caught turns one off in settings.
 */
function KeptOut(props: { form: Form; caught: { reason: string; count: number }[]; month: string }) {
  const { form, caught } = props;
  const rules = rulesOn(form.spam_rules);
  const mode =
    form.spam_filter === 'on'
      ? rules.length
        ? `This form’s filter is on: ${rules.join(', ')} make a post spam.`
        : 'This form’s filter is on, with no rules.'
      : form.spam_filter === 'shadow'
        ? 'This form’s filter is in shadow: its rules only record what they would catch.'
        : 'This form’s filter is off: only the honeypot and the bot challenge catch spam.';
  const starting = form.spam_rules.starting_model
    ? ' The starting classifier scores posts until your marks teach this one; it only records.'
    : '';
  const total = caught.reduce((n, c) => n + c.count, 0);
  return (
    <section aria-labelledby="kept-out-title" class="spam-model">
      <h2 id="kept-out-title">Kept out ({MONTH.format(new Date(`${props.month}-01T00:00:00Z`))})</h2>
      {total === 0 ? (
        <p class="muted">Nothing this month.</p>
      ) : (
        <Figures
          figures={caught.map((c): [string, string] => [capitalized(spamKindText(c.reason)), c.count.toLocaleString()])}
        />
      )}
      <p class="muted" data-testid="spam-filter-state">
        {mode}
        {starting}{' '}
        <a href={`/console/forms/${encodeURIComponent(form.id)}#spam-title`}>Loosen or change the spam filter</a>
      </p>
    </section>
  );
}
