import { type Config, type Db, type Queryable } from '@intake/shared/base';
import { newId } from '@intake/shared/contracts';
import { type Role, type SessionInfo } from '@intake/shared/auth';
import { recordMemberAudit } from '@intake/shared/audit';
import { joinMember } from './credentials';
import { findInvitation } from './members';
import { insertMember, pendingInvitations } from './member.repository';
import { openMemberSession, type Client } from './sign-in';
import { activeMemberships, findUserByEmail, insertUser } from './person.repository';
import { findAccountSettings } from './account.repository';
import { proveMailbox } from './mailbox-proof';

/** A sign-in refused: said on a readable page, with no session. `detail` is text, never markup. */
export class SsoRefusal extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
  ) {
    super(detail);
  }
}

/** What the identity provider vouched for. */
export interface Identity {
  email: string;
  name: string | null;
  verified: boolean;
}

export interface SignedInBySso {
  token: string;
  session: SessionInfo;
}

interface People {
  db: Db;
  config: Config;
  client: Client;
  now: Date;
}

type Trx = Parameters<Parameters<Db['transaction']>[0]>[0];
type Member = { id: string; account_id: string; email: string };

/**
 * Opens the member's session, as password sign-in does, but complete at once: the identity provider did its own
 * second factor, so an account's `require_two_factor` does not ask for a TOTP code here (docs/decisions.md).
 */
const open = (db: Queryable, member: Member, people: People): Promise<SignedInBySso> =>
  openMemberSession(db, member, { client: people.client, now: people.now, method: 'sso', secondFactor: true });

async function joined(trx: Trx, member: Member, people: People, via: string): Promise<void> {
  await recordMemberAudit(
    trx,
    member,
    { action: 'member.joined', details: { method: 'sso', via }, ...people.client },
    people.now,
  );
}

const noMembership = (email: string) =>
  new SsoRefusal(
    403,
    'Not a member here',
    `${email} is not a member of any account on this Intake (or was removed). Ask an admin to invite you.`,
  );

/**
 * Why a verified person without an active membership is refused: an invitation that waits for them (named by its
 * account: they proved the address, and the invitation was sent to it), or no membership at all.
 */
async function refusal(people: People, email: string): Promise<SsoRefusal> {
  const waiting = await pendingInvitations(people.db, email, people.now);
  if (waiting.length === 0) return noMembership(email);
  return new SsoRefusal(
    403,
    'An invitation waits for you',
    `${email} is invited to ${waiting.join(', ')}. Open the link in the invitation e-mail sent to ${email} and ` +
      'choose “Join with SSO”; then sign in with SSO as usual.',
  );
}

/**
 * The identity proves the person's mailbox: a person whose address no one had proven (made by an invitation link)
 * loses the password, authenticator and recovery codes set up on it, and their sessions (docs/people.md, "Whose
 * address").
 */
const proven = (trx: Trx, userId: string, people: People) =>
  proveMailbox(trx, { userId, via: 'sso', now: people.now, client: people.client });

/**
 * Signs in the person with this verified e-mail to their active membership used last. Someone new to this
 * installation (no person with the e-mail yet) joins OIDC_AUTO_JOIN_ACCOUNT when it is set; a person who exists
 * but has no active membership (removed, or only invited) is refused: an invitation is joined only by its link.
 */
export async function signInIdentity(people: People, identity: Identity): Promise<SignedInBySso> {
  const { db } = people;
  const user = await findUserByEmail(db, identity.email);
  const [member] = user ? await activeMemberships(db, user.id) : [];
  if (user && member)
    return db.transaction(async (trx) => {
      await proven(trx, user.id, people);
      return open(trx, member, people);
    });
  if (user || !people.config.OIDC_AUTO_JOIN_ACCOUNT || !people.config.OIDC_AUTO_JOIN_ROLE)
    throw await refusal(people, identity.email);
  return autoJoin(people, identity, people.config.OIDC_AUTO_JOIN_ACCOUNT, people.config.OIDC_AUTO_JOIN_ROLE);
}

async function autoJoin(people: People, identity: Identity, accountId: string, role: string): Promise<SignedInBySso> {
  const { now, db } = people;
  if (!(await findAccountSettings(db, accountId)))
    throw new SsoRefusal(503, 'Single sign-on is misconfigured', 'OIDC_AUTO_JOIN_ACCOUNT names no account here.');
  return db.transaction(async (trx) => {
    const userId = newId('user', now.getTime());
    // Someone else created the person at the same moment: they are not new, so no auto-join.
    const person = { id: userId, email: identity.email, name: identity.name, created_at: now, email_verified_at: now };
    if (!(await insertUser(trx, person))) throw noMembership(identity.email);
    const member = { id: newId('member', now.getTime()), account_id: accountId, email: identity.email };
    const joinedNow = { ...member, user_id: userId, role: role as Role, status: 'active' as const, created_at: now };
    if (!(await insertMember(trx, joinedNow)))
      throw new SsoRefusal(
        403,
        'You are invited',
        'You have an invitation to this account: open its link and choose “Join with SSO”.',
      );
    await joined(trx, member, people, 'auto-join');
    return open(trx, member, people);
  });
}

/**
 * Joins an invitation with the SSO identity: only when the identity's verified e-mail is the invitation's, and once
 * (the invitation is spent in the same transaction). The person is created without a password when new, and the
 * identity proves their mailbox.
 */
export async function joinIdentity(people: People, identity: Identity, token: string): Promise<SignedInBySso> {
  const { db, now } = people;
  const expired = () =>
    new SsoRefusal(400, 'Invitation expired', 'This invitation has expired or was used: ask for a new one.');
  const invitation = await findInvitation(db, token, now);
  if (!invitation) throw expired();
  if (invitation.email !== identity.email)
    throw new SsoRefusal(
      403,
      'Another person’s invitation',
      "This invitation cannot be used by another e-mail's SSO identity: sign in to the identity provider as the person invited.",
    );
  const user = await findUserByEmail(db, identity.email);
  return db.transaction(async (trx) => {
    const userId = await joinMember(trx, { invitation, user, name: identity.name, passwordHash: undefined, now });
    if (!userId) throw expired();
    await proven(trx, userId, people);
    const member = { id: invitation.id, account_id: invitation.account_id, email: invitation.email };
    await joined(trx, member, people, 'invitation');
    return open(trx, member, people);
  });
}
