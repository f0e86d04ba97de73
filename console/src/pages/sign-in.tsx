import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, ApiError, ok, signedOutReason, signIn } from '../api';
import { ErrorBox, useAction, useResource, useText } from '../components/ui';
import { SecondFactorStep } from '../components/two-factor';
import { signInWithPassword, type SecondFactorDue } from '../people';
import { useTitle } from '../title';

/** Why signing in with a key failed, said once: a refused key in one sentence; anything else as the problem says it. */
function SignInError({ error }: { error: unknown }) {
  if (!(error instanceof ApiError) || error.status === 0 || error.status >= 500) return <ErrorBox error={error} />;
  return (
    <p class="error" role="alert">
      {error.status === 401
        ? 'This key is not valid or has been revoked. Check that you pasted the whole management key.'
        : error.detail || error.title}
    </p>
  );
}

type InputProps = Omit<JSX.InputHTMLAttributes<HTMLInputElement>, 'value'>;

/** A label and its input, each a cell of the sign-in form's grid; the input is bound to a string. */
function LabelledInput(props: InputProps & { id: string; label: string; value: string; onValue(value: string): void }) {
  const { label, value, onValue, ...input } = props;
  return (
    <>
      <label for={input.id}>{label}</label>
      <input {...input} value={value} onInput={(e) => onValue(e.currentTarget.value)} />
    </>
  );
}

export function SignIn() {
  useTitle('Sign in');
  const options = useResource(() => ok(api.GET('/v1/sign-in-options')), []);
  return (
    <main class="signin" id="main">
      <h1>Intake</h1>
      {signedOutReason.value && (
        <p class="notice" role="status">
          {signedOutReason.value}
        </p>
      )}
      {options.data?.password && <PasswordSignIn />}
      {options.data?.sso && (
        <p>
          {/* A full navigation to the server's redirect (not the console's router, nor a form: CSP form-action). */}
          <button type="button" class="secondary" onClick={() => window.location.assign('/console/auth/login')}>
            Sign in with SSO
          </button>
        </p>
      )}
      {options.data && <KeySignIn membersExist={options.data.members} />}
      {options.data?.account_creation === 'anyone' && (
        <p>
          No account yet? <a href="/console/sign-up">Sign up</a>
        </p>
      )}
    </main>
  );
}

function PasswordSignIn() {
  const email = useText();
  const password = useText();
  const [forgot, setForgot] = useState(false);
  const [due, setDue] = useState<SecondFactorDue | null>(null);
  const { pending, error, run } = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const second = await run(() => signInWithPassword(email.value.trim(), password.value));
    if (second) setDue(second);
  };
  if (forgot) return <ForgotPassword email={email.value} onBack={() => setForgot(false)} />;
  if (due) return <SecondFactorStep due={due} onBack={() => setDue(null)} />;
  return (
    <form onSubmit={submit} aria-label="Sign in with e-mail and password">
      <LabelledInput id="email" label="Email" type="email" autocomplete="username" required {...email} />
      <LabelledInput
        id="password"
        label="Password"
        type="password"
        autocomplete="current-password"
        required
        {...password}
      />
      {error !== undefined && (
        <p class="error" role="alert">
          {error instanceof ApiError && error.status === 401
            ? 'The e-mail or password is wrong.'
            : error instanceof Error
              ? error instanceof ApiError
                ? error.detail || error.title
                : error.message
              : String(error)}
        </p>
      )}
      <button type="submit" disabled={pending}>
        Sign in
      </button>
      <button type="button" class="link" onClick={() => setForgot(true)}>
        Forgot password
      </button>
    </form>
  );
}

/** Asks for a reset link; the answer is the same whether or not the e-mail is known. */
function ForgotPassword(props: { email: string; onBack(): void }) {
  const email = useText(props.email);
  const { pending, error, run } = useAction();
  const [sent, setSent] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await run(() => ok(api.POST('/v1/password-resets', { body: { email: email.value.trim() } })))) setSent(true);
  };
  return (
    <form onSubmit={submit} aria-label="Reset password">
      <LabelledInput id="reset-email" label="Email" type="email" required {...email} />
      {sent && (
        <p class="notice" role="status">
          If this e-mail belongs to someone here, a reset link is on its way. It works once, for an hour.
        </p>
      )}
      <ErrorBox error={error} />
      <button type="submit" disabled={pending}>
        Send reset link
      </button>
      <button type="button" class="link" onClick={props.onBack}>
        Back to sign-in
      </button>
    </form>
  );
}

/**
 * The management key's form. Before anyone has joined it is the only way in, its button says "Sign in" and the page says
 * how an operator makes the first key; from then on it is for scripts and operators, its button "Sign in with key".
 */
function KeySignIn({ membersExist }: { membersExist: boolean }) {
  const [key, setKey] = useState('');
  const { pending, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(() => signIn(key.trim()));
  };
  return (
    <>
      <form onSubmit={submit} aria-label="Sign in with a management key">
        <LabelledInput
          id="key"
          label="Management key"
          name="key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          placeholder="svc_mgmt_…"
          required
          value={key}
          onValue={setKey}
        />
        <SignInError error={error} />
        <button type="submit" class={membersExist ? 'secondary' : undefined} disabled={pending}>
          {membersExist ? 'Sign in with key' : 'Sign in'}
        </button>
      </form>
      {membersExist ? (
        <p class="muted small">
          Members sign in above; a management key is for scripts and operators. A key is exchanged for a session cookie
          and is not kept in the browser.
        </p>
      ) : (
        <p class="muted small">
          No key yet? An operator creates an account and its first key with{' '}
          <code>npm run admin -- accounts create</code>, or invites its first owner with{' '}
          <code>npm run admin -- members add</code>. A key is exchanged for a session cookie and is not kept in the
          browser.
        </p>
      )}
    </>
  );
}
