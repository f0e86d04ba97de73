import { useState } from 'preact/hooks';
import { api, ok, session } from '../api';
import { EnrolTwoFactor } from '../components/two-factor';
import { ErrorBox, Field, Loading, SubmitRow, TextField, formatTime, useAction, useResource } from '../components/ui';
import { useTitle } from '../title';

/** The signed-in person's security: who they are, their two-factor sign-in, and (owners) the account's requirement. */
export function SecurityPage() {
  useTitle('Security');
  const s = session.value;
  // The owner's switch changes what the two-factor part may offer (turning it off): it is read again after one.
  const [round, setRound] = useState(0);
  return (
    <>
      <h1>Security</h1>
      <p class="muted">
        Signed in as {s?.email ?? 'a management key'} ({s?.role}) since {formatTime(s?.created_at ?? null)}.
      </p>
      {s?.member_id ? (
        <TwoFactor key={round} />
      ) : (
        <p>Two-factor sign-in belongs to people: sign in with your e-mail and password to set it up.</p>
      )}
      {s?.role === 'owner' && <RequireTwoFactor onChanged={() => setRound((r) => r + 1)} />}
    </>
  );
}

function TwoFactor() {
  const status = useResource(() => ok(api.GET('/v1/two-factor')), []);
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
            {status.data.required ? (
              <p class="muted">This account requires two-factor, so it cannot be turned off.</p>
            ) : (
              <TurnOff onDone={status.reload} />
            )}
          </>
        ) : (
          <>
            <p>
              Off. With it on, signing in with your password also asks for a code from an authenticator app on your
              phone.
            </p>
            <EnrolTwoFactor onDone={() => void status.reload()} />
          </>
        ))}
    </section>
  );
}

function TurnOff({ onDone }: { onDone(): Promise<void> }) {
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = code.trim() ? { code: code.trim() } : { password };
    if ((await action.run(() => ok(api.POST('/v1/two-factor/disable', { body })))) !== undefined) await onDone();
  };
  return (
    <form onSubmit={submit} aria-label="Turn off two-factor">
      <TextField
        id="off-code"
        label="Authentication code"
        help="A code of your app or a recovery code; or leave it empty and give your password."
        autocomplete="one-time-code"
        value={code}
        onValue={setCode}
      />
      <TextField
        id="off-password"
        label="Password"
        type="password"
        autocomplete="current-password"
        value={password}
        onValue={setPassword}
      />
      <ErrorBox error={action.error} />
      <SubmitRow pending={action.pending}>Turn off two-factor</SubmitRow>
    </form>
  );
}

/** The owner's switch: every password sign-in of this account needs a second factor. */
function RequireTwoFactor({ onChanged }: { onChanged(): void }) {
  const account = useResource(() => ok(api.GET('/v1/account')), []);
  const action = useAction();
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
        <Field
          id="require-2fa"
          label="Require two-factor for password sign-in"
          help="Members without an authenticator set one up at their next sign-in. Management keys and single sign-on are not affected. Turn on two-factor for yourself first."
        >
          <input
            id="require-2fa"
            type="checkbox"
            role="switch"
            checked={account.data.require_two_factor}
            disabled={action.pending}
            onChange={(e) => void set(e.currentTarget.checked)}
          />
        </Field>
      )}
      <ErrorBox error={action.error} />
    </section>
  );
}
