import { useEffect, useState } from 'preact/hooks';
import { api, ok, session } from '../api';
import { EnrolTwoFactor, RecoveryCodes } from '../components/two-factor';
import {
  ACTIONS_COLUMN,
  CheckboxField,
  ErrorBox,
  Loading,
  SubmitRow,
  Table,
  TextField,
  formatTime,
  useAction,
  useResource,
  useText,
  type Resource,
} from '../components/ui';
import { useTitle } from '../title';
import type { ResponseBody } from '../api-types';

/** The signed-in person's security: who they are, their two-factor sign-in, and (owners) the account's requirement. */
export function SecurityPage() {
  useTitle('Security');
  const s = session.value;
  // One status for the page: the person's part and the owner's switch say the same thing of it, and the switch
  // changes what the person's part may offer (turning it off), so it is read again after each change.
  const status = useResource(
    () => (s?.member_id ? ok(api.GET('/v1/two-factor')) : Promise.resolve(null)),
    [s?.member_id],
  );
  return (
    <>
      <h1>Security</h1>
      <p class="muted">
        Signed in as {s?.email ?? 'a management key'} ({s?.role}) since {formatTime(s?.created_at ?? null)}.
      </p>
      {s?.member_id ? (
        <>
          <TwoFactor status={status} />
          <Sessions />
        </>
      ) : (
        <p>Two-factor sign-in belongs to people: sign in with your e-mail and password to set it up.</p>
      )}
      {s?.role === 'owner' && (
        <RequireTwoFactor mine={status.data?.enabled ?? null} onChanged={() => void status.reload()} />
      )}
    </>
  );
}

type Status = ResponseBody<'getTwoFactor'>;

/**
 * The person's second factor, as the API says it is: on (since when, codes left, new codes, off) or off (set it up).
 * Once an enrolment is confirmed the status is read again, so it says "On" above the new recovery codes.
 */
function TwoFactor({ status }: { status: Resource<Status | null> }) {
  const [codes, setCodes] = useState<string[] | null>(null);
  return (
    <section aria-labelledby="two-factor">
      <h2 id="two-factor">Two-factor sign-in</h2>
      <ErrorBox error={status.error} />
      {status.loading && !status.data && <Loading what="two-factor" />}
      {status.data &&
        (status.data.enabled ? (
          <>
            <p>
              On since {formatTime(status.data.enabled_at)}: signing in with your password also asks for the code of
              your authenticator app. {status.data.recovery_codes_left} of 10 recovery codes left.
            </p>
            {codes && (
              <>
                <RecoveryCodes codes={codes} />
                <button type="button" onClick={() => setCodes(null)}>
                  I have saved my recovery codes
                </button>
              </>
            )}
            <details class="panel">
              <summary>New recovery codes</summary>
              <p class="muted">Ten new codes; the ones you have stop working.</p>
              <Proof
                id="renew"
                label="New recovery codes"
                submitLabel="Make new recovery codes"
                send={async (body) => {
                  const renewed = await ok(api.POST('/v1/two-factor/recovery-codes', { body }));
                  setCodes(renewed.recovery_codes);
                  await status.reload();
                }}
              />
            </details>
            {status.data.required ? (
              <p class="muted">This account requires two-factor, so it cannot be turned off.</p>
            ) : (
              <details class="panel">
                <summary>Turn off two-factor</summary>
                <Proof
                  id="off"
                  label="Turn off two-factor"
                  submitLabel="Turn off two-factor"
                  send={async (body) => {
                    await ok(api.POST('/v1/two-factor/disable', { body }));
                    setCodes(null);
                    await status.reload();
                  }}
                />
              </details>
            )}
          </>
        ) : (
          <>
            <p>
              Off. With it on, signing in with your password also asks for a code from an authenticator app on your
              phone.
            </p>
            <EnrolTwoFactor
              onDone={() => void status.reload()}
              onConfirmed={(confirmed) => {
                setCodes(confirmed.recovery_codes);
                void status.reload();
              }}
            />
          </>
        ))}
    </section>
  );
}

/**
 * A code of the app (6 digits) or a recovery code (ten letters and digits, `xxxxx-xxxxx`), as people type them. A
 * password is at least 12 characters, so it is never taken for one.
 */
const isCode = (text: string) => /^(\d{6}|[a-z2-7]{10})$/i.test(text.replace(/[\s-]/g, ''));

/** A change to the second factor, proven in one field with a code of the app, a recovery code, or the password. */
function Proof(props: {
  id: string;
  label: string;
  submitLabel: string;
  send(body: { code: string } | { password: string }): Promise<void>;
}) {
  const proof = useText();
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = isCode(proof.value) ? { code: proof.value.trim() } : { password: proof.value };
    const sent = await action.run(async () => {
      await props.send(body);
      return true;
    });
    if (sent) proof.onValue('');
  };
  return (
    <form onSubmit={submit} aria-label={props.label}>
      <TextField
        id={`${props.id}-proof`}
        label="Code or password"
        type="password"
        help="A code of your authenticator app, one of your recovery codes, or your password."
        autocomplete="one-time-code"
        {...proof}
      />
      <ErrorBox error={action.error} />
      <SubmitRow pending={action.pending}>{props.submitLabel}</SubmitRow>
    </form>
  );
}

/** The person's console sessions in this account: where and when each was opened, and ending the others. */
function Sessions() {
  const sessions = useResource(() => ok(api.GET('/v1/sessions')), []);
  const action = useAction();
  const end = async (id: string) => {
    await action.run(() => ok(api.DELETE('/v1/sessions/{id}', { params: { path: { id } } })));
    await sessions.reload();
  };
  return (
    <section aria-labelledby="sessions">
      <h2 id="sessions">Sessions</h2>
      <ErrorBox error={action.error ?? sessions.error} />
      {sessions.loading && !sessions.data && <Loading what="sessions" />}
      {sessions.data && (
        <Table label="Your sessions" columns={['Signed in', 'Last seen', 'Address', 'Browser', ACTIONS_COLUMN]}>
          {sessions.data.data.map((x) => (
            <tr key={x.id}>
              <td>{formatTime(x.created_at)}</td>
              <td>{formatTime(x.last_seen_at)}</td>
              <td>{x.ip ?? '—'}</td>
              <td class="agent" title={x.user_agent ?? undefined}>
                {x.user_agent ?? '—'}
              </td>
              <td>
                {x.current ? (
                  <span class="muted">This session</span>
                ) : (
                  <button type="button" class="secondary" disabled={action.pending} onClick={() => void end(x.id)}>
                    End session
                  </button>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}

/** The owner's switch: every password sign-in of this account needs a second factor. */
function RequireTwoFactor({ mine, onChanged }: { mine: boolean | null; onChanged(): void }) {
  const account = useResource(() => ok(api.GET('/v1/account')), []);
  const action = useAction();
  // A refusal for want of the owner's own second factor is no longer true once it is on.
  useEffect(() => {
    if (mine) action.setError(undefined);
  }, [mine]);
  const set = async (on: boolean) => {
    const changed = await action.run(() => ok(api.PATCH('/v1/account', { body: { require_two_factor: on } })));
    await account.reload();
    if (changed) onChanged();
  };
  return (
    <section aria-labelledby="account-security">
      <h2 id="account-security">Account</h2>
      <ErrorBox error={account.error} />
      {account.data && (
        <CheckboxField
          id="require-2fa"
          label="Require two-factor for password sign-in"
          help={
            'Members without an authenticator set one up at their next sign-in. Management keys and single sign-on ' +
            'are not affected.' +
            (mine === false ? ' Turn on two-factor for yourself first (above).' : '')
          }
          role="switch"
          checked={account.data.require_two_factor}
          disabled={action.pending}
          onValue={(on) => void set(on)}
        />
      )}
      <ErrorBox error={action.error} />
    </section>
  );
}
