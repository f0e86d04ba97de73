import { factories, addTestMember, memberSessionHeaders, uniqueEmail, useStarted } from '@intake/shared/testing';
import { api, startManagementWithSmtp } from './helpers';

/** A client's staff, invited to see only that client's forms, read the client's name and not only the agency's. */
const ctx = useStarted(() => startManagementWithSmtp());

async function agency() {
  const a = await factories.account(ctx.platform.db);
  const owner = await addTestMember(ctx.platform.db, a.id, 'owner');
  const headers = await memberSessionHeaders(ctx.platform.db, a.id, owner.memberId);
  const project = async (name: string) =>
    (await api(ctx.url, a.managementKey)('POST', '/v1/projects', { name })).body as { id: string };
  const asOwner = (method: string, path: string, body?: object) => api(ctx.url)(method, path, body, { ...headers });
  const invite = (body: object) => asOwner('POST', '/v1/members', body);
  return { owner, project, invite, asOwner };
}

const tokenOf = (url: string) => url.slice(url.indexOf('#') + 1);
const lookup = (url: string) => api(ctx.url)('POST', '/v1/invitations/lookup', { token: tokenOf(url) });

describe('an invitation to a client’s staff', () => {
  it('names the client in the mail’s subject and text and on the join page, and only the agency for the whole account', async () => {
    const a = await agency();
    const hale = await a.project('Hale Dental');
    const staff = uniqueEmail('reception');
    const limited = await a.invite({ email: staff, role: 'viewer', project_ids: [hale.id] });
    expect(limited.status).toBe(201);
    const mail = ctx.smtp.mails.find((m) => m.to.includes(staff));
    expect(mail?.subject).toBe('Join Hale Dental (Test account) on Intake');
    expect(mail?.text).toContain(
      `${a.owner.email} invited you to the forms of Hale Dental at Test account on Intake, as a viewer`,
    );
    expect((await lookup(limited.body.invitation_url)).body).toMatchObject({
      email: staff,
      account_name: 'Test account',
      project_names: ['Hale Dental'],
    });

    const summit = await a.project('Summit Roofing');
    const keystone = await a.project('Keystone Law');
    const both = uniqueEmail('manager');
    const many = await a.invite({ email: both, role: 'editor', project_ids: [summit.id, hale.id, keystone.id] });
    expect(ctx.smtp.mails.find((m) => m.to.includes(both))?.subject).toBe(
      'Join Hale Dental, Keystone Law and Summit Roofing (Test account) on Intake',
    );
    expect((await lookup(many.body.invitation_url)).body.project_names).toEqual([
      'Hale Dental',
      'Keystone Law',
      'Summit Roofing',
    ]);

    // Sent again: the same words.
    expect((await a.asOwner('POST', `/v1/members/${limited.body.id}/invitation`)).status).toBe(201);
    expect(ctx.smtp.mails.filter((m) => m.to.includes(staff)).map((m) => m.subject)).toEqual([
      'Join Hale Dental (Test account) on Intake',
      'Join Hale Dental (Test account) on Intake',
    ]);
    const whole = uniqueEmail('partner');
    const all = await a.invite({ email: whole, role: 'viewer', project_ids: null });
    expect(ctx.smtp.mails.find((m) => m.to.includes(whole))?.subject).toBe('Join Test account on Intake');
    expect((await lookup(all.body.invitation_url)).body.project_names).toEqual([]);
  });
});
