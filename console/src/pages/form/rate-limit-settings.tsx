import { api, ok } from '../../api';
import type { Form, ResponseBody } from '../../api-types';
import { ErrorBox, formatTime, SubmitRow, TextField, UnsavedNote, useResource } from '../../components/ui';
import { fieldErrors } from '../../components/field-errors';
import { useSettingsSection } from './settings-section';

type RateLimit = ResponseBody<'getFormRateLimit'>;

/** A window as people say it: 10 minutes, 1 hour, 90 seconds. */
export function windowWords(seconds: number): string {
  const say = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (seconds % 3600 === 0) return say(seconds / 3600, 'hour');
  if (seconds % 60 === 0) return say(seconds / 60, 'minute');
  return say(seconds, 'second');
}

/** The posts ingest refused, in words: "17 today · 22 in 7 days · 24 in 30 days (the last at …)". */
export function refusedWords(r: RateLimit['refused']): string {
  if (r.last_30_days === 0) return 'No post was refused in the last 30 days.';
  return (
    `Posts refused: ${r.today.toLocaleString('en')} today · ${r.last_7_days.toLocaleString('en')} in the last 7 days · ` +
    `${r.last_30_days.toLocaleString('en')} in the last 30 days (the last on ${formatTime(r.last_at)}).`
  );
}

/** The form's rate limit and the posts it refused, loaded apart from the form (`reload` after a change). */
export function useRateLimit(formId: string) {
  return useResource(() => ok(api.GET('/v1/forms/{id}/rate-limit', { params: { path: { id: formId } } })), [formId]);
}

/** What applies, in words: "At most 60 posts in 10 minutes from one address (this Intake's default)". */
export function limitWords(r: RateLimit): string {
  return (
    `At most ${r.limit.toLocaleString('en')} posts in ${windowWords(r.window_seconds)} from one address` +
    (r.own === null ? ' (this Intake’s default)' : '') +
    '; past it a post is refused (429) until the window has passed.'
  );
}

/**
 * The ingest rate limit of the form: what applies, the posts it refused lately, and the form's own limit (empty: the
 * default), within the plan's most; saved on its own.
 */
export function RateLimitSettings(props: { form: Form; onSaved?(): Promise<void> }) {
  const limit = useRateLimit(props.form.id);
  const { bind, saved, dirty, action, submit } = useSettingsSection({
    ...props,
    name: 'Rate limit',
    valuesOf: (form: Form) => ({ limit: form.rate_limit === null ? '' : String(form.rate_limit) }),
    bodyOf: (v: { limit: string }) => ({ rate_limit: v.limit.trim() === '' ? null : Number(v.limit.trim()) }),
    onSaved: async () => {
      await Promise.all([props.onSaved?.(), limit.reload()]);
    },
  });
  const r = limit.data;
  return (
    <section aria-labelledby="rate-title">
      <h2 id="rate-title">Rate limit</h2>
      {r && (
        <>
          <p>{limitWords(r)}</p>
          <p class={r.refused.today > 0 ? 'warning' : 'muted'}>{refusedWords(r.refused)}</p>
        </>
      )}
      <ErrorBox error={limit.error} />
      <form class="stack" onSubmit={(e) => void submit(e)}>
        <TextField
          id="rl-posts"
          label={`Posts from one address per ${r ? windowWords(r.window_seconds) : 'window'}`}
          help={
            r
              ? `Empty takes the default (${r.default}); at most ${r.max.toLocaleString('en')} on the ${r.plan} plan.`
              : 'Empty takes the default.'
          }
          inputMode="numeric"
          pattern="[0-9]*"
          error={fieldErrors(action.error)['rate_limit']}
          {...bind('limit')}
        />
        <ErrorBox error={action.error} atFields={['rate_limit']} />
        {saved && (
          <p class="ok" role="status">
            Rate limit saved.
          </p>
        )}
        <UnsavedNote dirty={dirty} />
        <SubmitRow pending={action.pending}>Save rate limit</SubmitRow>
      </form>
    </section>
  );
}
