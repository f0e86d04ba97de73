import { Writable } from 'node:stream';
import pino from 'pino';
import { generate } from 'otplib';
import QRCode from 'qrcode';
import { type Role } from '@intake/shared/auth';
import { buildServiceApp } from '@intake/shared/runtime';
import { addTestMember, createTestPlatform, factories, listen, managementKeyWithRole } from '@intake/shared/testing';
import { managementService } from '../src';
import { SIGN_IN_LIMITS } from '../src/people/sign-in';
import { api } from './helpers';
import { PASSWORD, personWithPassword, sessionOf } from './people-helpers';

/** Management on a real platform whose logger (debug: request lines too) writes into `logs`. */
const logs: string[] = [];
let platform: Awaited<ReturnType<typeof createTestPlatform>>;
let server: Awaited<ReturnType<typeof listen>>;
let url: string;
beforeAll(async () => {
  platform = await createTestPlatform({ TRUST_PROXY: true, LOG_LEVEL: 'debug' });
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  const logger = pino({ level: 'debug' }, sink);
  server = await listen(buildServiceApp(managementService, { ...platform, logger }).callback());
  url = server.url;
});
afterAll(async () => {
  await server.close();
  await platform.close();
});

type Headers = Record<string, string>;

/** A code of the authenticator `steps` 30-second steps from now (1: the next one, still accepted). */
const codeAt = (secret: string, steps = 0) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });

const person = (role?: Role, accountId?: string) => personWithPassword(platform.db, role, accountId);
type Person = Awaited<ReturnType<typeof person>>;

const call = (method: string, path: string, body?: unknown, headers: Headers = {}) =>
  api(url)(method, path, body, headers);
const passwordSignIn = (p: Person, password = PASSWORD) =>
  call('POST', '/v1/sessions/password', { email: p.email, password }, p.from);
/** The half-open session of a 202 answer, as headers. */
const pendingOf = (res: Awaited<ReturnType<typeof call>>) => sessionOf(res).headers;

/** Signs in (no second factor yet), enrols and confirms: the secret, the recovery codes and the full session. */
async function enrolled(p: Person) {
  const signed = await passwordSignIn(p);
  expect(signed.status).toBe(201);
  return enrolledIn(sessionOf(signed).headers, p);
}

/** Enrols and confirms an authenticator from the session `headers` of `p`. */
async function enrolledIn(headers: Headers, p: Person) {
  const started = await call('POST', '/v1/two-factor/enrolment', undefined, { ...headers, ...p.from });
  expect(started.status).toBe(201);
  const secret = started.body.secret as string;
  const confirmed = await call(
    'POST',
    '/v1/two-factor/enrolment/confirm',
    { code: await codeAt(secret) },
    { ...headers, ...p.from },
  );
  expect(confirmed.status).toBe(200);
  return { secret, started: started.body, codes: confirmed.body.recovery_codes as string[], headers };
}

const secondStep = (headers: Headers, code: string, p: Person) =>
  call('POST', '/v1/sessions/two-factor', { code }, { ...headers, ...p.from });
const auditOf = (memberId: string) =>
  platform.db('audit_log').where('target_id', memberId).orderBy('id').select('action', 'details');

describe('enrolment', () => {
  it('shows a QR code, an otpauth URI and the key, turns on with a current code, and answers 10 recovery codes once', async () => {
    const p = await person();
    const signed = await passwordSignIn(p);
    const { headers } = sessionOf(signed);
    const started = await call('POST', '/v1/two-factor/enrolment', undefined, headers);
    expect(started.status).toBe(201);
    const secret = started.body.secret as string;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(started.body.otpauth_uri).toBe(
      `otpauth://totp/Intake:${encodeURIComponent(p.email)}?secret=${secret}&issuer=Intake`,
    );
    const svg = Buffer.from((started.body.qr_code as string).split(',')[1] ?? '', 'base64').toString();
    expect(started.body.qr_code).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(svg).toMatch(/^<svg[^>]*viewBox/);
    // The modules as data are the URI's QR code, square, with its three finder patterns in the corners.
    const rows = started.body.qr_modules as string[];
    const { modules } = QRCode.create(started.body.otpauth_uri as string, { errorCorrectionLevel: 'M' });
    expect(rows).toHaveLength(modules.size);
    expect(rows.join('')).toBe(Array.from(modules.data, (bit) => (bit ? '1' : '0')).join(''));
    for (const [r, c] of [
      [0, 0],
      [0, modules.size - 7],
      [modules.size - 7, 0],
    ] as const)
      expect(rows.slice(r, r + 7).map((row) => row.slice(c, c + 7))).toEqual([
        '1111111',
        '1000001',
        '1011101',
        '1011101',
        '1011101',
        '1000001',
        '1111111',
      ]);
    // Not in force before it is confirmed.
    expect((await call('GET', '/v1/two-factor', undefined, headers)).body).toMatchObject({ enabled: false });
    expect((await passwordSignIn(p)).status).toBe(201);
    const wrong = await call('POST', '/v1/two-factor/enrolment/confirm', { code: '000000' }, headers);
    expect([wrong.status, wrong.body.errors]).toEqual([422, [expect.objectContaining({ field: 'body/code' })]]);
    const confirmed = await call('POST', '/v1/two-factor/enrolment/confirm', { code: await codeAt(secret) }, headers);
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.session).toBeNull();
    const codes = confirmed.body.recovery_codes as string[];
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    expect(codes[0]).toMatch(/^[a-z2-7]{5}-[a-z2-7]{5}$/);
    const status = await call('GET', '/v1/two-factor', undefined, headers);
    expect(status.body).toMatchObject({ enabled: true, recovery_codes_left: 10, required: false });
    // Once: enrolling again is refused while it is on.
    expect((await call('POST', '/v1/two-factor/enrolment', undefined, headers)).status).toBe(409);
    expect((await auditOf(p.memberId)).map((e) => e.action)).toContain('member.two_factor_enabled');
  });

  it('stores the secret encrypted and the recovery codes as hashes, and logs neither', async () => {
    const p = await person();
    const { secret, codes } = await enrolled(p);
    const row = await platform.db('users').where('id', p.userId).first();
    expect(row.totp_secret).toMatch(/^v1\./);
    expect(row.totp_secret).not.toContain(secret);
    expect(platform.secrets.open(row.totp_secret)).toBe(secret);
    expect(row.recovery_codes).toHaveLength(10);
    for (const hash of row.recovery_codes as string[]) expect(hash).toMatch(/^[0-9a-f]{64}$/);
    const stored = JSON.stringify(row);
    for (const code of codes) expect(stored).not.toContain(code.replace('-', ''));
    // A wrong code and a recovery code go through the log too.
    const pending = pendingOf(await passwordSignIn(p));
    await secondStep(pending, '123456', p);
    await secondStep(pending, codes[3] as string, p);
    const logged = logs.join('');
    expect(logged).toContain('/v1/two-factor/enrolment/confirm');
    for (const s of [secret, ...codes, ...codes.map((c) => c.replace('-', ''))]) expect(logged).not.toContain(s);
  });
});

describe('password sign-in with two-factor on', () => {
  it('opens a half-open session that reaches nothing but the second step; the next code completes it', async () => {
    const p = await person();
    const { secret } = await enrolled(p);
    const signed = await passwordSignIn(p);
    expect(signed.status).toBe(202);
    expect(signed.body).toMatchObject({ two_factor_required: true, enrolment_required: false });
    const pending = pendingOf(signed);
    for (const [method, path, body] of [
      ['GET', '/v1/forms'],
      ['GET', '/v1/sessions/current'],
      ['GET', '/v1/members'],
      ['GET', '/v1/sessions'],
      ['GET', '/v1/account'],
      ['GET', '/v1/two-factor'],
      ['POST', '/v1/forms', { name: 'x' }],
      ['POST', '/v1/two-factor/enrolment'],
      ['POST', '/v1/two-factor/disable', { password: PASSWORD }],
    ] as const) {
      const res = await call(method, path, body, pending);
      expect({ path, status: res.status, problem: typeof res.body?.type }).toEqual({
        path,
        status: 401,
        problem: 'string',
      });
    }
    // The code of enrolment was spent; the next step's code is accepted (one step of drift allowed), once.
    const done = await secondStep(pending, await codeAt(secret, 1), p);
    expect(done.status).toBe(201);
    expect(done.body).toMatchObject({ member_id: p.memberId, email: p.email });
    const full = sessionOf(done).headers;
    expect((await call('GET', '/v1/forms', undefined, full)).status).toBe(200);
    // The half-open session's cookie was replaced, not promoted.
    expect((await call('GET', '/v1/forms', undefined, pending)).status).toBe(401);
    const entries = await auditOf(p.memberId);
    expect(entries).toContainEqual({
      action: 'session.signed_in',
      details: { method: 'password', two_factor: true },
    });
  });

  it('refuses a code used already within its window, and one outside the ±1 step window', async () => {
    const p = await person();
    const { secret } = await enrolled(p);
    const code = await codeAt(secret, 1);
    expect((await secondStep(pendingOf(await passwordSignIn(p)), code, p)).status).toBe(201);
    const again = await secondStep(pendingOf(await passwordSignIn(p)), code, p);
    expect(again.status).toBe(401);
    const late = await secondStep(pendingOf(await passwordSignIn(p)), await codeAt(secret, 3), p);
    expect(late.status).toBe(401);
  });

  it('counts a wrong code as a failed sign-in: audited, then 429 rate-limited with Retry-After', async () => {
    const p = await person();
    const { secret } = await enrolled(p);
    const pending = pendingOf(await passwordSignIn(p));
    for (let i = 0; i < SIGN_IN_LIMITS.perEmailAndClient.limit; i += 1) {
      const wrong = await secondStep(pending, i % 2 ? '000000' : 'not-a-code', p);
      expect([wrong.status, wrong.body.type]).toEqual([401, `${platform.config.PROBLEMS_URL}/unauthorized`]);
    }
    const limited = await secondStep(pending, await codeAt(secret, 1), p);
    expect([limited.status, limited.body.type]).toEqual([429, `${platform.config.PROBLEMS_URL}/rate-limited`]);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    const failures = (await auditOf(p.memberId)).filter((e) => e.action === 'session.sign_in_failed');
    expect(failures).toHaveLength(SIGN_IN_LIMITS.perEmailAndClient.limit);
    expect(failures[0]?.details).toEqual({ method: 'password', reason: 'second factor' });
  });

  it('accepts a recovery code once', async () => {
    const p = await person();
    const { codes } = await enrolled(p);
    const first = await secondStep(pendingOf(await passwordSignIn(p)), ` ${(codes[0] as string).toUpperCase()} `, p);
    expect(first.status).toBe(201);
    expect((await secondStep(pendingOf(await passwordSignIn(p)), codes[0] as string, p)).status).toBe(401);
    const status = await call('GET', '/v1/two-factor', undefined, sessionOf(first).headers);
    expect(status.body.recovery_codes_left).toBe(9);
  });
});

describe('turning two-factor off', () => {
  it('needs a current code, a recovery code or the password; wrong proofs are refused and counted', async () => {
    const p = await person();
    const { headers } = await enrolled(p);
    const wrong = await call('POST', '/v1/two-factor/disable', { password: 'not the password' }, headers);
    expect(wrong.status).toBe(422);
    expect((await call('POST', '/v1/two-factor/disable', { code: '000000' }, headers)).status).toBe(422);
    expect(await platform.db('users').where('id', p.userId).first('totp_enabled_at')).toEqual({
      totp_enabled_at: expect.any(Date),
    });
    expect((await call('POST', '/v1/two-factor/disable', { password: PASSWORD }, headers)).status).toBe(204);
    const row = await platform.db('users').where('id', p.userId).first();
    expect(row).toMatchObject({ totp_secret: null, totp_enabled_at: null, recovery_codes: [] });
    expect((await passwordSignIn(p)).status).toBe(201);
    expect((await auditOf(p.memberId)).map((e) => e.action)).toContain('member.two_factor_disabled');
  });
});

describe('an owner requiring two-factor', () => {
  it('is for owners who use it themselves; then a member without it can only enrol, and enrolling signs them in', async () => {
    const owner = await person('owner');
    const admin = await managementKeyWithRole(platform.db, owner.accountId, 'admin');
    const ownerSession = sessionOf(await passwordSignIn(owner)).headers;
    const before = await call('PATCH', '/v1/account', { require_two_factor: true }, ownerSession);
    expect(before.status).toBe(409);
    const { headers } = await enrolled(owner);
    const byKey = await call(
      'PATCH',
      '/v1/account',
      { require_two_factor: true },
      { authorization: `Bearer ${admin}` },
    );
    expect([byKey.status, byKey.body.type]).toEqual([403, `${platform.config.PROBLEMS_URL}/forbidden`]);
    const set = await call('PATCH', '/v1/account', { require_two_factor: true }, headers);
    expect([set.status, set.body.require_two_factor]).toEqual([200, true]);
    // A member without an authenticator: password right, then enrolment only.
    const m = await person('viewer', owner.accountId);
    const signed = await passwordSignIn(m);
    expect([signed.status, signed.body.enrolment_required]).toEqual([202, true]);
    const pending = pendingOf(signed);
    for (const path of ['/v1/forms', '/v1/sessions/current', '/v1/account'])
      expect([path, (await call('GET', path, undefined, pending)).status]).toEqual([path, 401]);
    expect((await secondStep(pending, '123456', m)).status).toBe(409);
    expect((await call('GET', '/v1/two-factor', undefined, pending)).body).toMatchObject({
      enabled: false,
      required: true,
    });
    const started = await call('POST', '/v1/two-factor/enrolment', undefined, pending);
    const confirmed = await call(
      'POST',
      '/v1/two-factor/enrolment/confirm',
      { code: await codeAt(started.body.secret) },
      pending,
    );
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.session).toMatchObject({ member_id: m.memberId, role: 'viewer' });
    const full = sessionOf({ headers: confirmed.headers, body: confirmed.body.session }).headers;
    expect((await call('GET', '/v1/forms', undefined, full)).status).toBe(200);
    expect((await call('GET', '/v1/forms', undefined, pending)).status).toBe(401);
    // Turning it off is refused while the account requires it; keys are unaffected.
    expect((await call('POST', '/v1/two-factor/disable', { password: PASSWORD }, full)).status).toBe(409);
    expect((await call('GET', '/v1/forms', undefined, { authorization: `Bearer ${admin}` })).status).toBe(200);
    const audit = await platform.db('audit_log').where({ account_id: owner.accountId }).pluck('action');
    expect(audit).toContain('account.two_factor_required');
  });

  it('keeps a person without an authenticator from switching into an account that requires one', async () => {
    const strict = await person('owner');
    await platform.db('accounts').where('id', strict.accountId).update({ require_two_factor: true });
    // The same person in a second account that does not require it, signed in there with the password alone.
    const lax = await factories.account(platform.db);
    const laxMember = await addTestMember(platform.db, lax.id, 'editor', { email: strict.email });
    await platform.db('members').where('id', laxMember.memberId).update({ last_sign_in_at: new Date() });
    const signed = await passwordSignIn(strict, PASSWORD);
    expect([signed.status, signed.body.account_id]).toEqual([201, lax.id]);
    const { headers } = sessionOf(signed);
    const refused = await call('POST', '/v1/sessions/switch', { account_id: strict.accountId }, headers);
    expect([refused.status, refused.body.detail]).toEqual([409, expect.stringContaining('requires two-factor')]);
    expect((await call('GET', '/v1/sessions/current', undefined, headers)).body.account_id).toBe(lax.id);

    // With an authenticator, every password sign-in asked for it: the switch goes through, and is audited.
    const { secret } = await enrolledIn(headers, strict);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const switched = await call('POST', '/v1/sessions/switch', { account_id: strict.accountId }, headers);
    expect(switched.status).toBe(204);
    const audit = await auditOf(strict.memberId);
    expect(audit.at(-1)).toEqual({
      action: 'session.signed_in',
      details: { method: 'switch', from_account: lax.id },
    });
  });
});
