import { useState } from 'preact/hooks';
import { api, ok, session } from '../api';
import {
  ACTIONS_COLUMN,
  Confirm,
  ErrorBox,
  Loading,
  SelectField,
  ShownOnce,
  SubmitRow,
  Table,
  TextField,
  formatTime,
  plainOptions,
  useAction,
  useConfirmed,
  useResource,
} from '../components/ui';
import { may, ROLES, type Member, type NewMember, type Role } from '../people';
import { useTitle } from '../title';
import type { Project } from '../api-types';
import { limitWords, ProjectLimit, useProjects, useReach } from '../components/projects';

/** Members of the account: everyone sees them; admins invite, change roles and remove (owners only for owners). */
export function MembersPage() {
  useTitle('Members');
  const members = useResource(() => ok(api.GET('/v1/members')), []);
  const projects = useProjects();
  const [invited, setInvited] = useState<NewMember | null>(null);
  const action = useAction();
  const role = session.value?.role as Role | undefined;
  const manage = may('inviteMember');
  const { changeRole, resend } = useMemberChanges(action, { reload: members.reload, shown: setInvited });
  // Admins see who minted each key, so removing a member can offer to revoke theirs.
  const keys = useResource(() => (manage ? ok(api.GET('/v1/api-keys')) : Promise.resolve(null)), [manage]);
  const [revokeKeys, setRevokeKeys] = useState(true);
  const keysOf = (m: Member | null) =>
    (keys.data?.data ?? []).filter(
      (k) => !k.revoked_at && k.created_by?.type === 'member' && k.created_by.id === m?.id,
    );
  const removing = useConfirmed(async (m: Member) => {
    const revoke = revokeKeys && keysOf(m).length > 0;
    await action.run(() =>
      ok(
        api.DELETE('/v1/members/{id}', { params: { path: { id: m.id }, query: revoke ? { revoke_keys: true } : {} } }),
      ),
    );
    await Promise.all([members.reload(), keys.reload()]);
  });
  const theirKeys = keysOf(removing.asking);
  return (
    <>
      <h1>Members</h1>
      <p class="muted">
        Viewers read and export; editors also change forms, submissions and webhooks; admins also manage API keys and
        members and read the audit log; owners also manage owners.
      </p>
      {invited && (
        <ShownOnce label={`Invitation link for ${invited.email} (valid 7 days, once)`} value={invited.invitation_url} />
      )}
      {manage && (
        <Invite
          owner={role === 'owner'}
          projects={projects.data}
          onInvited={async (m) => {
            setInvited(m);
            await members.reload();
          }}
        />
      )}
      <ErrorBox error={action.error ?? members.error} />
      {members.loading && !members.data && <Loading what="members" />}
      {members.data && (
        <MembersTable
          members={members.data.data}
          projects={projects.data}
          manage={manage}
          owner={role === 'owner'}
          onRole={changeRole}
          onRemove={removing.ask}
          onResend={(m) => void resend(m)}
        />
      )}
      <Confirm
        open={removing.asking !== null}
        title="Remove this member?"
        confirmLabel="Remove member"
        onConfirm={removing.confirm}
        onCancel={removing.cancel}
      >
        <p>{removing.asking?.email} loses access at once; their open sessions end.</p>
        {theirKeys.length > 0 && (
          <label class="check">
            <input type="checkbox" checked={revokeKeys} onChange={(e) => setRevokeKeys(e.currentTarget.checked)} />
            Also revoke the {theirKeys.length === 1 ? 'API key' : `${theirKeys.length} API keys`} they created (
            {theirKeys.map((k) => k.name ?? `${k.prefix}…`).join(', ')})
          </label>
        )}
      </Confirm>
    </>
  );
}

/** A member's role changed, and an invitation sent again (its new link shown through `shown`). */
function useMemberChanges(
  action: ReturnType<typeof useAction>,
  props: { reload(): Promise<unknown>; shown(m: NewMember): void },
) {
  return {
    changeRole: async (m: Member, to: Role) => {
      await action.run(() => ok(api.PATCH('/v1/members/{id}', { params: { path: { id: m.id } }, body: { role: to } })));
      await props.reload();
    },
    resend: async (m: Member) => {
      const sent = await action.run(() =>
        ok(api.POST('/v1/members/{id}/invitation', { params: { path: { id: m.id } } })),
      );
      if (sent) props.shown(sent);
    },
  };
}

/** The roles one may give: owners may make owners, admins the other roles. */
const roleOptions = (owner: boolean) => plainOptions(ROLES.filter((r) => owner || r !== 'owner'));

/** Viewers and editors may be limited to projects; admins and owners have the whole account. */
const limitable = (role: Role) => role === 'viewer' || role === 'editor';

function Invite(props: { owner: boolean; projects: Project[] | undefined; onInvited(m: NewMember): Promise<void> }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const reach = useReach();
  const action = useAction();
  const choosing = limitable(role) && (props.projects?.length ?? 0) > 1;
  const submit = async (e: Event) => {
    e.preventDefault();
    const project_ids = reach.projectIds(choosing);
    if (project_ids === undefined) return;
    const m = await action.run(() => ok(api.POST('/v1/members', { body: { email: email.trim(), role, project_ids } })));
    if (!m) return;
    setEmail('');
    reach.reset();
    await props.onInvited(m);
  };
  return (
    <form class="stack" aria-label="Invite a member" onSubmit={submit}>
      <div class="inline-form">
        <TextField id="invite-email" label="Email" type="email" required grow value={email} onValue={setEmail} />
        <SelectField id="invite-role" label="Role" value={role} options={roleOptions(props.owner)} onValue={setRole} />
      </div>
      {choosing && <ProjectLimit id="invite-reach" projects={props.projects} reach={reach} what="they" />}
      <SubmitRow pending={action.pending}>Invite</SubmitRow>
      <ErrorBox error={action.error} />
    </form>
  );
}

function MembersTable(props: {
  members: Member[];
  projects: Project[] | undefined;
  manage: boolean;
  owner: boolean;
  onRole(m: Member, role: Role): void;
  onRemove(m: Member): void;
  onResend(m: Member): void;
}) {
  const mayChange = (m: Member) => props.manage && (props.owner || m.role !== 'owner');
  return (
    <Table
      label="Members"
      reflow
      columns={['Email', 'Name', 'Role', 'Projects', 'Status', 'Last sign-in', ACTIONS_COLUMN]}
    >
      {props.members.map((m) => (
        <tr key={m.id}>
          <td>
            {m.email}
            {m.id === session.value?.member_id && <span class="muted small"> (you)</span>}
          </td>
          <td>{m.name ?? '—'}</td>
          <td>
            {mayChange(m) ? (
              <select
                aria-label={`Role of ${m.email}`}
                value={m.role}
                onChange={(e) => props.onRole(m, e.currentTarget.value as Role)}
              >
                {roleOptions(props.owner).map(([r]) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
            ) : (
              m.role
            )}
          </td>
          <td>{limitWords(props.projects, m.project_ids)}</td>
          <td>{m.status}</td>
          <td class="nowrap">{formatTime(m.last_sign_in_at)}</td>
          <td>
            {mayChange(m) && m.status === 'invited' && (
              <button type="button" class="link" onClick={() => props.onResend(m)}>
                Send invitation again <span class="sr-only">to {m.email}</span>
              </button>
            )}{' '}
            {mayChange(m) && (
              <button type="button" class="link danger-text" onClick={() => props.onRemove(m)}>
                Remove <span class="sr-only">{m.email}</span>
              </button>
            )}
          </td>
        </tr>
      ))}
    </Table>
  );
}
