import { randomBytes } from 'node:crypto';
import {
  createMailer,
  newId,
  problem,
  recordMemberAudit,
  sha256Hex,
  type Platform,
  type SessionInfo,
} from '@intake/shared';
import { findInvitation } from './members';
import { checkPasswordPolicy, hashPassword, verifyPassword } from './passwords';
import { activeMemberships, findUserByEmail, openMemberSession, type Client } from './sign-in';

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
    const recent = await platform
      .db('password_resets')
      .where('user_id', user.id)
      .where('expires_at', '>', now)
      .count<{ n: string }[]>('token_hash as n');
    if (Number(recent[0]?.n ?? 0) >= RESETS_PER_HOUR) return;
    const token = randomBytes(32).toString('base64url');
    await platform.db('password_resets').insert({
      token_hash: sha256Hex(token),
      user_id: user.id,
      expires_at: new Date(now.getTime() + RESET_TTL_MS),
    });
    for (const m of await activeMemberships(platform.db, user.id))
      await recordMemberAudit(platform.db, m, { action: 'password.reset_requested' });
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

/** Sets a new password with a reset token (once, within the hour); every session of the person ends. */
export async function resetPassword(platform: Pick<Platform, 'db' | 'clock'>, token: string, password: string) {
  const now = platform.clock.now();
  await platform.db.transaction(async (trx) => {
    const [reset] = await trx('password_resets')
      .where('token_hash', sha256Hex(token.slice(0, 100)))
      .whereNull('used_at')
      .where('expires_at', '>', now)
      .update({ used_at: now })
      .returning('user_id');
    if (!reset) throw problem('link-expired', 'This reset link has expired or was used: ask for a new one');
    const user = await trx('users').where('id', reset.user_id).first('id', 'email');
    checkPasswordPolicy(password, user.email);
    await trx('users')
      .where('id', user.id)
      .update({ password_hash: await hashPassword(password) });
    const memberIds = trx('members').where('user_id', user.id).select('id');
    await trx('console_sessions').whereIn('member_id', memberIds).delete();
    for (const m of await activeMemberships(trx, user.id))
      await recordMemberAudit(trx, m, { action: 'password.changed', details: { via: 'reset link' } }, now);
  });
}

/** What an invitation link shows before it is accepted (nothing when it is unknown, used or expired). */
export async function describeInvitation(platform: Pick<Platform, 'db' | 'clock'>, token: string) {
  const invitation = await findInvitation(platform.db, token, platform.clock.now());
  if (!invitation) throw problem('link-expired', 'This invitation has expired or was used: ask for a new one');
  const account = await platform.db('accounts').where('id', invitation.account_id).first('name');
  const user = await findUserByEmail(platform.db, invitation.email);
  return {
    email: invitation.email as string,
    role: invitation.role as string,
    account_name: account?.name as string,
    has_password: Boolean(user?.password_hash),
  };
}

/**
 * Accepts an invitation with a password: a new person sets one (the policy applies), a person who has one already
 * (a member elsewhere) proves it. The invitation is spent in the same transaction, the member becomes active, and
 * a session opens for them.
 */
export async function acceptInvitation(props: {
  platform: Pick<Platform, 'db' | 'clock' | 'config'>;
  token: string;
  password: string;
  name?: string | null;
  client: Client;
}): Promise<{ token: string; session: SessionInfo }> {
  const { platform, client } = props;
  if (platform.config.OIDC_ONLY)
    throw problem('forbidden', 'Passwords are turned off on this installation: accept the invitation with SSO');
  const now = platform.clock.now();
  const invitation = await findInvitation(platform.db, props.token, now);
  if (!invitation) throw problem('link-expired', 'This invitation has expired or was used: ask for a new one');
  const user = await findUserByEmail(platform.db, invitation.email);
  if (user?.password_hash) {
    if (!(await verifyPassword(user.password_hash, props.password)))
      throw problem('unauthorized', 'This is not the password of the person invited');
  } else checkPasswordPolicy(props.password, invitation.email);
  const passwordHash = user?.password_hash ? undefined : await hashPassword(props.password);
  return platform.db.transaction(async (trx) => {
    const userId = await joinMember(trx, { invitation, user, name: props.name ?? null, passwordHash, now });
    if (!userId) throw problem('link-expired', 'This invitation has expired or was used: ask for a new one');
    const member = { id: invitation.id, account_id: invitation.account_id, email: invitation.email };
    await recordMemberAudit(trx, member, { action: 'member.joined', details: { method: 'password' }, ...client }, now);
    return openMemberSession(trx, member, { client, now, method: 'invitation' });
  });
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
  const spent = await trx('member_invitations')
    .where('token_hash', props.invitation.token_hash)
    .whereNull('used_at')
    .update({ used_at: props.now });
  if (spent !== 1) return undefined;
  let userId = props.user?.id;
  if (!userId) {
    const member = await trx('members').where('id', props.invitation.id).first('email');
    userId = newId('user', props.now.getTime());
    await trx('users').insert({ id: userId, email: member.email, name: props.name, created_at: props.now });
  }
  if (props.passwordHash) await trx('users').where('id', userId).update({ password_hash: props.passwordHash });
  if (props.name) await trx('users').where('id', userId).whereNull('name').update({ name: props.name });
  await trx('members').where('id', props.invitation.id).update({ status: 'active', user_id: userId });
  return userId;
}
