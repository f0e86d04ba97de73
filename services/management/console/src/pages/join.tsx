import { useState } from 'preact/hooks';
import { api, ok, session, signedOutReason } from '../api';
import { ErrorBox, Loading, TextField, useAction, useResource } from '../components/ui';
import { linkToken } from '../people';
import { useTitle } from '../title';

/** `/console/join#<token>`: an invitation, accepted with a password (a new one, or the person's own). */
export function JoinPage() {
  useTitle('Join');
  const token = linkToken();
  const invitation = useResource(() => ok(api.POST('/v1/invitations/lookup', { body: { token } })), [token]);
  const options = useResource(() => ok(api.GET('/v1/sign-in-options')), []);
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const created = await action.run(() =>
      ok(
        api.POST('/v1/invitations/accept', {
          body: { token, password, ...(name.trim() ? { name: name.trim() } : {}) },
        }),
      ),
    );
    if (!created) return;
    signedOutReason.value = null;
    session.value = created;
    window.location.replace('/console/forms');
  };
  const data = invitation.data;
  return (
    <main class="signin" id="main">
      <h1>Join Intake</h1>
      {invitation.loading && <Loading what="the invitation" />}
      <ErrorBox error={invitation.error} />
      {data && (
        <p>
          <strong>{data.email}</strong> is invited to <strong>{data.account_name}</strong> as {data.role}.
        </p>
      )}
      {data && options.data?.sso && <JoinWithSso token={token} />}
      {data && options.data?.password && (
        <form onSubmit={submit} aria-label="Join with a password">
          {!data.has_password && (
            <TextField id="join-name" label="Name" value={name} onValue={setName} maxLength={200} />
          )}
          <TextField
            id="join-password"
            label={data.has_password ? 'Your password' : 'Choose a password'}
            type="password"
            autocomplete={data.has_password ? 'current-password' : 'new-password'}
            required
            value={password}
            onValue={setPassword}
            help={data.has_password ? 'You have a password here already.' : 'At least 12 characters; not a common one.'}
          />
          <ErrorBox error={action.error} />
          <button type="submit" disabled={action.pending}>
            Join
          </button>
        </form>
      )}
    </main>
  );
}

/**
 * A plain form post (not a fetch): the answer takes the browser on to the identity provider. The token goes in the body,
 * so it stays out of addresses and logs.
 */
function JoinWithSso({ token }: { token: string }) {
  return (
    <form method="post" action="/console/auth/login" aria-label="Join with single sign-on">
      <input type="hidden" name="invitation" value={token} />
      <button type="submit" class="secondary">
        Join with SSO
      </button>
    </form>
  );
}

/** `/console/reset#<token>`: a new password from a reset link. */
export function ResetPage() {
  useTitle('New password');
  const [password, setPassword] = useState('');
  const [done, setDone] = useState(false);
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = { token: linkToken(), password };
    if (await action.run(() => ok(api.POST('/v1/password-resets/confirm', { body })).then(() => true))) setDone(true);
  };
  return (
    <main class="signin" id="main">
      <h1>Choose a new password</h1>
      {done ? (
        <p class="notice" role="status">
          Your password is changed and your other sessions have ended. <a href="/console">Sign in</a> with it.
        </p>
      ) : (
        <form onSubmit={submit}>
          <TextField
            id="new-password"
            label="New password"
            type="password"
            autocomplete="new-password"
            required
            value={password}
            onValue={setPassword}
            help="At least 12 characters; not a common one."
          />
          <ErrorBox error={action.error} />
          <button type="submit" disabled={action.pending}>
            Set password
          </button>
        </form>
      )}
    </main>
  );
}
