import { useEffect, useLayoutEffect, useRef } from 'preact/hooks';
import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { loadSession, session, signOut } from './api';
import { useScrollToTop } from './location';
import { Loading } from './components/ui';
import { WhoAmI } from './components/account-switcher';
import { SignIn } from './pages/sign-in';
import { FormsPage } from './pages/forms';
import { DashboardPage } from './pages/dashboard';
import { ProjectPage } from './pages/project';
import { NewAccountPage, SignUpPage } from './pages/accounts';
import { TrashPage } from './pages/trash';
import { SearchPage } from './pages/search';
import { FormPage } from './pages/form';
import { SubmissionsPage } from './pages/submissions';
import { SubmissionPage } from './pages/submission';
import { WebhooksPage } from './pages/webhooks';
import { IntegrationsPage } from './pages/integrations';
import { DeliveryLogPage } from './pages/delivery-log';
import { ApiKeysPage } from './pages/api-keys';
import { UsagePage } from './pages/usage';
import { PrivacyPage } from './pages/privacy';
import { NotFound } from './pages/not-found';
import { Flash } from './flash';
import { askBeforeLeaving, UnsavedGuard } from './components/unsaved';
import { MembersPage } from './pages/members';
import { AuditLogPage } from './pages/audit-log';
import { SecurityPage } from './pages/security';
import { JoinPage, ResetPage } from './pages/join';
import { may, type Operation } from './people';
import { RoleGate } from './components/role-gate';

/** The navigation; a link whose page reads through an operation beyond the person's role is not shown. */
const NAV = [
  { href: '/console/dashboard', label: 'Dashboard' },
  { href: '/console/forms', label: 'Forms' },
  { href: '/console/api-keys', label: 'API keys' },
  { href: '/console/usage', label: 'Usage' },
  { href: '/console/privacy', label: 'Privacy', reads: 'findDataSubjectSubmissions' },
  { href: '/console/members', label: 'Members', reads: 'listMembers' },
  { href: '/console/audit-log', label: 'Audit log', reads: 'listAuditLog' },
  { href: '/console/security', label: 'Security' },
] as { href: string; label: string; reads?: Operation }[];

/** Which navigation link a path belongs to (a submission belongs to Forms). */
const section = (path: string) =>
  path.startsWith('/console/submissions')
    ? '/console/forms'
    : path.startsWith('/console/projects')
      ? '/console/dashboard'
      : NAV.find((n) => path.startsWith(n.href))?.href;

/** /console itself shows the forms (replacing the URL, so back does not return to it). */
function ToForms() {
  const { route } = useLocation();
  useLayoutEffect(() => {
    route('/console/forms', true);
  }, []);
  return null;
}

/** The pages for some roles, each saying so to a role below (it reads through an operation that role may not call). */
const ForAdmins = {
  ApiKeys: () => (
    <RoleGate reads="listApiKeys" title="API keys" who="Admins and owners make and revoke this account’s keys.">
      <ApiKeysPage />
    </RoleGate>
  ),
  Privacy: () => (
    <RoleGate
      reads="findDataSubjectSubmissions"
      title="Privacy"
      who="Editors and above answer data-subject requests (a member limited to clients, for those clients)."
    >
      <PrivacyPage />
    </RoleGate>
  ),
  AuditLog: () => (
    <RoleGate reads="listAuditLog" title="Audit log" who="Admins and owners read the audit log.">
      <AuditLogPage />
    </RoleGate>
  ),
};

/** The views, by URL; links under /console navigate without reloading (modified clicks open as usual). */
function Views() {
  return (
    <Router>
      <Route path="/console/forms/:id/submissions" component={SubmissionsPage} />
      <Route path="/console/forms/:id/webhooks/:webhookId" component={DeliveryLogPage} />
      <Route path="/console/forms/:id/webhooks" component={WebhooksPage} />
      <Route path="/console/forms/:id/integrations/:webhookId" component={DeliveryLogPage} />
      <Route path="/console/forms/:id/integrations" component={IntegrationsPage} />
      <Route path="/console/forms/new" component={FormPage} />
      <Route path="/console/forms/trash" component={TrashPage} />
      <Route path="/console/search" component={SearchPage} />
      <Route path="/console/forms/:id" component={FormPage} />
      <Route path="/console/submissions/:id" component={SubmissionPage} />
      <Route path="/console/dashboard" component={DashboardPage} />
      <Route path="/console/accounts/new" component={NewAccountPage} />
      <Route path="/console/projects/:id" component={ProjectPage} />
      <Route path="/console/api-keys" component={ForAdmins.ApiKeys} />
      <Route path="/console/usage" component={UsagePage} />
      <Route path="/console/privacy" component={ForAdmins.Privacy} />
      <Route path="/console/members" component={MembersPage} />
      <Route path="/console/audit-log" component={ForAdmins.AuditLog} />
      <Route path="/console/security" component={SecurityPage} />
      <Route path="/console/forms" component={FormsPage} />
      <Route path="/console" component={ToForms} />
      <Route path="/console/" component={ToForms} />
      <Route default component={NotFound} />
    </Router>
  );
}

function TopBar({ path }: { path: string }) {
  return (
    <header class="top">
      <a href="/console/forms" class="brand">
        Intake
      </a>
      <nav aria-label="Main">
        <ul>
          {NAV.filter((n) => !n.reads || may(n.reads)).map((n) => (
            <li key={n.href}>
              <a href={n.href} aria-current={section(path) === n.href ? 'page' : undefined}>
                {n.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <div class="me">
        <WhoAmI />
        <button type="button" class="secondary" onClick={() => askBeforeLeaving('Sign out', () => void signOut())}>
          Sign out
        </button>
      </div>
    </header>
  );
}

function Console() {
  useEffect(() => {
    void loadSession();
  }, []);
  const { path, url } = useLocation();
  useScrollToTop(url);
  const main = useRef<HTMLElement>(null);
  useEffect(() => {
    // After an in-console navigation, move focus to the new view, as a page load would.
    main.current?.focus({ preventScroll: true });
  }, [path]);
  // Links from an invitation or reset e-mail work signed in or not.
  if (path === '/console/join') return <JoinPage />;
  if (path === '/console/reset') return <ResetPage />;
  if (path === '/console/sign-up') return <SignUpPage />;
  if (session.value === undefined) return <Loading what="the console" />;
  if (session.value === null) return <SignIn />;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <TopBar path={path} />
      <main id="main" ref={main} tabIndex={-1}>
        <Flash />
        {/* Keyed by account: after a switch every view loads again, for the account now signed in to. */}
        <Views key={session.value.account_id} />
      </main>
      <UnsavedGuard />
    </>
  );
}

export function App() {
  return (
    <LocationProvider scope="/console">
      <Console />
    </LocationProvider>
  );
}
