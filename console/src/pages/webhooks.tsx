import { useState } from 'preact/hooks';
import { may } from '../people';
import { api, ok } from '../api';
import type { Form, Webhook } from '../api-types';
import { ErrorBox, Field, Loading, ShownOnce, SubmitRow, TextField, useAction, useResource } from '../components/ui';
import { fieldErrors } from '../components/field-errors';
import { FormFrame } from '../components/form-nav';
import { useFormHooks, WebhookCard } from './webhooks/card';
import { isIntegration } from './integrations/settings';

export function WebhooksPage({ id }: { id: string }) {
  return (
    <FormFrame formId={id} view="Webhooks">
      {(form) => <Webhooks form={form} />}
    </FormFrame>
  );
}

type Secret = { label: string; value: string };

function Webhooks({ form }: { form: Form }) {
  const { hooks, done, setDone, changed } = useFormHooks(form.id);
  const [secret, setSecret] = useState<Secret | null>(null);
  // Integrations have a page of their own.
  const webhooks = hooks.data?.data.filter((h) => !isIntegration(h));
  return (
    <>
      <h2>Webhooks</h2>
      <RetrySchedule />
      {done && (
        <p class="ok" role="status">
          {done}
        </p>
      )}
      {secret && (
        <ShownOnce label={secret.label} value={secret.value}>
          Verify the <code>x-service-signature</code> header with it. It is shown only this once: copy it now.
        </ShownOnce>
      )}
      {may('createWebhook') && (
        <AddWebhook
          formId={form.id}
          error={hooks.error}
          onAdded={(added, message) => {
            setSecret(added);
            setDone(message);
          }}
          onChange={hooks.reload}
        />
      )}
      {!may('createWebhook') && <ErrorBox error={hooks.error} />}
      {hooks.loading && !hooks.data && <Loading what="webhooks" />}
      {webhooks && webhooks.length === 0 && (
        <p class="empty">No webhooks yet{may('createWebhook') ? ': add one above' : ''}.</p>
      )}
      <ul class="cards">
        {webhooks?.map((h) => (
          <WebhookCard
            key={h.id}
            hook={h}
            formId={form.id}
            onChange={changed}
            onSecret={(value) => setSecret({ label: `New signing secret of ${h.url}`, value })}
          />
        ))}
      </ul>
    </>
  );
}

type Kind = Webhook['format'];

/** What a webhook may be added as, and how its URL looks (the placeholder). */
const KINDS: { kind: Kind; label: string; placeholder: string }[] = [
  { kind: 'standard', label: 'Signed JSON (your own endpoint)', placeholder: 'https://example.com/hooks/intake' },
  { kind: 'slack', label: 'Slack', placeholder: 'https://hooks.slack.com/services/…' },
  { kind: 'discord', label: 'Discord', placeholder: 'https://discord.com/api/webhooks/…' },
  { kind: 'teams', label: 'Microsoft Teams', placeholder: 'https://….webhook.office.com/…' },
];

/** The chat service a URL is an incoming webhook of, by its host; `standard` for any other. */
export function kindOfUrl(url: string): Kind {
  let host = '';
  try {
    host = new URL(url.trim()).hostname;
  } catch {
    return 'standard';
  }
  if (host === 'hooks.slack.com') return 'slack';
  if (/(^|\.)discord(app)?\.com$/.test(host)) return 'discord';
  if (/(^|\.)(webhook\.office\.com|logic\.azure\.com|powerplatform\.com)$/.test(host)) return 'teams';
  return 'standard';
}

/**
 * Adds a webhook by kind and URL: a signed JSON endpoint, whose signing secret is handed up to be shown once, or a
 * Slack, Discord or Teams channel, which is posted a message and has no secret. The kind follows the URL's host until
 * it is chosen. Shows the list's load error too.
 */
function AddWebhook(props: {
  formId: string;
  error: unknown;
  onAdded(secret: Secret | null, message: string): void;
  onChange(): Promise<void>;
}) {
  const [url, setUrl] = useState('');
  const [kind, setKind] = useState<Kind>('standard');
  const [chosen, setChosen] = useState(false);
  const add = useAction();
  const shown = KINDS.find((k) => k.kind === kind)!;
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = { url: url.trim(), ...(kind === 'standard' ? {} : { format: kind }) };
    const created = await add.run(() =>
      ok(api.POST('/v1/forms/{id}/webhooks', { params: { path: { id: props.formId } }, body })),
    );
    if (!created) return;
    setUrl('');
    setKind('standard');
    setChosen(false);
    if (created.secret) {
      props.onAdded(
        { label: `Signing secret of ${created.url}`, value: created.secret },
        'Webhook added. Copy its signing secret now.',
      );
    } else {
      props.onAdded(null, `${shown.label} webhook added: each submission is posted to the channel as a message.`);
    }
    // The secret's notice says the webhook was added (and is read out, as a status).
    await props.onChange();
  };
  return (
    <>
      <form class="inline-form" onSubmit={submit} aria-label="Add a webhook">
        <Field id="w-kind" label="Sends to">
          <select
            id="w-kind"
            value={kind}
            onChange={(e) => {
              setKind(e.currentTarget.value as Kind);
              setChosen(true);
            }}
          >
            {KINDS.map((k) => (
              <option value={k.kind}>{k.label}</option>
            ))}
          </select>
        </Field>
        <TextField
          id="w-url"
          label={kind === 'standard' ? 'Webhook URL' : `${shown.label} webhook URL`}
          grow
          type="url"
          required
          placeholder={shown.placeholder}
          value={url}
          onValue={(value) => {
            setUrl(value);
            if (!chosen) setKind(kindOfUrl(value));
          }}
          help={
            kind === 'standard'
              ? 'Posted the signed JSON envelope; you get a signing secret to verify it.'
              : `Posted a ${shown.label} message with the fields and a link to the submission; not signed, so no secret (the URL is the channel’s key: keep it private).`
          }
          error={fieldErrors(add.error)['url']}
        />
        <SubmitRow pending={add.pending}>Add webhook</SubmitRow>
      </form>
      <ErrorBox error={add.error ?? props.error} atFields={['url']} />
    </>
  );
}

/** A delay as people say it: 200 ms, 10 s, 1 min, 1 h 30 min. */
export function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${+(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${+(ms / 60_000).toFixed(1)} min`;
  const h = Math.floor(ms / 3_600_000);
  const min = Math.round((ms % 3_600_000) / 60_000);
  return min ? `${h} h ${min} min` : `${h} h`;
}

/** The retry schedule this deployment uses (WEBHOOK_RETRY_SCHEDULE), as the API reports it. */
function RetrySchedule() {
  const settings = useResource(() => ok(api.GET('/v1/settings/webhooks')), []);
  const delays = settings.data?.retry_schedule_ms;
  return (
    <p class="muted">
      Each submission is sent to every enabled webhook (signed JSON, or a Slack, Discord or Teams message)
      {delays === undefined
        ? '.'
        : delays.length === 0
          ? '; a failed delivery is not retried on its own (replay it from the delivery log).'
          : `; a failed attempt is retried after ${delays.map(duration).join(', ')} (${delays.length} retr${delays.length === 1 ? 'y' : 'ies'}), then marked failed.`}
      {settings.data ? ` A receiver has ${duration(settings.data.timeout_ms)} to answer.` : ''}
    </p>
  );
}
