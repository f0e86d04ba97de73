import { useState } from 'preact/hooks';
import { may } from '../../people';
import { api, ok } from '../../api';
import type { Webhook } from '../../api-types';
import { ErrorBox, Field, formatTime, SubmitRow, useAction } from '../../components/ui';

const FORMATS: [Webhook['format'], string][] = [
  ['standard', 'Signed JSON (standard)'],
  ['slack', 'Slack message'],
  ['discord', 'Discord message'],
  ['teams', 'Microsoft Teams message'],
];

const when = (at: string | null) => (at ? formatTime(at) : 'never');

/** How a webhook has fared: the last 24 hours by outcome, its last success, the failures since. */
export function WebhookHealth({ hook }: { hook: Webhook }) {
  const h = hook.health;
  const day = h.last_24h;
  return (
    <div class="webhook-health">
      {hook.disabled_reason === 'failing' && (
        <p class="error" role="status">
          Disabled by Intake after failing for too long. Fix the endpoint, enable it, then replay what failed.
        </p>
      )}
      <p class={h.consecutive_failures > 0 ? 'error' : 'muted'}>
        Last 24 h: {day.succeeded} succeeded · {day.failed} failed · {day.pending} pending. Last success:{' '}
        {when(h.last_success_at)}
        {h.failing_since
          ? `. Failing since ${when(h.failing_since)} (${h.consecutive_failures} failed attempts in a row).`
          : '.'}
      </p>
    </div>
  );
}

/** What the webhook posts: the signed envelope or a chat service's message; saved on change. */
export function FormatPicker({
  hook,
  onChange,
  onSecret,
}: {
  hook: Webhook;
  onChange(message: string): void;
  /** A chat webhook made standard gets a signing secret, shown once. */
  onSecret(secret: string): void;
}) {
  const action = useAction();
  const id = `w-format-${hook.id}`;
  const change = async (format: Webhook['format']) => {
    const body = { format };
    const updated = await action.run(() =>
      ok(api.PATCH('/v1/webhooks/{id}', { params: { path: { id: hook.id } }, body })),
    );
    if (!updated) return;
    if (updated.secret) onSecret(updated.secret);
    onChange(
      `Webhook ${hook.url} now posts: ${FORMATS.find(([f]) => f === format)?.[1]}.` +
        (updated.secret ? ' Copy its new signing secret now.' : ''),
    );
  };
  if (!may('updateWebhook'))
    return <p class="muted">Posts: {FORMATS.find(([f]) => f === hook.format)?.[1] ?? hook.format}</p>;
  return (
    <Field id={id} label="Posts">
      <select
        id={id}
        value={hook.format}
        disabled={action.pending}
        onChange={(e) => void change(e.currentTarget.value as Webhook['format'])}
      >
        {FORMATS.map(([format, label]) => (
          <option value={format}>{label}</option>
        ))}
      </select>
      <ErrorBox error={action.error} />
    </Field>
  );
}

/** A local date-time input's value for `at` (what `datetime-local` shows), a day ago by default. */
function localInput(at: Date): string {
  const local = new Date(at.getTime() - at.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

/** "Replay failed since…": every failed delivery since a time, counted first, then queued. */
export function ReplayFailedSince({ hook, onDone }: { hook: Webhook; onDone(message: string): void }) {
  const [since, setSince] = useState(() => localInput(new Date(Date.now() - 86_400_000)));
  const [count, setCount] = useState<number | null>(null);
  const action = useAction();
  const id = `w-replay-${hook.id}`;
  const ask = (dryRun: boolean) =>
    action.run(() =>
      ok(
        api.POST('/v1/webhooks/{id}/replay', {
          params: { path: { id: hook.id } },
          body: { status: 'failed', since: new Date(since).toISOString(), dry_run: dryRun },
        }),
      ),
    );
  const submit = async (e: Event) => {
    e.preventDefault();
    if (count === null) {
      const counted = await ask(true);
      if (counted) setCount(counted.replayed);
      return;
    }
    const queued = await ask(false);
    setCount(null);
    if (queued) onDone(`${queued.replayed} failed deliveries of ${hook.url} queued for a replay.`);
  };
  return (
    <form class="inline-form" onSubmit={(e) => void submit(e)}>
      <Field id={id} label="Replay failed since…">
        <input
          id={id}
          type="datetime-local"
          required
          value={since}
          onInput={(e) => {
            setSince(e.currentTarget.value);
            setCount(null);
          }}
        />
      </Field>
      <SubmitRow pending={action.pending}>
        {count === null ? 'Count failed deliveries' : `Replay ${count} failed deliver${count === 1 ? 'y' : 'ies'}`}
      </SubmitRow>
      <ErrorBox error={action.error} />
    </form>
  );
}
