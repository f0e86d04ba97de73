import { type Queryable } from '@intake/shared/base';
import { recordMemberAudit } from '@intake/shared/audit';
import { activeMemberships, endSessionsOfUser, lockPersonCredentials, markEmailVerified } from './person.repository';

/** How a mailbox was proven: an identity provider's verified e-mail, or a reset link opened. */
export type Proof = 'sso' | 'reset link';

/** What proving a mailbox removed, as the audit log and the mail name it. */
export type Removed = ('password' | 'authenticator' | 'recovery codes')[];

/**
 * Whose address (docs/people.md). A person made by an invitation link has an address no one has proven: the inviter
 * holds the link too, and may have accepted it themselves. What was set up on such a person (a password, an
 * authenticator, recovery codes) is not taken as the mailbox owner's. When the mailbox is proven:
 * - by an identity provider's verified e-mail (`sso`): the password, authenticator and recovery codes are removed and
 *   every session of the person ends, before the identity's session opens;
 * - by a reset link: the authenticator and recovery codes are removed (the password is the one just chosen; the reset
 *   ends every session itself).
 * Once proven, nothing is removed again. What was removed is audited in each account of the person
 * (`member.credentials_removed`) and returned, for the reset's mail to say.
 */
export async function proveMailbox(
  trx: Queryable,
  props: { userId: string; via: Proof; now: Date; client?: { ip: string | null; userAgent: string | null } },
): Promise<Removed> {
  const { userId, via, now } = props;
  const person = await lockPersonCredentials(trx, userId);
  if (!person || person.email_verified_at) return [];
  const removed: Removed = [];
  if (via === 'sso' && person.password_hash) removed.push('password');
  if (person.totp_enabled_at) removed.push('authenticator');
  if (person.recovery_codes.length > 0) removed.push('recovery codes');
  await markEmailVerified(trx, userId, now, { password: via === 'sso', secondFactor: true });
  if (via === 'sso') await endSessionsOfUser(trx, userId);
  if (removed.length === 0) return removed;
  for (const member of await activeMemberships(trx, userId))
    await recordMemberAudit(
      trx,
      member,
      {
        action: 'member.credentials_removed',
        details: { via, removed, reason: 'set up before the e-mail address was verified' },
        ...props.client,
      },
      now,
    );
  return removed;
}
