import { useEffect, useRef } from 'preact/hooks';
import { loadSession, session, signOut } from './api';
import { location, match, navigate } from './router';
import { Link, Loading } from './components/ui';
import { SignIn } from './pages/sign-in';
import { FormsPage } from './pages/forms';
import { FormPage } from './pages/form';
import { SubmissionsPage } from './pages/submissions';
import { SubmissionPage } from './pages/submission';
import { WebhooksPage } from './pages/webhooks';
import { DeliveryLogPage } from './pages/delivery-log';
import { ApiKeysPage } from './pages/api-keys';
import { UsagePage } from './pages/usage';

const NAV = [
  { href: '/console/forms', label: 'Forms' },
  { href: '/console/api-keys', label: 'API keys' },
  { href: '/console/usage', label: 'Usage' },
];

/** Which navigation link a path belongs to (a submission belongs to Forms). */
const section = (path: string) =>
  path.startsWith('/console/submissions') ? '/console/forms' : NAV.find((n) => path.startsWith(n.href))?.href;

/** The view for a path. */
function view(path: string) {
  let m: Record<string, string> | undefined;
  if ((m = match('/console/forms/:id/submissions', path))) return <SubmissionsPage formId={m['id'] as string} />;
  if ((m = match('/console/forms/:id/webhooks/:webhookId', path)))
    return <DeliveryLogPage formId={m['id'] as string} webhookId={m['webhookId'] as string} />;
  if ((m = match('/console/forms/:id/webhooks', path))) return <WebhooksPage formId={m['id'] as string} />;
  if ((m = match('/console/forms/new', path))) return <FormPage />;
  if ((m = match('/console/forms/:id', path))) return <FormPage formId={m['id'] as string} />;
  if ((m = match('/console/submissions/:id', path))) return <SubmissionPage id={m['id'] as string} />;
  if (match('/console/api-keys', path)) return <ApiKeysPage />;
  if (match('/console/usage', path)) return <UsagePage />;
  if (match('/console/forms', path)) return <FormsPage />;
  return undefined;
}

export function App() {
  useEffect(() => {
    void loadSession();
  }, []);
  const path = location.value.path;
  const main = useRef<HTMLElement>(null);
  useEffect(() => {
    // After an in-console navigation, move focus to the new view, as a page load would.
    main.current?.focus({ preventScroll: true });
  }, [path]);
  if (session.value === undefined) return <Loading what="the console" />;
  if (session.value === null) return <SignIn />;
  const content = view(path);
  if (!content) {
    navigate('/console/forms', { replace: true });
    return null;
  }
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link href="/console/forms" class="brand">
          Intake
        </Link>
        <nav aria-label="Main">
          <ul>
            {NAV.map((n) => (
              <li key={n.href}>
                <Link href={n.href} aria-current={section(path) === n.href ? 'page' : undefined}>
                  {n.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" class="secondary signout" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        {content}
      </main>
    </>
  );
}
