import { useStarted } from '@intake/shared/testing';
import { accountWithForm, startIngest, submissionsOf } from './helpers';

describe('allowed_origins', () => {
  const h = useStarted(() => startIngest());

  async function restrictedForm() {
    const made = await accountWithForm(h);
    await h.platform
      .db('forms')
      .where({ id: made.form.id })
      .update({ allowed_origins: JSON.stringify(['https://good.example']) });
    return made;
  }

  it('accepts browser posts from a listed origin (however it is spelt) and posts with no Origin or Referer', async () => {
    const { form, post } = await restrictedForm();
    expect(
      (await post('a=1', { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://good.example' }))
        .status,
    ).toBe(201);
    expect(
      (await post('a=2', { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://GOOD.example:443' }))
        .status,
    ).toBe(201);
    expect(
      (
        await post('a=3', {
          'content-type': 'application/x-www-form-urlencoded',
          referer: 'https://good.example/contact?x=1',
        })
      ).status,
    ).toBe(201);
    expect((await post('a=4', { 'content-type': 'application/x-www-form-urlencoded' })).status).toBe(201);
    expect(await submissionsOf(h, form.id)).toHaveLength(4);
  });

  it('refuses other origins with 403 origin-not-allowed, storing nothing and counting nothing', async () => {
    const { account, form, post } = await restrictedForm();
    const attempts: Record<string, string>[] = [
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { referer: 'https://evil.example/page' },
      { origin: 'http://good.example' },
    ];
    for (const headers of attempts) {
      const res = await post('a=1', { 'content-type': 'application/x-www-form-urlencoded', ...headers });
      expect({ headers, status: res.status, type: res.body.type }).toEqual({
        headers,
        status: 403,
        type: `${h.platform.config.PROBLEMS_URL}/origin-not-allowed`,
      });
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
    }
    expect(await submissionsOf(h, form.id)).toHaveLength(0);
    expect(await h.platform.db('usage_counters').where({ account_id: account.id }).first()).toBeUndefined();
  });

  it('lets any origin post when the list is empty', async () => {
    const { post } = await accountWithForm(h);
    expect(
      (await post('a=1', { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://anyone.example' }))
        .status,
    ).toBe(201);
  });
});
