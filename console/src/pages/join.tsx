import { useState } from 'preact/hooks';
import { answerOf, api, ok, type session } from '../api';
import type { ResponseBody } from '../api-types';
import { SecondFactorStep, useCodeWhenDue } from '../components/two-factor';
import { ErrorBox, Loading, TextField, useAction, useResource } from '../components/ui';
import { linkToken, signedIn, type SecondFactorDue } from '../people';
import { useTitle } from '../title';

type Accepted = ResponseBody<'acceptInvitation', 202>;

/**
 * `/console/join#<token>`: an invitation, accepted with a password: a new one, or the person's own (the page does not
 * know which: the inviter holds the link too). With two-factor on, the person's code next; when the account requires
 * two-factor and the person has none, enrolment. The password form is offered on the invitation's word (`password`),
 * not the sign-in page's: on a new installation no one has joined yet, and the first owner joins here.
 */
export function JoinPage() {
  useTitle('Join');
  const token = linkToken();
  const invitation = useResource(() => ok(api.POST('/v1/invitations/lookup', { body: { token } })), [token]);
  const options = useResource(() => ok(api.GET('/v1/sign-in-options')), []);
  const [enrol, setEnrol] = useState<SecondFactorDue | null>(null);
  const data = invitation.data;
  return (
    <main class="signin" id="main">
      <h1>Join Intake</h1>
      {enrol ? (
        <SecondFactorStep due={enrol} onBack={() => window.location.replace('/console')} />
      ) : (
        <>
          {invitation.loading && <Loading what="the invitation" />}
          <ErrorBox error={invitation.error} />
          {data && (
            <p>
              <strong>{data.email}</strong> is invited to{' '}
              {data.project_names.length > 0 && (
                <>
                  the forms of <strong>{new Intl.ListFormat('en-GB').format(data.project_names)}</strong> at{' '}
                </>
              )}
              <strong>{data.account_name}</strong> as {data.role}.
            </p>
          )}
          {data && options.data?.sso && <JoinWithSso token={token} />}
          {data?.password && <JoinWithPassword token={token} onEnrol={setEnrol} />}
        </>
      )}
    </main>
  );
}

/** The password (and, when the answer asks for it, the authentication code) that accept the invitation. */
function JoinWithPassword({ token, onEnrol }: { token: string; onEnrol(due: SecondFactorDue): void }) {
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const code = useCodeWhenDue('join-code');
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = {
      token,
      password,
      ...(name.trim() ? { name: name.trim() } : {}),
      ...code.body,
    };
    const answer = await action.run(() => answerOf(api.POST('/v1/invitations/accept', { body })));
    if (!answer) return;
    if (answer.status === 202) {
      const due = answer.data as unknown as Accepted;
      if (due.enrolment_required) onEnrol({ csrf: due.csrf_token ?? '', enrolmentRequired: true });
      else code.ask();
      return;
    }
    signedIn(answer.data as NonNullable<typeof session.value>);
    window.location.replace('/console/forms');
  };
  return (
    <form onSubmit={submit} aria-label="Join with a password">
      <TextField id="join-name" label="Name" value={name} onValue={setName} maxLength={200} />
      <TextField
        id="join-password"
        label="Password"
        type="password"
        autocomplete="current-password"
        required
        value={password}
        onValue={setPassword}
        help="If you have an Intake password here already, enter it. If not, choose one: at least 12 characters, not a common one."
      />
      {code.field}
      <ErrorBox error={action.error} />
      <button type="submit" disabled={action.pending}>
        Join
      </button>
    </form>
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
