import PostalMime from 'postal-mime';
import { addTestMember, eventually, factories, useStarted } from '@intake/shared/testing';
import { api, startManagementWithMail } from './helpers';

/**
 * A form's time zone (`time_zone`): checked on input, inherited from its client's defaults as the other settings are,
 * and the zone its mails give times in.
 */
const ctx = useStarted(startManagementWithMail);

/** An agency's account, its management API and one client (a project). */
async function agency() {
  const account = await factories.account(ctx.platform.db);
  const call = api(ctx.url, account.managementKey);
  const made = await call('POST', '/v1/projects', { name: `Hale Dental ${Date.now()}` });
  return { account, call, client: made.body as { id: string } };
}

describe('a form’s time zone', () => {
  it('is UTC until set; takes any IANA zone; anything else is a 422 naming the field, in forms and project defaults', async () => {
    const { call, client } = await agency();
    const made = await call('POST', '/v1/forms', { name: 'Contact', project_id: client.id });
    expect(made.status).toBe(201);
    expect(made.body.time_zone).toBe('UTC');
    for (const zone of ['Europe/Paris', 'America/Argentina/Buenos_Aires', 'Etc/GMT+5', 'UTC']) {
      const res = await call('PATCH', `/v1/forms/${made.body.id}`, { time_zone: zone });
      expect({ zone, status: res.status, time_zone: res.body.time_zone }).toEqual({
        zone,
        status: 200,
        time_zone: zone,
      });
    }
    for (const zone of ['Mars/Olympus', '+01:00', 'GMT+1 ', '', 'Europe/Paris\nBcc: x', 'x'.repeat(65)]) {
      for (const [method, path, body] of [
        ['PATCH', `/v1/forms/${made.body.id}`, { time_zone: zone }],
        ['POST', '/v1/forms', { name: 'Other', time_zone: zone }],
        ['PATCH', `/v1/projects/${client.id}`, { form_defaults: { time_zone: zone } }],
      ] as const) {
        const res = await call(method, path, body);
        expect({
          zone,
          path,
          status: res.status,
          type: res.body.type,
          fields: JSON.stringify(res.body.errors),
        }).toEqual({
          zone,
          path,
          status: 422,
          type: expect.stringMatching(/validation-failed$/),
          fields: expect.stringContaining('time_zone'),
        });
      }
    }
    expect((await call('GET', `/v1/forms/${made.body.id}`)).body.time_zone).toBe('UTC');
  });

  it('is inherited from the client’s defaults unless the form sets its own, and mails give times in it', async () => {
    const { account, call, client } = await agency();
    const owner = (await addTestMember(ctx.platform.db, account.id, 'owner')).email;
    const plain = (await call('POST', '/v1/forms', { name: 'Contact', project_id: client.id, notify_emails: [owner] }))
      .body as { id: string };
    const own = (await call('POST', '/v1/forms', { name: 'Careers', project_id: client.id, time_zone: 'Asia/Tokyo' }))
      .body as { id: string };
    const res = await call('PATCH', `/v1/projects/${client.id}`, { form_defaults: { time_zone: 'America/New_York' } });
    expect(res.status).toBe(200);
    expect((await call('GET', `/v1/forms/${plain.id}`)).body).toMatchObject({
      time_zone: 'America/New_York',
      inherited: ['time_zone'],
    });
    expect((await call('GET', `/v1/forms/${own.id}`)).body).toMatchObject({ time_zone: 'Asia/Tokyo', inherited: [] });

    const stored = await factories.submission(ctx.platform, {
      accountId: account.id,
      formId: plain.id,
      payload: { name: 'Ada' },
      receivedAt: new Date('2026-07-01T15:04:05.000Z'),
    });
    const [mail] = await eventually(() => ctx.mailsTo(owner).length === 1 && ctx.mailsTo(owner));
    const parsed = await PostalMime.parse(mail!.raw);
    // Summer in New York: four hours behind UTC.
    expect(parsed.text).toContain('\nReceived 1 Jul 2026, 11:04:05 GMT-4\n');
    // The owner is a member: the console's link is theirs.
    expect(parsed.text).toContain(`/console/submissions/${stored.id}`);
  });
});
