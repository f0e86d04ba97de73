import { useLocation } from 'preact-iso';
import { api, ApiError, loadSession, ok, session } from '../api';
import { useAction, useResource } from './ui';

/** Who is signed in: the member's e-mail, or that it is a management key, with the role. */
const signedInAs = () => (session.value ? `${session.value.email ?? 'management key'} · ${session.value.role}` : '');

/**
 * Who is signed in; for a member of more than one account, their e-mail and the accounts to switch between (a new
 * session in the chosen account, this one ends), each with the role there.
 */
export function WhoAmI() {
  const member = Boolean(session.value?.member_id);
  const accounts = useResource(
    () => (member ? ok(api.GET('/v1/sessions/accounts')) : Promise.resolve({ data: [] })),
    [session.value?.account_id],
  );
  const action = useAction();
  const { route } = useLocation();
  const list = accounts.data?.data ?? [];
  if (list.length < 2)
    return (
      <span class="account-switcher">
        <span class="muted small whoami">{signedInAs()}</span>
        <NewAccountLink />
      </span>
    );
  const current = list.find((a) => a.current);
  const switchTo = async (accountId: string) => {
    const switched = await action.run(async () => {
      await ok(api.POST('/v1/sessions/switch', { body: { account_id: accountId } }));
      return true;
    });
    if (!switched) {
      await accounts.reload();
      return;
    }
    await loadSession();
    route('/console/forms');
  };
  return (
    <span class="account-switcher">
      <span class="muted small whoami">{session.value?.email}</span>
      <label for="account-switcher" class="sr-only">
        Account
      </label>
      <select
        id="account-switcher"
        value={current?.account_id}
        disabled={action.pending}
        aria-describedby={action.error ? 'account-switcher-error' : undefined}
        onChange={(e) => void switchTo(e.currentTarget.value)}
      >
        {list.map((a) => (
          <option key={a.account_id} value={a.account_id}>
            {a.name} ({a.role})
          </option>
        ))}
      </select>
      <NewAccountLink />
      {action.error !== undefined && (
        <span id="account-switcher-error" role="alert" class="small danger-text">
          {action.error instanceof ApiError ? action.error.detail || action.error.title : 'The switch failed'}
        </span>
      )}
    </span>
  );
}

/** For an owner signed in as a person, where accounts may be made by owners: a link to make another. */
function NewAccountLink() {
  const options = useResource(() => ok(api.GET('/v1/sign-in-options')), []);
  const owner = session.value?.member_id && session.value.role === 'owner';
  if (!owner || !options.data || options.data.account_creation === 'operator') return null;
  return (
    <a class="small" href="/console/accounts/new">
      New account
    </a>
  );
}
