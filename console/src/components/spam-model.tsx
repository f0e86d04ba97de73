import { api, ok } from '../api';
import { ErrorBox, Figures, useResource } from './ui';

const MONTH = new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric', timeZone: 'UTC' });

/**
 * How the form's spam classifier (its project's, or its own) is doing, where the owner looks at spam: what it learns
 * from (the owner's marks, the honeypot's catches), whether it is still learning, and what shadow mode would have
 * caught this month.
 */
export function SpamModelPanel({ formId }: { formId: string }) {
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
  );
}
