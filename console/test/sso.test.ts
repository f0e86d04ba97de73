import type { Browser, Page } from 'playwright-core';
import { newId } from '@intake/shared/contracts';
import { buildServiceApp } from '@intake/shared/runtime';
import { addTestMember, factories, freePort, listen, uniqueEmail } from '@intake/shared/testing';
import { managementService } from '@intake/management';
import { launchChromium } from './browser';
import { callback, CLIENT, startProvider, throughProvider } from './oidc';
import { checkView } from './owner';
import { startStack } from './stack';

/**
 * Single sign-on over OpenID Connect against a real provider (`oidc-provider` on loopback): in Chromium through the
 * real redirects, and over HTTP for each way a sign-in must be refused (a readable page, no session).
 */
jest.setTimeout(90_000);

const ALLOWED = 'people.example,acme.example';

interface Ctx {
  provider: Awaited<ReturnType<typeof startProvider>>;
  stack: Awaited<ReturnType<typeof startStack>>;
  account: { id: string; managementKey: string };
  autoJoinAccount: string;
}

function useSsoStack(): Ctx {
  const c = {} as Ctx;
  beforeAll(async () => {
    c.provider = await startProvider();
    c.autoJoinAccount = newId('account');
    c.stack = await startStack({
      OIDC_ISSUER: c.provider.issuer,
      OIDC_CLIENT_ID: CLIENT.id,
      OIDC_CLIENT_SECRET: CLIENT.secret,
      OIDC_ALLOWED_DOMAINS: ALLOWED,
      OIDC_AUTO_JOIN_ACCOUNT: c.autoJoinAccount,
      OIDC_AUTO_JOIN_ROLE: 'editor',
    });
    await c.provider.register(`${c.stack.url}/console/auth/callback`);
    const { db } = c.stack.platform;
    c.account = await factories.account(db, { name: 'Acme' });
    // The auto-join account must have the id the configuration names: a copy of a factory-made one.
    const row = await db('accounts')
      .where('id', (await factories.account(db, { name: 'Single tenant' })).id)
      .first();
    await db('accounts').insert({ ...row, id: c.autoJoinAccount });
  });
  afterAll(async () => {
    await c.stack?.close();
    await c.provider?.close();
  });
  return c;
}

const sessionsOf = async (c: Ctx, memberId: string) =>
  Number((await c.stack.platform.db('console_sessions').where('member_id', memberId).count('* as n'))[0]?.n);

const mgmt = (c: Ctx, method: string, p: string, body?: unknown) =>
  fetch(`${c.stack.url}${p}`, {
    method,
    headers: { authorization: `Bearer ${c.account.managementKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const c = useSsoStack();

describe('console: single sign-on in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(() => browser?.close());

  async function loginAtProvider(page: Page, login: string) {
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('any');
    await page.locator('button[type="submit"]').click();
  }

  it('offers Sign in with SSO, and signs a member in through the provider with a session like a password one', async () => {
    const { memberId, email } = await addTestMember(c.stack.platform.db, c.account.id, 'owner');
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${c.stack.url}/console`);
    await page.getByRole('button', { name: 'Sign in with SSO' }).waitFor();
    await checkView(page, 'sign-in-sso', /^Sign in · Intake console$/);
    await page.getByRole('button', { name: 'Sign in with SSO' }).click();
    await loginAtProvider(page, email);
    await page.getByRole('heading', { name: 'Forms', exact: true }).waitFor();
    await page.getByText(`${email} · owner`).waitFor();
    const cookies = await page.context().cookies(c.stack.url);
    expect(cookies.find((k) => k.name === 'intake_session')).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(cookies.find((k) => k.name === 'intake_sso')).toBeUndefined();
    const audit = await c.stack.platform
      .db('audit_log')
      .where({ account_id: c.account.id, action: 'session.signed_in' })
      .where('actor_id', memberId);
    expect(audit.map((a: { details: unknown }) => a.details)).toEqual([{ method: 'sso' }]);
    await page.context().close();
  });

  it('shows a refused sign-in as a readable page that leads back to sign-in', async () => {
    const page = await (await browser.newContext()).newPage();
    const res = await page.goto(`${c.stack.url}/console/auth/callback?state=forged&code=forged`);
    expect(res?.status()).toBe(400);
    await page.getByRole('heading', { name: 'This sign-in cannot be completed' }).waitFor();
    await checkView(page, 'sso-refused', /^This sign-in cannot be completed · Intake$/);
    await page.getByRole('link', { name: 'Back to sign-in' }).click();
    await page.getByRole('button', { name: 'Sign in with SSO' }).waitFor();
    await page.context().close();
  });

  it('joins an invitation with SSO: the person is created without a password and signed in', async () => {
    const email = uniqueEmail('invited');
    const invited = await mgmt(c, 'POST', '/v1/members', { email, role: 'viewer' });
    const { id, invitation_url } = (await invited.json()) as { id: string; invitation_url: string };
    const page = await (await browser.newContext()).newPage();
    await page.goto(invitation_url);
    await page.getByRole('button', { name: 'Join with SSO' }).click();
    await loginAtProvider(page, email);
    await page.getByText(`${email} · viewer`).waitFor();
    const { db } = c.stack.platform;
    expect(await db('members').where({ id }).first('status')).toEqual({ status: 'active' });
    expect(await db('users').where({ email }).first('password_hash', 'name')).toEqual({
      password_hash: null,
      name: `Person ${email.split('@')[0]}`,
    });
    const joined = await db('audit_log').where({ action: 'member.joined' }).where('target_id', id);
    expect(joined.map((a: { details: unknown }) => a.details)).toEqual([{ method: 'sso', via: 'invitation' }]);
    await page.context().close();
  });
});

/** A refusal: a readable page with this status and text, and no session cookie. */
function expectRefused(out: Awaited<ReturnType<typeof callback>>, status: number, text: string | RegExp) {
  expect(out.res.status).toBe(status);
  expect(out.res.headers.get('content-type')).toMatch(/^text\/html/);
  expect(out.html).toMatch(text);
  expect(out.session).toBeUndefined();
}

describe('console: single sign-on refusals over HTTP', () => {
  it('signs in over HTTP as well (the baseline the refusals differ from)', async () => {
    const { memberId, email } = await addTestMember(c.stack.platform.db, c.account.id, 'editor');
    const { callback: url, sso } = await throughProvider(c.stack.url, email);
    const out = await callback(url, sso);
    expect(out.res.status).toBe(200);
    expect(out.html).toContain('<meta http-equiv="refresh" content="0;url=/console">');
    expect(out.session).toBeDefined();
    const current = await fetch(`${c.stack.url}/v1/sessions/current`, {
      headers: { cookie: `intake_session=${out.session}` },
    });
    expect(await current.json()).toMatchObject({ member_id: memberId, email, role: 'editor' });
  });

  it('refuses a wrong or missing state, and a callback without the flow cookie', async () => {
    const { memberId, email } = await addTestMember(c.stack.platform.db, c.account.id, 'editor');
    const { callback: url, sso } = await throughProvider(c.stack.url, email);
    const wrong = new URL(url);
    wrong.searchParams.set('state', 'not-the-state');
    expectRefused(await callback(wrong, sso), 400, 'This sign-in cannot be completed');
    const missing = new URL(url);
    missing.searchParams.delete('state');
    expectRefused(await callback(missing, sso), 400, 'This sign-in cannot be completed');
    expectRefused(await callback(url, ''), 400, 'was not started in this browser');
    expect(await sessionsOf(c, memberId)).toBe(0);
  });

  it('refuses a replayed code', async () => {
    const { memberId, email } = await addTestMember(c.stack.platform.db, c.account.id, 'editor');
    const { callback: url, sso } = await throughProvider(c.stack.url, email);
    expect((await callback(url, sso)).session).toBeDefined();
    expectRefused(await callback(url, sso), 400, 'The identity provider’s answer did not check out');
    expect(await sessionsOf(c, memberId)).toBe(1);
  });

  it('refuses an ID token whose nonce is not the one this sign-in sent', async () => {
    const { memberId, email } = await addTestMember(c.stack.platform.db, c.account.id, 'editor');
    const { callback: url, sso } = await throughProvider(c.stack.url, email);
    const { secrets } = c.stack.platform;
    const tampered = secrets.seal(JSON.stringify({ ...JSON.parse(secrets.open(sso)), nonce: 'another-nonce' }));
    expectRefused(await callback(url, tampered), 400, 'did not check out');
    expect(await sessionsOf(c, memberId)).toBe(0);
  });

  it('refuses an e-mail the provider does not say is verified', async () => {
    const { memberId, email } = await addTestMember(c.stack.platform.db, c.account.id, 'editor');
    const { callback: url, sso } = await throughProvider(c.stack.url, `unverified:${email}`);
    expectRefused(await callback(url, sso), 403, 'E-mail address not verified');
    expect(await sessionsOf(c, memberId)).toBe(0);
  });

  it('refuses an e-mail outside OIDC_ALLOWED_DOMAINS, even of a member', async () => {
    const email = `someone-${Date.now()}@elsewhere.example`;
    const { memberId } = await addTestMember(c.stack.platform.db, c.account.id, 'editor', { email });
    const { callback: url, sso } = await throughProvider(c.stack.url, email);
    expectRefused(await callback(url, sso), 403, 'E-mail domain not allowed');
    expect(await sessionsOf(c, memberId)).toBe(0);
  });
});

describe('console: single sign-on, who may sign in over HTTP', () => {
  it('refuses a removed member (who does not auto-join either)', async () => {
    const { memberId, email } = await addTestMember(c.stack.platform.db, c.account.id, 'editor');
    expect((await mgmt(c, 'DELETE', `/v1/members/${memberId}`)).status).toBe(204);
    const { callback: url, sso } = await throughProvider(c.stack.url, email);
    expectRefused(await callback(url, sso), 403, 'Not a member here');
    expect(await c.stack.platform.db('members').where({ email }).first()).toBeUndefined();
  });

  it('tells a person whose invitation waits that it does, and where, instead of "not a member"', async () => {
    const { memberId, email } = await addTestMember(c.stack.platform.db, c.account.id, 'editor');
    expect((await mgmt(c, 'DELETE', `/v1/members/${memberId}`)).status).toBe(204);
    expect((await mgmt(c, 'POST', '/v1/members', { email, role: 'viewer' })).status).toBe(201);
    const { callback: url, sso } = await throughProvider(c.stack.url, email);
    const out = await callback(url, sso);
    expectRefused(out, 403, 'An invitation waits for you');
    const account = await c.stack.platform.db('accounts').where('id', c.account.id).first('name');
    expect(out.html).toContain(`is invited to ${account.name}`);
    expect(out.html).toContain('Join with SSO');
  });

  it('refuses the provider’s error answer without showing its words', async () => {
    const { email } = await addTestMember(c.stack.platform.db, c.account.id, 'editor');
    const { callback: url, sso } = await throughProvider(c.stack.url, email);
    const denied = new URL(`${c.stack.url}/console/auth/callback`);
    denied.searchParams.set('error', 'access_denied');
    denied.searchParams.set('error_description', '<script>alert(1)</script>');
    denied.searchParams.set('state', url.searchParams.get('state') as string);
    const out = await callback(denied, sso);
    expectRefused(out, 403, 'The identity provider did not sign you in');
    expect(out.html).toContain('(access_denied)');
    expect(out.html).not.toContain('<script>');
  });

  it('joins OIDC_AUTO_JOIN_ACCOUNT on a new person’s first sign-in from an allowed domain', async () => {
    const email = `new-${Date.now()}@acme.example`;
    const { callback: url, sso } = await throughProvider(c.stack.url, email);
    const out = await callback(url, sso);
    expect(out.session).toBeDefined();
    const { db } = c.stack.platform;
    const member = await db('members').where({ email }).first('id', 'account_id', 'role', 'status');
    expect(member).toMatchObject({ account_id: c.autoJoinAccount, role: 'editor', status: 'active' });
    const joined = await db('audit_log').where({ action: 'member.joined' }).where('target_id', member.id);
    expect(joined).toHaveLength(1);
  });

  it('refuses an invitation to a person whose SSO identity has another e-mail', async () => {
    const invited = await mgmt(c, 'POST', '/v1/members', { email: uniqueEmail('invited'), role: 'viewer' });
    const { id, invitation_url } = (await invited.json()) as { id: string; invitation_url: string };
    const someoneElse = uniqueEmail('other');
    const form = new URLSearchParams({ invitation: invitation_url.split('#')[1] as string });
    const { callback: url, sso } = await throughProvider(c.stack.url, someoneElse, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    expectRefused(await callback(url, sso), 403, "cannot be used by another e-mail's SSO identity");
    expect(await c.stack.platform.db('members').where({ id }).first('status')).toEqual({ status: 'invited' });
  });

  it('answers the sign-in options with sso: true, and a provider that is down with a readable page', async () => {
    expect(await (await fetch(`${c.stack.url}/v1/sign-in-options`)).json()).toEqual({
      password: true,
      sso: true,
      key: true,
      account_creation: 'owners',
      members: true,
    });
    const { platform } = c.stack;
    const down = `http://127.0.0.1:${await freePort()}`;
    const app = await listen(
      buildServiceApp(managementService, { ...platform, config: { ...platform.config, OIDC_ISSUER: down } }).callback(),
    );
    try {
      const res = await fetch(`${app.url}/console/auth/login`, { redirect: 'manual' });
      expect(res.status).toBe(502);
      expect(await res.text()).toContain('The sign-in service cannot be reached');
    } finally {
      await app.close();
    }
  });
});
