import { useState } from 'preact/hooks';
import { ApiError, signedOutReason, signIn } from '../api';
import { ErrorBox, useAction } from '../components/ui';
import { useTitle } from '../title';

/** Why signing in failed, said once: a refused key in one sentence; anything else as the problem says it. */
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

export function SignIn() {
  useTitle('Sign in');
  const [key, setKey] = useState('');
  const { pending, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(() => signIn(key.trim()));
  };
  return (
    <main class="signin" id="main">
      <h1>Intake</h1>
      <p class="muted">Sign in with a management key of your account.</p>
      {signedOutReason.value && !error && (
        <p class="notice" role="status">
          {signedOutReason.value}
        </p>
      )}
      <form onSubmit={submit}>
        <label for="key">Management key</label>
        <input
          id="key"
          name="key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          placeholder="svc_mgmt_…"
          required
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
        />
        <SignInError error={error} />
        <button type="submit" disabled={pending}>
          Sign in
        </button>
      </form>
      <p class="muted small">
        No key yet? An operator creates an account and its first key with <code>npm run admin -- accounts create</code>.
        The key is exchanged for a session cookie and is not kept in the browser.
      </p>
    </main>
  );
}
