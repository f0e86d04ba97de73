import { sha256Hex, type Db, type Queryable } from '@intake/shared/base';
import { normaliseEmail, problem } from '@intake/shared/contracts';
import { openSession, type SessionInfo } from '@intake/shared/auth';
import { recordMemberAudit } from '@intake/shared/audit';
import { clientKey } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { markSignedIn } from './member.repository';
import { activeMemberships, findUserByEmail, type UserRow } from './person.repository';
import { releaseSignInSlot, takeSignInSlot } from './sign-in.repository';
import { verifyPassword } from './passwords';

/**
 * Failed sign-ins allowed, each within its window, then 429 until it slides. The attacker is limited, not the
 * victim: an e-mail from one client (an IPv4 address or an IPv6 /64) gets `perEmailAndClient`, a client across
 * e-mails `perClient`, and an e-mail across every client a slower ceiling, `perEmail` in an hour, which only a
 * guesser spread over many networks reaches. Nobody can lock a person out by failing five times.
 */
export const SIGN_IN_LIMITS = {
  perEmailAndClient: { limit: 5, windowMs: 15 * 60_000 },
  perClient: { limit: 30, windowMs: 15 * 60_000 },
  perEmail: { limit: 50, windowMs: 60 * 60_000 },
};
const LONGEST_WINDOW_MS = Math.max(...Object.values(SIGN_IN_LIMITS).map((l) => l.windowMs));

export interface Client {
  ip: string | null;
  userAgent: string | null;
}

/** The subjects a failure counts against, each with its limit. */
function subjects(email: string, client: Client) {
  const who = sha256Hex(normaliseEmail(email));
  const from = client.ip ? clientKey(client.ip) : 'unknown';
  return [
    { subject: `email+client:${who}/${from}`, ...SIGN_IN_LIMITS.perEmailAndClient },
    { subject: `client:${from}`, ...SIGN_IN_LIMITS.perClient },
    { subject: `email:${who}`, ...SIGN_IN_LIMITS.perEmail },
  ];
}

/** What an attempt does with its failure slot: `failed()` keeps it (a wrong password or code counts), else it is given back. */
export interface Attempt {
  failed(): void;
}

/**
 * Runs a sign-in attempt (anything that checks a password or a second factor) in a failure slot taken before it:
 * 429 rate-limited with Retry-After when the e-mail, the client or the pair has used up its failures, counting the
 * attempts still in flight. An attempt that calls `failed()` leaves its slot as the failure; any other outcome
 * (success, a code still due, an invalid new password, an error) gives it back. So N concurrent wrong guesses get
 * exactly the limit's number of answers and the rest 429, and the work is the same for an unknown e-mail.
 */
export async function withSignInSlot<T>(
  db: Queryable,
  props: { email: string; client: Client; now: Date },
  attempt: (attempt: Attempt) => Promise<T>,
): Promise<T> {
  const { email, client, now } = props;
  const list = subjects(email, client);
  const slot = await takeSignInSlot(db, {
    subjects: list.map(({ subject, limit, windowMs }) => ({
      subject,
      limit,
      since: new Date(now.getTime() - windowMs),
    })),
    at: now,
    forgetBefore: new Date(now.getTime() - LONGEST_WINDOW_MS),
  });
  if (!slot.taken) {
    const windowMs = list.find((s) => s.subject === slot.subject)?.windowMs ?? LONGEST_WINDOW_MS;
    const retryAfter = Math.max(1, Math.ceil((slot.oldest.getTime() + windowMs - now.getTime()) / 1000));
    throw problem(
      'rate-limited',
      'Too many failed sign-ins for this e-mail or from this address; try again later',
      {},
      { 'Retry-After': String(retryAfter) },
    );
  }
  let failed = false;
  try {
    return await attempt({ failed: () => void (failed = true) });
  } finally {
    if (!failed) await releaseSignInSlot(db, slot.ids);
  }
}

const wrong = () => problem('unauthorized', 'The e-mail or password is wrong');

/**
 * A failed attempt: its slot stays as the failure (see withSignInSlot); written to the audit log of every account
 * the person belongs to after the answer, so an unknown e-mail (no accounts) answers in the same time as a wrong
 * password.
 */
function failed(db: Db, attempt: Attempt, user: UserRow | undefined, client: Client, now: Date, reason: string) {
  attempt.failed();
  if (user) void auditFailure(db, user.id, client, now, reason).catch(() => undefined);
  return wrong();
}

export async function auditFailure(
  db: Db,
  userId: string,
  client: Client,
  now: Date,
  reason: string,
  method = 'password',
): Promise<void> {
  for (const m of await activeMemberships(db, userId))
    await recordMemberAudit(db, m, { action: 'session.sign_in_failed', details: { method, reason }, ...client }, now);
}

/**
 * E-mail and password sign-in. The same answer (401) and the same work (an argon2 verification) whether the e-mail
 * is unknown, has no password, or the password is wrong; failures count towards the per-e-mail and per-address
 * limits. Signs in to `accountId` when given (and a membership), else the membership used last. With a second
 * factor enrolled, or required by the account, the session opens half-way: only the second factor completes it.
 */
export async function signInWithPassword(props: {
  platform: Pick<Platform, 'db' | 'config'>;
  email: string;
  password: string;
  accountId?: string;
  client: Client;
  now: Date;
}): Promise<{ token: string; session: SessionInfo; memberId: string; accountId: string; secondFactor: boolean }> {
  const { platform, email, password, client, now } = props;
  const { db } = platform;
  if (platform.config.OIDC_ONLY)
    throw problem('forbidden', 'Passwords are turned off on this installation: sign in with SSO');
  return withSignInSlot(db, { email, client, now }, async (attempt) => {
    const user = await findUserByEmail(db, email);
    const ok = await verifyPassword(user?.password_hash, password);
    if (!user || !ok) throw failed(db, attempt, user, client, now, 'credentials');
    const memberships = await activeMemberships(db, user.id);
    const member = props.accountId ? memberships.find((m) => m.account_id === props.accountId) : memberships[0];
    if (!member) throw failed(db, attempt, user, client, now, 'no membership');
    const secondFactor = user.totp_enabled_at !== null || member.require_two_factor === true;
    const opened = secondFactor
      ? await openHalfSession(db, member, { client, now })
      : await openMemberSession(db, member, { client, now, method: 'password' });
    return { ...opened, memberId: member.id, accountId: member.account_id, secondFactor };
  });
}

/**
 * Opens a half-open session for the member: their password (or invitation) was right, and their second factor, or
 * enrolling one, is still due; it reaches nothing else, and the sign-in is recorded when it completes.
 */
export function openHalfSession(
  db: Queryable,
  member: { id: string; account_id: string },
  at: { client: Client; now: Date },
): Promise<{ token: string; session: SessionInfo }> {
  const half = { kind: 'member' as const, accountId: member.account_id, memberId: member.id, twoFactorPending: true };
  return openSession(db, half, at.now, sessionClient(at.client));
}

/** The client as a session keeps it. */
const sessionClient = (client: Client) => ({ ip: client.ip ?? undefined, userAgent: client.userAgent ?? undefined });

type SignedInMember = { id: string; account_id: string; email: string };
/** How a member signed in: from where, when, by what `method` (with any `details` for the audit entry). */
interface SignIn {
  client: Client;
  now: Date;
  method: string;
  details?: Record<string, unknown>;
  /** The person proved a second factor on the way in (a code, or SSO's identity provider). */
  secondFactor?: boolean;
}

/**
 * Opens a complete console session for the member and records the sign-in (`method`: how they proved who they
 * are). Every way in but the password's first step ends here: an invitation, SSO, the second factor, a switch.
 */
export async function openMemberSession(
  db: Queryable,
  member: SignedInMember,
  how: SignIn,
): Promise<{ token: string; session: SessionInfo }> {
  await signedIn(db, member, how);
  const self = {
    kind: 'member' as const,
    accountId: member.account_id,
    memberId: member.id,
    secondFactor: how.secondFactor === true,
  };
  return openSession(db, self, how.now, sessionClient(how.client));
}

/** Records a completed sign-in: the member's last sign-in time and `session.signed_in`. */
async function signedIn(
  db: Queryable,
  member: SignedInMember,
  { client, now, method, details }: SignIn,
): Promise<void> {
  await markSignedIn(db, member.id, now);
  await recordMemberAudit(db, member, { action: 'session.signed_in', details: { method, ...details }, ...client }, now);
}
