import {
  factories,
  addTestMember,
  managementKeyWithRole,
  memberSessionHeaders,
  uniqueEmail,
  useStarted,
} from '@intake/shared/testing';
import { api, startManagementWithSmtp } from './helpers';
import { accept, PASSWORD, sessionOf } from './people-helpers';

const ctx = useStarted(() => startManagementWithSmtp());

const problemType = (slug: string) => `${ctx.platform.config.PROBLEMS_URL}/${slug}`;

/** An account, its admin key as a caller, and an owner member. */
async function account() {
  const a = await factories.account(ctx.platform.db);
  const owner = await addTestMember(ctx.platform.db, a.id, 'owner');
  return { ...a, owner, call: api(ctx.url, a.managementKey) };
}

/** An account (as `account`) with an admin besides its owner, and the headers of each one's console session. */
async function accountWithAdmin() {
  const a = await account();
  const admin = await addTestMember(ctx.platform.db, a.id, 'admin');
  const asAdmin = await memberSessionHeaders(ctx.platform.db, a.id, admin.memberId);
  const asOwner = await memberSessionHeaders(ctx.platform.db, a.id, a.owner.memberId);
  return { a, admin, asAdmin, asOwner };
}

describe('members: invitations', () => {
  it('invites with a single-use link valid 7 days, e-mailed, that a new person accepts with a password', async () => {
    const a = await account();
    const ada = uniqueEmail('ada');
    const invited = await a.call('POST', '/v1/members', { email: ada.replace('ada', 'Ada'), role: 'editor' });
    expect(invited.status).toBe(201);
    expect(invited.body).toMatchObject({
      id: expect.stringMatching(/^mem_/),
      email: ada,
      role: 'editor',
      status: 'invited',
      last_sign_in_at: null,
    });
    expect(invited.body.invitation_url).toMatch(new RegExp(`^${ctx.platform.config.PUBLIC_BASE_URL}/console/join#`));
    const mail = ctx.smtp.mails.find((m) => m.to.includes(ada));
    expect(mail?.text).toContain(invited.body.invitation_url);
    const stored = await ctx.platform.db('member_invitations').where({ member_id: invited.body.id }).first();
    expect(new Date(stored.expires_at).getTime() - Date.now()).toBeGreaterThan(6.9 * 86_400_000);
    expect(JSON.stringify(stored)).not.toContain(invited.body.invitation_url.split('#')[1]);

    const lookup = await api(ctx.url)('POST', '/v1/invitations/lookup', {
      token: invited.body.invitation_url.split('#')[1],
    });
    expect(lookup.body).toEqual({
      email: ada,
      role: 'editor',
      account_name: 'Test account',
      project_names: [],
      password: true,
    });
    const short = await accept(ctx.url, invited.body.invitation_url, 'short');
    expect([short.res.status, short.res.body.errors]).toEqual([
      422,
      [{ field: 'body/password', message: 'must be at least 12 characters' }],
    ]);
    const breached = await accept(ctx.url, invited.body.invitation_url, 'qwerty123456');
    expect([breached.res.status, breached.res.body.errors[0].message]).toEqual([
      422,
      expect.stringMatching(/common passwords/),
    ]);

    const joined = await accept(ctx.url, invited.body.invitation_url, PASSWORD);
    expect(joined.res.status).toBe(201);
    expect(joined.res.body).toMatchObject({
      account_id: a.id,
      member_id: invited.body.id,
      email: ada,
      role: 'editor',
      key_id: null,
    });
    expect((await api(ctx.url)('POST', '/v1/forms', { name: 'By Ada' }, joined.headers)).status).toBe(201);
    const members = await a.call('GET', '/v1/members');
    expect(members.body.data.find((m: { id: string }) => m.id === invited.body.id)).toMatchObject({ status: 'active' });
    // Single use.
    const again = await accept(ctx.url, invited.body.invitation_url, PASSWORD);
    expect([again.res.status, again.res.body.type]).toEqual([410, problemType('link-expired')]);
  });
});

describe('members: an invitation sent again', () => {
  it('names who invites, to which account and as what; a new link replaces the old, until the person joins', async () => {
    const a = await account();
    const owner = await memberSessionHeaders(ctx.platform.db, a.id, a.owner.memberId);
    const grace = uniqueEmail('grace');
    const invited = await api(ctx.url)('POST', '/v1/members', { email: grace, role: 'editor' }, { ...owner });
    const first = ctx.smtp.mails.find((m) => m.to.includes(grace));
    expect(first?.subject).toBe('Join Test account on Intake');
    expect(first?.text).toContain(`${a.owner.email} invited you to Test account on Intake, as an editor`);

    const resent = await a.call('POST', `/v1/members/${invited.body.id}/invitation`);
    expect(resent.status).toBe(201);
    expect(resent.body).toMatchObject({ id: invited.body.id, status: 'invited', role: 'editor' });
    expect(resent.body.invitation_url).not.toBe(invited.body.invitation_url);
    // By a key: the mail does not name the key.
    expect(ctx.smtp.mails.filter((m) => m.to.includes(grace)).map((m) => m.text.split(' invited you')[0])).toEqual([
      a.owner.email,
      'An admin',
    ]);
    const old = await accept(ctx.url, invited.body.invitation_url, PASSWORD);
    expect([old.res.status, old.res.body.type]).toEqual([410, problemType('link-expired')]);
    expect((await accept(ctx.url, resent.body.invitation_url, PASSWORD)).res.status).toBe(201);

    const joined = await a.call('POST', `/v1/members/${invited.body.id}/invitation`);
    expect([joined.status, joined.body.type]).toEqual([409, problemType('conflict')]);
    expect((await a.call('POST', '/v1/members/mem_00000000000000000000000000/invitation')).status).toBe(404);
    const audited = await a.call('GET', '/v1/audit-log?action=member.invitation_resent');
    expect(audited.body.data).toHaveLength(1);
    expect(audited.body.data[0].target).toEqual({ type: 'member', id: invited.body.id, name: invited.body.email });
  });

  it('is an owner’s to send again for an owner', async () => {
    const a = await account();
    const ownerHeaders = await memberSessionHeaders(ctx.platform.db, a.id, a.owner.memberId);
    const boss = await api(ctx.url)(
      'POST',
      '/v1/members',
      { email: uniqueEmail('boss'), role: 'owner' },
      {
        ...ownerHeaders,
      },
    );
    const admin = await addTestMember(ctx.platform.db, a.id, 'admin');
    const adminHeaders = await memberSessionHeaders(ctx.platform.db, a.id, admin.memberId);
    const refused = await api(ctx.url)('POST', `/v1/members/${boss.body.id}/invitation`, undefined, {
      ...adminHeaders,
    });
    expect([refused.status, refused.body.type]).toEqual([403, problemType('forbidden')]);
    const byOwner = await api(ctx.url)('POST', `/v1/members/${boss.body.id}/invitation`, undefined, {
      ...ownerHeaders,
    });
    expect(byOwner.status).toBe(201);
  });
});

describe('members: invitations refused, and people in several accounts', () => {
  it('refuses an expired invitation, and a second invitation of the same e-mail', async () => {
    const a = await account();
    const lateEmail = uniqueEmail('late');
    const invited = await a.call('POST', '/v1/members', { email: lateEmail, role: 'viewer' });
    expect((await a.call('POST', '/v1/members', { email: lateEmail.toUpperCase(), role: 'admin' })).status).toBe(409);
    await ctx.platform
      .db('member_invitations')
      .where({ member_id: invited.body.id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const late = await accept(ctx.url, invited.body.invitation_url, PASSWORD);
    expect([late.res.status, late.res.body.type]).toEqual([410, problemType('link-expired')]);
  });

  it('a person already in another account joins with the password they have, not a new one', async () => {
    const both = uniqueEmail('both');
    const first = await account();
    const inv1 = await first.call('POST', '/v1/members', { email: both, role: 'viewer' });
    expect((await accept(ctx.url, inv1.body.invitation_url, PASSWORD)).res.status).toBe(201);
    const second = await account();
    const inv2 = await second.call('POST', '/v1/members', { email: both, role: 'admin' });
    const wrong = await accept(ctx.url, inv2.body.invitation_url, 'another long password!');
    expect(wrong.res.status).toBe(401);
    const joined = await accept(ctx.url, inv2.body.invitation_url, PASSWORD);
    expect(joined.res.body).toMatchObject({ account_id: second.id, role: 'admin' });
    const accounts = await api(ctx.url)('GET', '/v1/sessions/accounts', undefined, joined.headers);
    expect(accounts.body.data.map((m: { account_id: string }) => m.account_id).sort()).toEqual(
      [first.id, second.id].sort(),
    );
    const switched = await api(ctx.url, undefined, { contract: true })(
      'POST',
      '/v1/sessions/switch',
      { account_id: first.id },
      joined.headers,
    );
    expect(switched.status).toBe(204);
    const now = sessionOf({ headers: switched.headers, body: {} });
    const current = await api(ctx.url)('GET', '/v1/sessions/current', undefined, { cookie: now.headers.cookie });
    expect(current.body).toMatchObject({ account_id: first.id, role: 'viewer' });
    expect((await api(ctx.url)('GET', '/v1/forms', undefined, joined.headers)).status).toBe(401);
  });
});

describe('members: roles and owners', () => {
  it('only an owner makes, changes or removes an owner; the last owner stays', async () => {
    const { a, admin, asAdmin, asOwner } = await accountWithAdmin();
    const call = api(ctx.url);
    const made = await call('POST', '/v1/members', { email: 'boss@people.example', role: 'owner' }, { ...asAdmin });
    expect([made.status, made.body.type]).toEqual([403, problemType('forbidden')]);
    const demote = await call('PATCH', `/v1/members/${a.owner.memberId}`, { role: 'viewer' }, { ...asAdmin });
    expect([demote.status, demote.body.type]).toEqual([403, problemType('forbidden')]);
    const last = await call('PATCH', `/v1/members/${a.owner.memberId}`, { role: 'admin' }, { ...asOwner });
    expect([last.status, last.body.type]).toEqual([409, problemType('conflict')]);
    expect((await call('DELETE', `/v1/members/${a.owner.memberId}`, undefined, { ...asOwner })).status).toBe(409);
    const promoted = await call('PATCH', `/v1/members/${admin.memberId}`, { role: 'owner' }, { ...asOwner });
    expect(promoted.body).toMatchObject({ role: 'owner' });
    expect((await call('DELETE', `/v1/members/${a.owner.memberId}`, undefined, { ...asAdmin })).status).toBe(204);
    // An admin key is no owner.
    expect((await a.call('DELETE', `/v1/members/${admin.memberId}`)).status).toBe(403);
  });

  it('counts only active owners: an owner cannot step down or leave while the only other owner is an invitation', async () => {
    const a = await account();
    const asOwner = await memberSessionHeaders(ctx.platform.db, a.id, a.owner.memberId);
    const call = api(ctx.url);
    const invited = await call('POST', '/v1/members', { email: uniqueEmail('heir'), role: 'owner' }, { ...asOwner });
    expect([invited.status, invited.body.status]).toEqual([201, 'invited']);
    const stepDown = await call('PATCH', `/v1/members/${a.owner.memberId}`, { role: 'admin' }, { ...asOwner });
    expect([stepDown.status, stepDown.body.detail]).toEqual([409, expect.stringContaining('active owner')]);
    expect((await call('DELETE', `/v1/members/${a.owner.memberId}`, undefined, { ...asOwner })).status).toBe(409);
    // The invitation itself may go: it was never an owner.
    expect((await call('DELETE', `/v1/members/${invited.body.id}`, undefined, { ...asOwner })).status).toBe(204);
    const again = await call('POST', '/v1/members', { email: uniqueEmail('heir'), role: 'owner' }, { ...asOwner });
    expect((await accept(ctx.url, again.body.invitation_url, PASSWORD)).res.status).toBe(201);
    const stepped = await call('PATCH', `/v1/members/${a.owner.memberId}`, { role: 'admin' }, { ...asOwner });
    expect([stepped.status, stepped.body.role]).toEqual([200, 'admin']);
  });
});

describe('members: keys they minted', () => {
  it('shows who minted each key, and revokes a removed member’s keys when asked to', async () => {
    const { a, admin, asAdmin, asOwner } = await accountWithAdmin();
    const call = api(ctx.url);
    const minted: { id: string; key: string }[] = [];
    for (const name of ['ci deploys', 'dashboard'])
      minted.push((await call('POST', '/v1/api-keys', { type: 'management', name }, { ...asAdmin })).body);
    const listed = (await a.call('GET', '/v1/api-keys')).body.data as { id: string; created_by: unknown }[];
    expect(listed.find((k) => k.id === minted[0]!.id)?.created_by).toEqual({
      type: 'member',
      id: admin.memberId,
      label: admin.email,
    });
    // Removed without asking: the keys stay, still showing who minted them.
    const keep = await addTestMember(ctx.platform.db, a.id, 'admin');
    const asKeep = await memberSessionHeaders(ctx.platform.db, a.id, keep.memberId);
    const kept = (await call('POST', '/v1/api-keys', { type: 'submission' }, { ...asKeep })).body;
    expect((await call('DELETE', `/v1/members/${keep.memberId}`, undefined, { ...asOwner })).status).toBe(204);
    expect((await a.call('GET', '/v1/api-keys')).body.data.find((k: { id: string }) => k.id === kept.id)).toMatchObject(
      { revoked_at: null, created_by: { type: 'member', id: keep.memberId } },
    );
    // Removed with revoke_keys: both go in the same change, each audited.
    const removed = await call('DELETE', `/v1/members/${admin.memberId}?revoke_keys=true`, undefined, { ...asOwner });
    expect(removed.status).toBe(204);
    const after = (await a.call('GET', '/v1/api-keys')).body.data as { id: string; revoked_at: string | null }[];
    expect(minted.map((m) => after.find((k) => k.id === m.id)?.revoked_at)).toEqual([
      expect.any(String),
      expect.any(String),
    ]);
    const revoked = await ctx.platform
      .db('audit_log')
      .where({ account_id: a.id, action: 'api_key.revoked' })
      .pluck('target_id');
    expect(revoked.sort()).toEqual(minted.map((m) => m.id).sort());
    const refused = await api(ctx.url, minted[0]!.key)('GET', '/v1/forms');
    expect([refused.status, refused.body.type]).toEqual([403, problemType('invalid-key')]);
  });

  it('a role change and a removal take effect on the member’s open sessions at once', async () => {
    const a = await account();
    const editor = await addTestMember(ctx.platform.db, a.id, 'editor');
    const session = await memberSessionHeaders(ctx.platform.db, a.id, editor.memberId);
    const call = api(ctx.url);
    expect((await call('POST', '/v1/forms', { name: 'Before' }, { ...session })).status).toBe(201);
    await a.call('PATCH', `/v1/members/${editor.memberId}`, { role: 'viewer' });
    const after = await call('POST', '/v1/forms', { name: 'After' }, { ...session });
    expect([after.status, after.body.type]).toEqual([403, problemType('forbidden')]);
    expect((await call('GET', '/v1/forms', undefined, { ...session })).status).toBe(200);
    expect((await a.call('DELETE', `/v1/members/${editor.memberId}`)).status).toBe(204);
    expect((await call('GET', '/v1/forms', undefined, { ...session })).status).toBe(401);
  });

  it('management keys carry a role: admin by default, a viewer key reads and exports but changes nothing', async () => {
    const a = await account();
    const minted = await a.call('POST', '/v1/api-keys', { type: 'management' });
    expect(minted.body.role).toBe('admin');
    const viewer = await a.call('POST', '/v1/api-keys', { type: 'management', role: 'viewer', name: 'dashboard' });
    expect(viewer.body).toMatchObject({ role: 'viewer', name: 'dashboard' });
    const form = await factories.form(ctx.platform.db, a.id);
    const asViewer = api(ctx.url, viewer.body.key);
    expect((await asViewer('GET', `/v1/forms/${form.id}/submissions`)).status).toBe(200);
    expect((await asViewer('GET', `/v1/forms/${form.id}/export.csv`)).status).toBe(200);
    expect((await asViewer('PATCH', `/v1/forms/${form.id}`, { name: 'x' })).status).toBe(403);
    expect((await asViewer('GET', '/v1/api-keys')).status).toBe(403);
    const editorKey = await managementKeyWithRole(ctx.platform.db, a.id, 'editor');
    expect((await api(ctx.url, editorKey)('POST', '/v1/api-keys', { type: 'submission' })).status).toBe(403);
    const bad = await a.call('POST', '/v1/api-keys', { type: 'management', role: 'owner' });
    expect(bad.status).toBe(422);
  });
});
