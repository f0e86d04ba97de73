import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { createMailer, sha256Hex, type Db, type Queryable } from '@intake/shared/base';
import { newId, normaliseEmail, problem } from '@intake/shared/contracts';
import { roleAtLeast, type Principal, type Role } from '@intake/shared/auth';
import { type AuditEntry } from '@intake/shared/audit';
import { type Platform } from '@intake/shared/runtime';
import { findActiveKeysMintedBy, lockAccount } from './api-key.repository';
import {
  countActiveOwners,
  deleteMember,
  findInvitationByHash,
  findMember,
  insertInvitation,
  insertMember,
  isMemberEmail,
  lockMembers,
  spendInvitationsOf,
  updateMemberRole,
  type MemberRow,
} from './member.repository';
import { invitationPlace, invitationSubject, invitedTo, oneLine } from './invited-to';
import { findUserByEmail } from './person.repository';
import { revokeKeys } from './api-keys';
import { projectLimit } from '../submissions/projects';
import type { Audit } from '../platform/audit-trail';

/** An invitation link is valid this long, and once. */
export const INVITATION_TTL_MS = 7 * 86_400_000;

/** Only an owner may grant, change or take away the owner role. */
function checkOwnerRule(actor: Role, ...roles: Role[]): void {
  if (roles.includes('owner') && !roleAtLeast(actor, 'owner'))
    throw problem('forbidden', 'Only an owner can add, change or remove an owner', { required_role: 'owner' });
}

export interface Invitation {
  member: MemberRow;
  invitationUrl: string;
}

/** A fresh single-use invitation token for a member (only its sha256 is kept) and the console link carrying it. */
async function issueInvitation(trx: Queryable, baseUrl: string, memberId: string, now: Date): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await insertInvitation(trx, {
    token_hash: sha256Hex(token),
    member_id: memberId,
    expires_at: new Date(now.getTime() + INVITATION_TTL_MS),
  });
  // In the fragment: it never reaches a server log or a Referer.
  return `${baseUrl}/console/join#${token}`;
}

/**
 * Invites `email` with `role` into the account: a member in status `invited` and a link valid 7 days, once.
 * An e-mail already a member is a 409. `actor` is who invites (the audit log's actor).
 */
export async function inviteMember(props: {
  platform: Pick<Platform, 'db' | 'config' | 'logger'>;
  accountId: string;
  email: string;
  role: Role;
  /** The projects it is limited to (viewers and editors); null or undefined: the whole account. */
  projectIds?: string[] | null;
  actorRole: Role;
  audit: Audit;
  now: Date;
}): Promise<Invitation> {
  const { platform, accountId, role, now } = props;
  checkOwnerRule(props.actorRole, role);
  const projectIds = await projectLimit(platform.db, accountId, role, props.projectIds);
  const email = normaliseEmail(props.email);
  const invitation = await platform.db.transaction(async (trx) => {
    await lockMembers(trx, accountId);
    const taken = () => problem('conflict', `${email} is already a member of this account (or invited)`);
    if (await isMemberEmail(trx, accountId, email)) throw taken();
    const id = newId('member', now.getTime());
    const user = await findUserByEmail(trx, email);
    const member = { id, account_id: accountId, email, role, status: 'invited' as const, created_at: now };
    if (!(await insertMember(trx, { ...member, project_ids: projectIds, user_id: user?.id ?? null }))) throw taken();
    const invitationUrl = await issueInvitation(trx, platform.config.PUBLIC_BASE_URL, id, now);
    const details = { email, role, ...(projectIds ? { project_ids: projectIds } : {}) };
    await props.audit.record(trx, { action: 'member.invited', target: { type: 'member', id }, details });
    return { member: (await findMember(trx, accountId, id)) as MemberRow, invitationUrl };
  });
  await mailInvitation(platform, {
    email,
    role,
    url: invitation.invitationUrl,
    accountId,
    projectIds,
    inviter: props.audit.who,
  });
  return invitation;
}

/**
 * Sends a member who has not joined yet a new invitation link (mailed when SMTP is configured, and returned): the
 * links sent before stop working, so one that went astray cannot be used. A member who has joined is a 409; only an
 * owner can send an owner's invitation again.
 */
export async function resendInvitation(props: {
  platform: Pick<Platform, 'db' | 'config' | 'logger'>;
  principal: Principal;
  id: string;
  audit: Audit;
  now: Date;
}): Promise<Invitation> {
  const { platform, principal, id, now } = props;
  const accountId = principal.accountId;
  const invitation = await platform.db.transaction(async (trx) => {
    await lockMembers(trx, accountId);
    const member = await findMember(trx, accountId, id);
    if (!member) throw problem('not-found', `No member ${id}`);
    checkOwnerRule(principal.role, member.role);
    if (member.status !== 'invited') throw problem('conflict', `${member.email} has joined already`);
    await spendInvitationsOf(trx, id, now);
    const invitationUrl = await issueInvitation(trx, platform.config.PUBLIC_BASE_URL, id, now);
    const target = { type: 'member', id };
    await props.audit.record(trx, { action: 'member.invitation_resent', target });
    return { member, invitationUrl };
  });
  const { email, role, project_ids: projectIds } = invitation.member;
  await mailInvitation(platform, {
    email,
    role,
    url: invitation.invitationUrl,
    accountId,
    projectIds,
    inviter: props.audit.who,
  });
  return invitation;
}

/**
 * Sends the invitation when SMTP is configured; without it the link is only in the answer (it is not logged). The
 * mail says who invites, to which account and, for a member limited to projects, to which of its clients' forms, and
 * with what role.
 */
async function mailInvitation(
  platform: Pick<Platform, 'db' | 'config' | 'logger'>,
  props: {
    email: string;
    role: Role;
    url: string;
    accountId: string;
    projectIds: string[] | null | undefined;
    inviter: Audit['who'];
  },
): Promise<void> {
  if (!platform.config.SMTP_URL) return;
  const to = await invitedTo(platform.db, props.accountId, props.projectIds ?? null);
  const actor = props.inviter?.actor;
  const who = actor?.type === 'member' && actor.label ? actor.label : 'An admin';
  const mailer = createMailer(
    { SMTP_URL: platform.config.SMTP_URL, MAIL_FROM: platform.config.MAIL_FROM },
    platform.logger,
  );
  try {
    await mailer.send({
      to: [props.email],
      subject: invitationSubject(to),
      text:
        `${oneLine(who)} invited you to ${invitationPlace(to)} on Intake, as ${ROLE_WORDS[props.role]}. Open this link ` +
        `within 7 days to join (it works once):\n\n${props.url}\n\nIf you did not expect it, ignore this message.\n`,
    });
  } catch (err) {
    platform.logger.warn({ err }, 'the invitation e-mail could not be sent; the link was returned to the inviter');
  } finally {
    mailer.close();
  }
}

/** A role in the invitation's words. */
const ROLE_WORDS: Record<Role, string> = {
  viewer: 'a viewer (you can read and export)',
  editor: 'an editor (you can change forms, submissions and webhooks)',
  admin: 'an admin (you also manage API keys and members)',
  owner: 'an owner',
};

/** What changing or removing another member needs: who acts, on which member, for the audit log. */
interface MemberChange {
  db: Db;
  principal: Principal;
  id: string;
  audit: Audit;
  now: Date;
}

/**
 * Runs `apply` on member `id` under the account's member lock, after the checks every change to a member makes: it
 * exists, the actor may touch its role and `role` (its new one; undefined: it goes), and the account keeps an owner.
 * `apply` answers the audit entry's action and details, or undefined when nothing changed.
 */
async function changeMember(
  props: MemberChange,
  role: Role | undefined,
  apply: (trx: Knex.Transaction, member: MemberRow) => Promise<Pick<AuditEntry, 'action' | 'details'> | undefined>,
): Promise<MemberRow> {
  const { db, principal, id } = props;
  return db.transaction(async (trx) => {
    await lockMembers(trx, principal.accountId);
    const member = await findMember(trx, principal.accountId, id);
    if (!member) throw problem('not-found', `No member ${id}`);
    checkOwnerRule(principal.role, member.role, ...(role ? [role] : []));
    const stepsDown = member.role === 'owner' && member.status === 'active' && role !== 'owner';
    if (stepsDown && (await countActiveOwners(trx, principal.accountId)) <= 1)
      throw problem(
        'conflict',
        'An account always keeps one active owner: make someone who has joined owner first (an invitation does not count)',
      );
    const changed = await apply(trx, member);
    if (changed) await props.audit.record(trx, { target: { type: 'member', id }, ...changed });
    return member;
  });
}

/**
 * Changes a member's role or the projects it is limited to (`projectIds` null: the whole account; undefined: as it
 * was, while the role allows a limit); takes effect on their open sessions at once (sessions read both per request).
 */
export async function changeMemberRole(
  props: MemberChange & { role?: Role; projectIds?: string[] | null },
): Promise<MemberRow> {
  const { db, principal, id } = props;
  const current = await findMember(db, principal.accountId, id);
  if (!current) throw problem('not-found', `No member ${id}`);
  const role = props.role ?? current.role;
  const kept = role === 'viewer' || role === 'editor' ? current.project_ids : null;
  const projectIds = await projectLimit(
    db,
    principal.accountId,
    role,
    props.projectIds === undefined ? kept : props.projectIds,
  );
  const member = await changeMember(props, role, async (trx, member) => {
    await updateMemberRole(trx, id, role, projectIds);
    const sameProjects = JSON.stringify(member.project_ids) === JSON.stringify(projectIds);
    if (member.role === role && sameProjects) return undefined;
    return {
      action: 'member.role_changed',
      details: { from: member.role, to: role, ...(sameProjects ? {} : { project_ids: projectIds }) },
    };
  });
  return { ...member, role, project_ids: projectIds };
}

/**
 * Removes a member; their sessions end with the row (the foreign key cascades). With `revokeKeys`, every active key
 * they minted is revoked in the same transaction (each audited), unless that would leave the account without an
 * active management key.
 */
export async function removeMember(props: MemberChange & { revokeKeys?: boolean }): Promise<void> {
  await changeMember(props, undefined, async (trx, member) => {
    const keys = props.revokeKeys ? await revokeKeysMintedBy(trx, props, member.id) : [];
    await deleteMember(trx, props.id);
    return {
      action: 'member.removed',
      details: { email: member.email, role: member.role, ...(props.revokeKeys ? { keys_revoked: keys.length } : {}) },
    };
  });
}

async function revokeKeysMintedBy(trx: Knex.Transaction, props: MemberChange, memberId: string): Promise<string[]> {
  const accountId = props.principal.accountId;
  await lockAccount(trx, accountId);
  const keys = await findActiveKeysMintedBy(trx, accountId, memberId);
  await revokeKeys(trx, accountId, keys, props.now);
  await props.audit.record(
    trx,
    ...keys.map((key) => ({ action: 'api_key.revoked' as const, target: { type: 'api_key', id: key.id } })),
  );
  return keys.map((k) => k.id);
}

/** The member an unused, unexpired invitation token names (with its account), or undefined. */
export async function findInvitation(db: Queryable, token: string, now: Date) {
  if (token.length > 100) return undefined;
  return findInvitationByHash(db, sha256Hex(token), now);
}
