import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { answerOf, api, loadSession, ok, type session } from '../api';
import { useCodeWhenDue } from '../components/two-factor';
import { ErrorBox, SubmitRow, TextField, useAction } from '../components/ui';
import { fieldErrors } from '../components/field-errors';
import { confirmAfterNavigation } from '../flash';
import { linkToken, signedIn } from '../people';
import { useTitle } from '../title';

/**
 * `/console/sign-up`: asks for an account (the address gets a link); `/console/sign-up#<token>`: the link, opened with
 * a password (a new one, or the person's own when the address signs in here already, then their code).
 */
export function SignUpPage() {
  useTitle('Sign up');
  const token = linkToken();
  return (
    <main class="signin" id="main">
      <h1>Sign up for Intake</h1>
      {token ? <ConfirmSignUp token={token} /> : <AskForAccount />}
      <p>
        <a href="/console">Back to sign-in</a>
      </p>
    </main>
  );
}

function AskForAccount() {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [sent, setSent] = useState('');
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = { email: email.trim(), account_name: name.trim() };
    if (await action.run(() => ok(api.POST('/v1/sign-ups', { body })))) setSent(body.email);
  };
  if (sent)
    return (
      <p class="ok" role="status">
        Check your e-mail: a link to confirm <strong>{sent}</strong> is on its way. It works once, within a day.
      </p>
    );
  const errors = fieldErrors(action.error);
  return (
    <form onSubmit={(e) => void submit(e)} aria-label="Sign up">
      <TextField
        id="signup-email"
        label="Email"
        type="email"
        autocomplete="email"
        required
        value={email}
        onValue={setEmail}
        error={errors['email']}
      />
      <TextField
        id="signup-account"
        label="Account name"
        help="Your company’s or your own; you can make projects in it for each client or site."
        required
        maxLength={200}
        value={name}
        onValue={setName}
        error={errors['account_name']}
      />
      <ErrorBox error={action.error} atFields={['email', 'account_name']} />
      <SubmitRow pending={action.pending}>Send me the link</SubmitRow>
    </form>
  );
}

function ConfirmSignUp({ token }: { token: string }) {
  const [password, setPassword] = useState('');
  const code = useCodeWhenDue('signup-code');
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = { token, password, ...code.body };
    const answer = await action.run(() => answerOf(api.POST('/v1/sign-ups/confirm', { body })));
    if (!answer) return;
    if (answer.status === 202) return code.ask();
    signedIn(answer.data as NonNullable<typeof session.value>);
    window.location.replace('/console/dashboard');
  };
  return (
    <form onSubmit={(e) => void submit(e)} aria-label="Confirm the sign-up">
      <TextField
        id="signup-password"
        label="Password"
        type="password"
        autocomplete="new-password"
        required
        value={password}
        onValue={setPassword}
        help="Choose one: at least 12 characters, not a common one. If this address signs in here already, enter its password."
      />
      {code.field}
      <ErrorBox error={action.error} />
      <SubmitRow pending={action.pending}>Create my account</SubmitRow>
    </form>
  );
}

/** `/console/accounts/new`: an owner makes another account, then works in it. */
export function NewAccountPage() {
  useTitle('New account');
  const { route } = useLocation();
  const [name, setName] = useState('');
  const action = useAction();
  const create = async (e: Event) => {
    e.preventDefault();
    const made = await action.run(async () => {
      const account = await ok(api.POST('/v1/accounts', { body: { name: name.trim() } }));
      await ok(api.POST('/v1/sessions/switch', { body: { account_id: account.account_id } }));
      return account;
    });
    if (!made) return;
    await loadSession();
    confirmAfterNavigation(`Account “${made.name}” created: you are its owner.`, '/console/dashboard');
    route('/console/dashboard');
  };
  return (
    <>
      <h1>New account</h1>
      <p class="muted">
        A separate account, with its own forms, members, keys and usage (on the free plan until the operator changes
        it); you are its owner and switch between your accounts with the account menu.
      </p>
      <form class="stack" onSubmit={(e) => void create(e)} aria-label="New account">
        <TextField
          id="account-name"
          label="Name"
          required
          maxLength={200}
          value={name}
          onValue={setName}
          error={fieldErrors(action.error)['name']}
        />
        <ErrorBox error={action.error} atFields={['name']} />
        <SubmitRow pending={action.pending}>Create account</SubmitRow>
      </form>
    </>
  );
}
