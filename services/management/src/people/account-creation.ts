import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { createMailer, sha256Hex } from '@intake/shared/base';
import { newId, normaliseEmail, problem } from '@intake/shared/contracts';
import { type Principal, type SessionInfo } from '@intake/shared/auth';
import { recordMemberAudit } from '@intake/shared/audit';
import { clientKey } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { insertAccount } from './account.repository';
import { insertMember } from './member.repository';
import {
  findPersonOfMember,
  findUserByEmail,
  insertUser,
  markEmailVerified,
  updatePasswordHash,
} from './person.repository';
import { findLiveSignUp, insertSignUpWithin, spendSignUp, type SignUpRow } from './sign-up.repository';
import { checkPasswordPolicy, hashPassword, verifyPassword } from './passwords';
import { auditFailure, openMemberSession, withSignInSlot, type Client } from './sign-in';
import { spendSecondFactor } from './two-factor';

/** The plan of an account a person makes (the operator changes it with `accounts update`). */
const NEW_ACCOUNT_PLAN = 'free';
/** A sign-up link works this long, and once. */
const SIGN_UP_TTL_MS = 24 * 3_600_000;
/** Sign-up links sent per e-mail address, and per client address, in an hour. */
const SIGN_UP_LIMITS = { perEmail: 3, perClient: 10, windowMs: 3_600_000 };

type Deps = Pick<Platform, 'db' | 'clock' | 'config' | 'logger' | 'secrets'>;

/**
 * An account owned by a person: the free plan, its default project (the database makes it), the person its active
 * owner and its contact address (quota warnings go there); `account.created` in its audit log.
 */
async function insertOwnedAccount(
  trx: Knex.Transaction,
  props: { name: string; userId: string; email: string; now: Date; method: string },
) {
  const accountId = newId('account', props.now.getTime());
  await insertAccount(trx, {
    id: accountId,
    name: props.name,
    plan_id: NEW_ACCOUNT_PLAN,
    quota_override: null,
    contact_email: props.email,
    created_at: props.now,
  });
  const member = { id: newId('member', props.now.getTime()), account_id: accountId, email: props.email };
  await insertMember(trx, { ...member, role: 'owner', status: 'active', created_at: props.now, user_id: props.userId });
  await recordMemberAudit(
    trx,
    member,
    { action: 'account.created', details: { name: props.name, method: props.method } },
    props.now,
  );
  return { account_id: accountId, name: props.name, member };
}

/**
 * An owner makes another account (ACCOUNT_CREATION `owners` or `anyone`), owned by the same person: a member's
 * session only, since an account needs a person to own it. The console then switches into it.
 */
export async function createAccountAsOwner(props: Deps & { principal: Principal; name: string }) {
  const { db, config, principal } = props;
  if (config.ACCOUNT_CREATION === 'operator')
    throw problem('forbidden', 'On this installation the operator creates accounts (ACCOUNT_CREATION=operator)');
  const person = principal.memberId ? await findPersonOfMember(db, principal.memberId) : undefined;
  if (!person)
    throw problem('forbidden', 'A person owns an account: sign in with your e-mail address to create one, not a key');
  const now = props.clock.now();
  const made = await db.transaction((trx) =>
    insertOwnedAccount(trx, { name: props.name, userId: person.user_id, email: person.email, now, method: 'owner' }),
  );
  return { account_id: made.account_id, name: made.name };
}

const signUpOff = () =>
  problem('not-found', 'Sign-up is off on this installation: an owner or the operator makes accounts here');

/**
 * Anyone asks for an account (ACCOUNT_CREATION=anyone): a link valid a day is mailed to the address, and nothing else
 * exists until it is opened. The answer is the same whether or not the address is known. At most
 * SIGN_UP_LIMITS links per address and per client address an hour (429).
 */
export async function requestSignUp(props: Deps & { email: string; accountName: string; client: Client }) {
  const { db, config, client } = props;
  if (config.ACCOUNT_CREATION !== 'anyone' || config.OIDC_ONLY) throw signUpOff();
  const email = normaliseEmail(props.email);
  const now = props.clock.now();
  // An IPv6 client by its /64, as every per-client limit counts (clientKey): one subscriber picks addresses in it freely.
  const from = client.ip ? clientKey(client.ip) : 'unknown';
  const since = new Date(now.getTime() - SIGN_UP_LIMITS.windowMs);
  const token = randomBytes(32).toString('base64url');
  // Counted and recorded at once (concurrent requests one after another), before the mail goes.
  const recorded = await insertSignUpWithin(
    db,
    {
      token_hash: sha256Hex(token),
      email,
      account_name: props.accountName,
      client: from,
      expires_at: new Date(now.getTime() + SIGN_UP_TTL_MS),
    },
    { since, perEmail: SIGN_UP_LIMITS.perEmail, perClient: SIGN_UP_LIMITS.perClient },
  );
  if (!recorded)
    throw problem(
      'rate-limited',
      'Too many sign-up links were sent: try again in an hour',
      {},
      { 'Retry-After': '3600' },
    );
  const mailer = createMailer(config, props.logger);
  try {
    await mailer.send({
      to: [email],
      // The visitor's account name stays out of the subject, which mail clients show as the operator's own words: in
      // the body it is quoted, as what someone typed.
      subject: 'Confirm your Intake account',
      text:
        `Someone (we hope you) asked for an Intake account named ${JSON.stringify(props.accountName)} with this ` +
        `address. Open this link within a day to ` +
        `confirm it and choose your password (it works once):\n\n${config.PUBLIC_BASE_URL}/console/sign-up#${token}\n\n` +
        'If it was not you, ignore this message: nothing was made.\n',
    });
  } catch (err) {
    // As with password resets: the answer does not depend on the mail; the operator sees why none arrived.
    props.logger.warn({ err }, 'the sign-up e-mail could not be sent');
  } finally {
    mailer.close();
  }
}

export type Confirmed = { kind: 'signed-in'; token: string; session: SessionInfo } | { kind: 'code-due' };

/**
 * Opens a sign-up link: the address is proven. A new person chooses a password (the policy applies); a person who
 * exists proves theirs and their second factor (`code`; without it a code is due and nothing is spent), as a sign-in,
 * with its limits. Then the link is spent, the account made with the person its owner, and a session opens there.
 */
export async function confirmSignUp(
  props: Deps & { token: string; password: string; code?: string; client: Client },
): Promise<Confirmed> {
  const { db, config, client } = props;
  if (config.ACCOUNT_CREATION !== 'anyone' || config.OIDC_ONLY) throw signUpOff();
  const now = props.clock.now();
  const signUp = await findLiveSignUp(db, sha256Hex(props.token.slice(0, 200)), now);
  if (!signUp) throw problem('link-expired', 'This sign-up link has expired or was used: sign up again');
  const checked = await withSignInSlot(db, { email: signUp.email, client, now }, async (attempt) => {
    const user = await findUserByEmail(db, signUp.email);
    let secondFactor = false;
    if (user) {
      // A wrong password or code here is a failed sign-in of that person, audited in their accounts as elsewhere.
      if (!(await verifyPassword(user.password_hash, props.password))) {
        attempt.failed();
        await auditFailure(db, user.id, client, now, 'credentials', 'sign-up');
        throw problem('unauthorized', 'This address already signs in here: give its password');
      }
      if (user.totp_enabled_at) {
        if (props.code === undefined) return undefined;
        if (!(await spendSecondFactor(props, user.id, props.code))) {
          attempt.failed();
          await auditFailure(db, user.id, client, now, 'second factor', 'sign-up');
          throw problem('unauthorized', 'The authentication code is wrong or was used already');
        }
        secondFactor = true;
      }
    } else checkPasswordPolicy(props.password, signUp.email);
    return { user, secondFactor };
  });
  if (!checked) return { kind: 'code-due' };
  const { user, secondFactor } = checked;
  const passwordHash = user ? undefined : await hashPassword(props.password);
  return db.transaction(async (trx) => {
    const userId = await spendAndPerson(trx, signUp, { userId: user?.id, passwordHash, now });
    const made = await insertOwnedAccount(trx, {
      name: signUp.account_name,
      userId,
      email: signUp.email,
      now,
      method: 'sign-up',
    });
    const opened = await openMemberSession(trx, made.member, { client, now, method: 'sign-up', secondFactor });
    return { kind: 'signed-in' as const, ...opened };
  });
}

/** Spends the link (once: a concurrent opening finds it used) and makes the person when new; their id. */
async function spendAndPerson(
  trx: Knex.Transaction,
  signUp: SignUpRow,
  props: { userId: string | undefined; passwordHash: string | undefined; now: Date },
): Promise<string> {
  if (!(await spendSignUp(trx, signUp.token_hash, props.now)))
    throw problem('link-expired', 'This sign-up link has expired or was used: sign up again');
  // The link was mailed to the address: opening it proves the mailbox (one who exists also gave their password and
  // second factor, so what they set up is theirs).
  if (props.userId) {
    await markEmailVerified(trx, props.userId, props.now);
    return props.userId;
  }
  const userId = newId('user', props.now.getTime());
  const person = { id: userId, email: signUp.email, name: null, created_at: props.now, email_verified_at: props.now };
  if (!(await insertUser(trx, person)))
    throw problem('conflict', 'This address was just signed up another way: open the link again');
  if (props.passwordHash) await updatePasswordHash(trx, userId, props.passwordHash);
  return userId;
}
