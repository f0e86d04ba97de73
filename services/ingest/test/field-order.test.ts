import { useStarted } from '@intake/shared/testing';
import { accountWithForm, startIngest, submissionsOf } from './helpers';

describe('posted field order', () => {
  const h = useStarted(() => startIngest());

  it.each([
    [
      'urlencoded',
      new URLSearchParams([
        ['zeta', '1'],
        ['alpha', '2'],
        ['mid', '3'],
      ]),
    ],
    ['JSON', { zeta: 1, alpha: 'two', mid: true }],
  ])('is kept in the stored payload and in the event for a %s post', async (_kind, body) => {
    const { form, post } = await accountWithForm(h);
    const res = await post(body);
    expect(res.status).toBe(201);
    const [row] = await submissionsOf(h, form.id);
    expect(Object.keys(row.payload)).toEqual(['zeta', 'alpha', 'mid']);
    const event = await h.platform
      .db('outbox')
      .whereRaw(`payload->>'submission_id' = ?`, [res.body.id as string])
      .first();
    expect(Object.keys(event.payload.payload)).toEqual(['zeta', 'alpha', 'mid']);
  });
});
