import { randomBytes } from 'node:crypto';
import { createMailer, sha256Hex } from '@intake/shared/base';
import { newId, problem } from '@intake/shared/contracts';
import { type SessionInfo } from '@intake/shared/auth';
import { recordMemberAudit } from '@intake/shared/audit';
import { type Platform } from '@intake/shared/runtime';
import { findInvitation } from './members';
import { proveMailbox, type Removed } from './mailbox-proof';
import { spendSecondFactor } from './two-factor';
import { checkPasswordPolicy, hashPassword, verifyPassword } from './passwords';
import { auditFailure, openHalfSession, openMemberSession, withSignInSlot, type Attempt, type Client } from './sign-in';
import { findAccountSettings } from './account.repository';
import { invitedTo } from './invited-to';
import {
  activateMember,
  findMemberById,
  releaseInvitationTry,
  reserveInvitationTry,
  spendIfTried,
  spendInvitation,
} from './member.repository';
import {
  activeMemberships,
  countLivePasswordResets,
  endSessionsOfUser,
  findUserByEmail,
  findPerson,
  insertPasswordReset,
  insertUser,
  nameUserIfUnnamed,
  spendPasswordReset,
  updatePasswordHash,
} from './person.repository';

/** A reset link is valid this long, and once. */
export const RESET_TTL_MS = 60 * 60_000;
/** Reset links a person can be sent per window (so the form cannot be used to flood a mailbox). */
const RESETS_PER_HOUR = 3;

/**
 * Sends a single-use reset link when the e-mail belongs to a person (logged instead when SMTP is unset, as all
 * mail is). Answers the same, at once, whether or not it does: the work happens after the answer.
 */
export function requestPasswordReset(
  platform: Pick<Platform, 'db' | 'config' | 'logger' | 'clock'>,
  email: string,
): void {
  const now = platform.clock.now();
  void (async () => {
    const user = await findUserByEmail(platform.db, email);
    if (!user) return;
    if ((await countLivePasswordResets(platform.db, user.id, now)) >= RESETS_PER_HOUR) return;
    const token = randomBytes(32).toString('base64url');
    await platform.db.transaction(async (trx) => {
      const expires = new Date(now.getTime() + RESET_TTL_MS);
      await insertPasswordReset(trx, { token_hash: sha256Hex(token), user_id: user.id, expires_at: expires });
      for (const m of await activeMemberships(trx, user.id))
        await recordMemberAudit(trx, m, { action: 'password.reset_requested' }, now);
    });
    const mailer = createMailer(platform.config, platform.logger);
    try {
      await mailer.send({
        to: [user.email],
        subject: 'Reset your Intake password',
        text:
          `Someone (hopefully you) asked to reset the password of ${user.email} on Intake. Open this link within an ` +
          `hour to choose a new one; it works once:\n\n${platform.config.PUBLIC_BASE_URL}/console/reset#${token}\n\n` +
          'If it was not you, ignore this message: your password stays as it is.\n',
      });
    } finally {
      mailer.close();
    }
  })().catch((err) => platform.logger.warn({ err }, 'a password reset could not be sent'));
}

/**
 * Sets a new password with a reset token (once, within the hour); every session of the person ends. The link proves
 * the mailbox: a person whose address no one had proven also loses the authenticator and recovery codes set up
 * before (docs/people.md, "Whose address"), which a mail to the address says.
 */
export async function resetPassword(
  platform: Pick<Platform, 'db' | 'clock' | 'config' | 'logger'>,
  token: string,
  password: string,
  client?: Client,
) {
  const now = platform.clock.now();
  const { email, removed } = await platform.db.transaction(async (trx) => {
    const userId = await spendPasswordReset(trx, sha256Hex(token.slice(0, 100)), now);
    const user = userId ? await findPerson(trx, userId) : undefined;
    if (!user) throw problem('link-expired', 'This reset link has expired or was used: ask for a new one');
    checkPasswordPolicy(password, user.email);
    const removed = await proveMailbox(trx, { userId: user.user_id, via: 'reset link', now, client });
    await updatePasswordHash(trx, user.user_id, await hashPassword(password));
    await endSessionsOfUser(trx, user.user_id);
    for (const m of await activeMemberships(trx, user.user_id))
      await recordMemberAudit(trx, m, { action: 'password.changed', details: { via: 'reset link' }, ...client }, now);
    return { email: user.email, removed };
  });
  if (removed.length > 0) await mailRemoved(platform, email, removed);
}

/** Tells the mailbox's owner that their reset removed an authenticator someone set up before the address was proven. */
async function mailRemoved(platform: Pick<Platform, 'config' | 'logger'>, email: string, removed: Removed) {
  const mailer = createMailer(platform.config, platform.logger);
  try {
    await mailer.send({
      to: [email],
      subject: 'Your Intake password is changed, and two-factor sign-in is off',
      text:
        `The password of ${email} on Intake was changed with a reset link. Until now no one had proven that this ` +
        `address is theirs (it joined through an invitation link, which the person who invites holds too), so the ` +
        `${removed.join(' and the ')} set up on it before were removed: whoever set them up may not have been you.\n\n` +
        `If you set up the authenticator app yourself, set it up again on the console's Security page:\n\n` +
        `${platform.config.PUBLIC_BASE_URL}/console/security\n`,
    });
  } catch (err) {
    platform.logger.warn({ err }, 'the mail about a removed authenticator could not be sent');
  } finally {
    mailer.close();
  }
}

/**
 * What an invitation link shows before it is accepted (nothing when it is unknown, used or expired). Not whether the
 * e-mail has a password here: the inviter holds the link too, and that would tell them.
 */
export async function describeInvitation(platform: Pick<Platform, 'db' | 'clock' | 'config'>, token: string) {
  const invitation = await findInvitation(platform.db, token, platform.clock.now());
  if (!invitation) throw problem('link-expired', 'This invitation has expired or was used: ask for a new one');
  const to = await invitedTo(platform.db, invitation.account_id, (invitation.project_ids as string[] | null) ?? null);
  return {
    email: invitation.email as string,
    role: invitation.role as string,
    account_name: to.account,
    project_names: to.projects,
    // The invitation is itself the reason to offer a password, whether or not anyone has joined yet.
    password: !platform.config.OIDC_ONLY,
  };
}

/** Wrong passwords (or codes) an invitation takes before it is spent: the person is then invited again. */
export const INVITATION_WRONG_TRIES = 3;

/** What accepting answered: a session (complete, or half-open until an authenticator is enrolled), or a code due. */
export type Accepted =
  | { kind: 'signed-in'; token: string; session: SessionInfo }
  | { kind: 'enrolment-due'; token: string; session: SessionInfo }
  | { kind: 'code-due' };

const expired = () => problem('link-expired', 'This invitation has expired or was used: ask for a new one');

/**
 * Accepts an invitation with a password, as a sign-in: the per-e-mail and per-address limits apply before anything
 * else. A new person sets a password (the policy applies); a person who exists proves theirs (one who has none, who
 * signs in with SSO, cannot be given one here: it is answered as a wrong password), and their second factor
 * when they have one (`code`; without it the answer is that a code is due, and nothing is spent). A wrong password
 * or code is a failed sign-in (counted, audited in the person's accounts) and a wrong try of the invitation, which
 * is spent after INVITATION_WRONG_TRIES. Then the invitation is spent, the member becomes active and a session
 * opens: half-open, able only to enrol, when the account requires two-factor and the person has no authenticator.
 */
export async function acceptInvitation(props: {
  platform: Pick<Platform, 'db' | 'clock' | 'config' | 'secrets'>;
  token: string;
  password: string;
  code?: string;
  name?: string | null;
  client: Client;
}): Promise<Accepted> {
  const { platform, client } = props;
  if (platform.config.OIDC_ONLY)
    throw problem('forbidden', 'Passwords are turned off on this installation: accept the invitation with SSO');
  const now = platform.clock.now();
  const invitation = await findInvitation(platform.db, props.token, now);
  if (!invitation) throw expired();
  const { db } = platform;
  // The sign-in limits' slot, then one of the invitation's tries, are taken before the password is checked (so
  // concurrent guesses get no more than either allows); a right answer gives both back.
  return withSignInSlot(db, { email: invitation.email, client, now }, async (attempt) => {
    const user = await findUserByEmail(db, invitation.email);
    const wrongTry = (reason: string) =>
      failedTry(platform, attempt, { invitation, userId: user?.id, client, now, reason });
    let secondFactor = false;
    if (user) {
      if (!(await reserveInvitationTry(db, invitation.token_hash, INVITATION_WRONG_TRIES))) throw expired();
      let wrong = false;
      try {
        // A person who exists proves their password. One without any (who signs in with SSO) gets no password from
        // an invitation, whose link the inviter holds too: the same answer as a wrong password (verified against
        // nothing).
        if (!(await verifyPassword(user.password_hash, props.password))) {
          wrong = true;
          throw await wrongTry('credentials');
        }
        if (user.totp_enabled_at) {
          if (props.code === undefined) return { kind: 'code-due' as const };
          if (!(await spendSecondFactor(platform, user.id, props.code))) {
            wrong = true;
            throw await wrongTry('second factor');
          }
          secondFactor = true;
        }
      } finally {
        if (!wrong) await releaseInvitationTry(db, invitation.token_hash);
      }
    } else checkPasswordPolicy(props.password, invitation.email);
    return join(platform, {
      invitation,
      user,
      secondFactor,
      name: props.name ?? null,
      password: props.password,
      client,
      now,
    });
  });
}

/** The invitation's right answer: the member joins, the person made when new, and a session opens. */
async function join(
  platform: Pick<Platform, 'db' | 'clock'>,
  props: {
    invitation: NonNullable<Awaited<ReturnType<typeof findInvitation>>>;
    user: Awaited<ReturnType<typeof findUserByEmail>>;
    secondFactor: boolean;
    name: string | null;
    password: string;
    client: Client;
    now: Date;
  },
): Promise<Accepted> {
  const { invitation, user, secondFactor, client, now } = props;
  const passwordHash = user ? undefined : await hashPassword(props.password);
  const account = await findAccountSettings(platform.db, invitation.account_id);
  const enrolmentDue = account?.require_two_factor === true && !user?.totp_enabled_at;
  return platform.db.transaction(async (trx) => {
    const userId = await joinMember(trx, { invitation, user, name: props.name, passwordHash, now });
    if (!userId) throw expired();
    const member = { id: invitation.id, account_id: invitation.account_id, email: invitation.email };
    await recordMemberAudit(trx, member, { action: 'member.joined', details: { method: 'password' }, ...client }, now);
    if (!enrolmentDue)
      return {
        kind: 'signed-in' as const,
        ...(await openMemberSession(trx, member, { client, now, method: 'invitation', secondFactor })),
      };
    return { kind: 'enrolment-due' as const, ...(await openHalfSession(trx, member, { client, now })) };
  });
}

/**
 * A wrong password or code on an invitation: a failed sign-in of the e-mail (the limits; `session.sign_in_failed`
 * in the person's accounts) and a wrong try of the invitation, which is spent at the last one allowed (audited in the
 * inviting account as `member.invitation_spent`). Answers the 401 to throw.
 */
async function failedTry(
  platform: Pick<Platform, 'db'>,
  attempt: Attempt,
  props: {
    invitation: { token_hash: string; id: string; account_id: string; email: string };
    userId: string | undefined;
    client: Client;
    now: Date;
    reason: string;
  },
) {
  const { db } = platform;
  const { invitation, client, now, reason } = props;
  attempt.failed();
  if (props.userId) await auditFailure(db, props.userId, client, now, reason, 'invitation');
  if (await spendIfTried(db, invitation.token_hash, { limit: INVITATION_WRONG_TRIES, now })) {
    const member = { id: invitation.id, account_id: invitation.account_id, email: invitation.email };
    await recordMemberAudit(
      db,
      member,
      {
        action: 'member.invitation_spent',
        details: { reason: `${INVITATION_WRONG_TRIES} wrong passwords or codes` },
        ...client,
      },
      now,
    );
    return expired();
  }
  return reason === 'second factor'
    ? problem('unauthorized', 'The authentication code is wrong or was used already')
    : problem('unauthorized', 'This is not the password of the person invited');
}

/**
 * Spends the invitation (once: a concurrent acceptance finds it used) and makes the member active, creating the
 * person when new. Returns the person's id, or undefined when the invitation was spent meanwhile.
 */
export async function joinMember(
  trx: Parameters<Parameters<Platform['db']['transaction']>[0]>[0],
  props: {
    invitation: { token_hash: string; id: string };
    user: { id: string; password_hash: string | null } | undefined;
    email?: string;
    name: string | null;
    passwordHash: string | undefined;
    now: Date;
  },
): Promise<string | undefined> {
  if (!(await spendInvitation(trx, props.invitation.token_hash, props.now))) return undefined;
  let userId = props.user?.id;
  if (!userId) {
    const member = (await findMemberById(trx, props.invitation.id))!;
    userId = newId('user', props.now.getTime());
    // Someone with this e-mail came into being meanwhile (SSO, another invitation): nothing is spent, and opening the
    // link again asks for their password, never sets one for them.
    if (!(await insertUser(trx, { id: userId, email: member.email, name: props.name, created_at: props.now })))
      throw problem('conflict', 'This e-mail address was just signed up another way: open the invitation again');
  }
  if (props.passwordHash) await updatePasswordHash(trx, userId, props.passwordHash);
  if (props.name) await nameUserIfUnnamed(trx, userId, props.name);
  await activateMember(trx, props.invitation.id, userId);
  return userId;
}
