import { randomBytes } from 'node:crypto';
import { generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';
import { sha256Hex, type Queryable } from '@intake/shared/base';
import { problem, toTimestamp } from '@intake/shared/contracts';
import { recordMemberAudit } from '@intake/shared/audit';
import { type Platform } from '@intake/shared/runtime';
import { verifyPassword } from './passwords';
import { auditFailure, withSignInSlot, type Client } from './sign-in';
import { findAccountSettings } from './account.repository';
import {
  activeMemberships,
  findPerson,
  findPersonOfMember,
  spendRecoveryCodeHash,
  spendTotpStep,
  updateSecondFactor,
  type PersonRow,
} from './person.repository';

/**
 * TOTP (RFC 6238 defaults: SHA-1, 6 digits, 30-second steps, which every authenticator app reads) through otplib.
 * A code is accepted one step either side of now, for clocks that drift, and only once: the step of the last code
 * accepted is kept, and no code of that step or an earlier one is accepted again.
 */
const PERIOD_S = 30;
const ISSUER = 'Intake';
export const RECOVERY_CODE_COUNT = 10;

type PlatformLike = Pick<Platform, 'db' | 'secrets' | 'clock'>;

/** Whose second factor: the member of the session, their person, and the account the session is in. */
export interface Who {
  memberId: string;
  accountId: string;
}

async function personOf(db: Queryable, memberId: string): Promise<PersonRow> {
  const person = await findPersonOfMember(db, memberId);
  if (!person) throw problem('unauthorized', 'The console session has expired or was ended; sign in again');
  return person;
}

/** Spaces and dashes are how people copy codes; neither is part of one. */
const normalise = (code: string) => code.replace(/[\s-]/g, '').toLowerCase();
const isTotpShape = (code: string) => /^\d{6}$/.test(normalise(code));

/** Ten codes of 10 base32 characters (50 bits each), grouped 5-5 for reading aloud. */
function newRecoveryCodes(): string[] {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const chars = [...randomBytes(10)].map((b) => alphabet[b % 32]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/**
 * Checks a TOTP code against the person's secret and spends its step: the update only succeeds if no code of this
 * step or a later one was accepted before, so two requests racing with the same code cannot both pass.
 */
async function spendTotp(platform: PlatformLike, person: PersonRow, code: string, now: Date): Promise<boolean> {
  if (!person.totp_secret || !isTotpShape(code)) return false;
  const secret = platform.secrets.open(person.totp_secret);
  const last = person.totp_last_step === null ? undefined : Number(person.totp_last_step);
  const result = await verify({
    secret,
    token: normalise(code),
    epoch: Math.floor(now.getTime() / 1000),
    epochTolerance: PERIOD_S,
    ...(last === undefined ? {} : { afterTimeStep: last }),
  }).catch(() => ({ valid: false as const }));
  if (!result.valid || !('timeStep' in result)) return false;
  const step = result.timeStep;
  return spendTotpStep(platform.db, person.user_id, step);
}

/** Spends a recovery code: removed from the stored hashes in one statement, so it works once. */
async function spendRecoveryCode(db: Queryable, person: PersonRow, code: string): Promise<boolean> {
  const hash = sha256Hex(normalise(code));
  if (!person.recovery_codes.includes(hash)) return false;
  return spendRecoveryCodeHash(db, person.user_id, hash);
}

/** The person's second factor as the console shows it, and whether this account requires one. */
export async function twoFactorStatus(db: Queryable, who: Who) {
  const person = await personOf(db, who.memberId);
  const account = await findAccountSettings(db, who.accountId);
  return {
    enabled: person.totp_enabled_at !== null,
    enabled_at: person.totp_enabled_at ? toTimestamp(person.totp_enabled_at) : null,
    recovery_codes_left: person.totp_enabled_at ? person.recovery_codes.length : 0,
    required: account?.require_two_factor === true,
  };
}

/**
 * Starts enrolment: a new secret, kept encrypted and not yet in force, shown once as an otpauth:// URI, its QR
 * code (an SVG, and its modules as data) and the key itself for typing in. Starting again replaces a secret that was never confirmed.
 */
export async function startEnrolment(platform: PlatformLike, who: Who) {
  const person = await personOf(platform.db, who.memberId);
  if (person.totp_enabled_at)
    throw problem('conflict', 'Two-factor is already on: turn it off first to enrol another authenticator');
  const secret = generateSecret();
  await updateSecondFactor(platform.db, person.user_id, {
    totp_secret: platform.secrets.seal(secret),
    totp_last_step: null,
  });
  const uri = generateURI({ issuer: ISSUER, label: person.email, secret });
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return {
    secret,
    otpauth_uri: uri,
    qr_code: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`,
    qr_modules: qrModules(uri),
  };
}

/** The URI's QR code as data, a row of `0`/`1` per line of modules: what a client draws without reading markup. */
function qrModules(uri: string): string[] {
  const { modules } = QRCode.create(uri, { errorCorrectionLevel: 'M' });
  return Array.from({ length: modules.size }, (_, row) =>
    Array.from({ length: modules.size }, (_, col) => (modules.get(row, col) ? '1' : '0')).join(''),
  );
}

async function auditEach(
  db: Queryable,
  userId: string,
  action: 'enabled' | 'disabled' | 'recovery_codes_renewed',
  client: Client,
  now: Date,
) {
  for (const m of await activeMemberships(db, userId))
    await recordMemberAudit(
      db,
      m,
      {
        action: action === 'recovery_codes_renewed' ? `member.${action}` : `member.two_factor_${action}`,
        details: { method: 'totp' },
        ...client,
      },
      now,
    );
}

/** Confirms enrolment with a current code: two-factor is on, and ten recovery codes are answered this once. */
export async function confirmEnrolment(platform: PlatformLike, who: Who, code: string, client: Client) {
  const now = platform.clock.now();
  const person = await personOf(platform.db, who.memberId);
  if (person.totp_enabled_at) throw problem('conflict', 'Two-factor is already on');
  if (!person.totp_secret) throw problem('conflict', 'Start enrolment first: there is no authenticator to confirm');
  if (!(await spendTotp(platform, person, code, now)))
    throw problem('validation-failed', 'body/code is not the current code of the authenticator', {
      errors: [{ field: 'body/code', message: 'is not the current code of the authenticator' }],
    });
  const codes = newRecoveryCodes();
  await platform.db.transaction(async (trx) => {
    const hashes = codes.map((c) => sha256Hex(normalise(c)));
    await updateSecondFactor(trx, person.user_id, { totp_enabled_at: now, recovery_codes: hashes });
    await auditEach(trx, person.user_id, 'enabled', client, now);
  });
  return codes;
}

/**
 * Proves the person is at the keyboard with a current code, a recovery code or the password, before a change to
 * their second factor. Wrong proofs count as failed sign-ins (the same limits), since this is one more place to
 * guess them.
 */
async function proveIdentity(
  platform: PlatformLike,
  person: PersonRow,
  proof: { code?: string; password?: string },
  client: Client,
  now: Date,
): Promise<void> {
  await withSignInSlot(platform.db, { email: person.email, client, now }, async (attempt) => {
    const ok = proof.code
      ? (await spendTotp(platform, person, proof.code, now)) ||
        (await spendRecoveryCode(platform.db, person, proof.code))
      : await verifyPassword(person.password_hash, proof.password ?? '');
    if (ok) return;
    attempt.failed();
    throw problem('validation-failed', 'The code or password is wrong', {
      errors: [{ field: proof.code ? 'body/code' : 'body/password', message: 'is wrong' }],
    });
  });
}

/** Turns two-factor off, proven (see proveIdentity). Refused while an account of the person requires two-factor. */
export async function disableTwoFactor(
  platform: PlatformLike,
  who: Who,
  proof: { code?: string; password?: string },
  client: Client,
): Promise<void> {
  const now = platform.clock.now();
  const person = await personOf(platform.db, who.memberId);
  if (!person.totp_enabled_at) throw problem('conflict', 'Two-factor is not on');
  const requiring = (await activeMemberships(platform.db, person.user_id)).filter((m) => m.require_two_factor);
  if (requiring.length > 0)
    throw problem('conflict', `${requiring.map((m) => m.account_name).join(', ')} requires two-factor sign-in`);
  await proveIdentity(platform, person, proof, client, now);
  await platform.db.transaction(async (trx) => {
    const off = { totp_secret: null, totp_enabled_at: null, totp_last_step: null, recovery_codes: [] };
    await updateSecondFactor(trx, person.user_id, off);
    await auditEach(trx, person.user_id, 'disabled', client, now);
  });
}

/** Ten new recovery codes, proven (see proveIdentity): the old ones stop working. Answered this once. */
export async function renewRecoveryCodes(
  platform: PlatformLike,
  who: Who,
  proof: { code?: string; password?: string },
  client: Client,
): Promise<string[]> {
  const now = platform.clock.now();
  const person = await personOf(platform.db, who.memberId);
  if (!person.totp_enabled_at) throw problem('conflict', 'Two-factor is not on');
  await proveIdentity(platform, person, proof, client, now);
  const codes = newRecoveryCodes();
  await platform.db.transaction(async (trx) => {
    await updateSecondFactor(trx, person.user_id, { recovery_codes: codes.map((c) => sha256Hex(normalise(c))) });
    await auditEach(trx, person.user_id, 'recovery_codes_renewed', client, now);
  });
  return codes;
}

/**
 * The second step of a password sign-in: a current TOTP code or an unused recovery code. Limited and counted as
 * the password is (a wrong code is a failed sign-in); answers whether it was right.
 */
export async function checkSecondFactor(
  platform: PlatformLike,
  who: Who,
  code: string,
  client: Client,
): Promise<boolean> {
  const now = platform.clock.now();
  const person = await personOf(platform.db, who.memberId);
  if (!person.totp_enabled_at)
    throw problem('conflict', 'This account requires two-factor: enrol an authenticator to finish signing in');
  return withSignInSlot(platform.db, { email: person.email, client, now }, async (attempt) => {
    if ((await spendTotp(platform, person, code, now)) || (await spendRecoveryCode(platform.db, person, code)))
      return true;
    attempt.failed();
    await auditFailure(platform.db, person.user_id, client, now, 'second factor');
    return false;
  });
}

/**
 * Whether `code` is the person's current TOTP code or an unused recovery code, spending it when it is. For a sign-in
 * that is not a console session's second step (accepting an invitation); the caller counts a wrong one.
 */
export async function spendSecondFactor(platform: PlatformLike, userId: string, code: string): Promise<boolean> {
  const person = await findPerson(platform.db, userId);
  if (!person?.totp_enabled_at) return false;
  return (
    (await spendTotp(platform, person, code, platform.clock.now())) ||
    (await spendRecoveryCode(platform.db, person, code))
  );
}
