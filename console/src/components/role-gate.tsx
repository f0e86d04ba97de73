import type { ComponentChildren } from 'preact';
import { session } from '../api';
import { may, OPERATION_ROLES, type Operation } from '../people';
import { useTitle } from '../title';

/**
 * A page whose reading needs more than the person's role (reached by a link or an old bookmark: the navigation does
 * not offer it) says so, and what to do, instead of loading and failing with 403.
 */
export function RoleGate(props: { reads: Operation; title: string; who: string; children: ComponentChildren }) {
  const allowed = may(props.reads);
  useTitle(allowed ? undefined : props.title);
  if (allowed) return <>{props.children}</>;
  return (
    <>
      <h1>{props.title}</h1>
      <p class="notice">
        {props.who} Your role in this account is {session.value?.role}; this page needs {OPERATION_ROLES[props.reads]}{' '}
        or above. An owner can change your role on the Members page.
      </p>
    </>
  );
}
