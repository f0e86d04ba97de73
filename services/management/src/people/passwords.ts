import { hash, verify } from '@node-rs/argon2';
import { dictionary } from '@zxcvbn-ts/language-common';
import { problem } from '@intake/shared/contracts';

/** The shortest password accepted. */
export const MIN_PASSWORD_LENGTH = 12;
const MAX_PASSWORD_LENGTH = 256;
/** Argon2id (the library's Algorithm.Argon2id, a const enum that isolated builds cannot read). */
const ARGON2ID = 2;
// OWASP's argon2id floor is 19 MiB, 2 passes; this is above it and takes ~50 ms here.
const OPTIONS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

/**
 * The most common passwords seen in breaches, as zxcvbn-ts ships them (about 49,000, from the leaked-password
 * corpora it is built on), lower-cased: a password that is one of them, whatever its case, is refused.
 */
let common: Set<string> | undefined;
function commonPasswords(): Set<string> {
  common ??= new Set((dictionary['passwords-common'] as string[]).map((p) => p.toLowerCase()));
  return common;
}

const refuse = (message: string) =>
  problem('validation-failed', `body/password ${message}`, { errors: [{ field: 'body/password', message }] });

/** Throws 422 naming `body/password` when it is too short, too long, the e-mail itself, or a common breached password. */
export function checkPasswordPolicy(password: string, email?: string): void {
  if ([...password].length < MIN_PASSWORD_LENGTH) throw refuse(`must be at least ${MIN_PASSWORD_LENGTH} characters`);
  if (password.length > MAX_PASSWORD_LENGTH) throw refuse(`must be at most ${MAX_PASSWORD_LENGTH} characters`);
  const lower = password.toLowerCase();
  if (commonPasswords().has(lower))
    throw refuse('is one of the most common passwords found in breaches; choose another');
  if (email && lower === email.toLowerCase()) throw refuse('must not be the e-mail address');
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS as never);
}

/** A hash of nothing anyone knows, verified against when the e-mail is unknown so both answers take as long. */
let dummy: Promise<string> | undefined;

/** True when `password` matches `passwordHash`; with no hash, the same work against a dummy, and false. */
export async function verifyPassword(passwordHash: string | null | undefined, password: string): Promise<boolean> {
  if (password.length > MAX_PASSWORD_LENGTH) password = password.slice(0, MAX_PASSWORD_LENGTH);
  if (!passwordHash) {
    dummy ??= hashPassword(`dummy-${Math.random()}-${Date.now()}`);
    await verify(await dummy, password).catch(() => false);
    return false;
  }
  return verify(passwordHash, password).catch(() => false);
}
