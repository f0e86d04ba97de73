import { useStarted } from '@intake/shared/testing';
import { accountWithForm, publishedEvent, startIngest, submissionsOf } from './helpers';

const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('control fields: _subject, _replyto, _next', () => {
  const h = useStarted(() => startIngest({}, { relay: true }));

  it('takes them out of the payload; the subject and reply-to are kept with the submission and its event', async () => {
    const { form, post } = await accountWithForm(h);
    const res = await post(
      new URLSearchParams([
        ['name', 'Ada'],
        ['_subject', '  Quote request:\r\n  Bcc: everyone@example.com  '],
        ['_replyto', ' ada@example.com '],
        ['_next', 'https://elsewhere.example/thanks'],
      ]),
    );
    expect(res.status).toBe(201);
    const [stored] = await submissionsOf(h, form.id);
    expect(stored.payload).toEqual({ name: 'Ada' });
    // One line (a header can never be smuggled in), the address trimmed.
    const directions = { subject: 'Quote request: Bcc: everyone@example.com', reply_to: 'ada@example.com' };
    expect(stored.directions).toEqual(directions);
    const { event } = await publishedEvent(h, 'submission.created', res.body.id as string);
    expect(event).toMatchObject({ payload: { name: 'Ada' }, directions });
  });

  it('drops a reply-to that is not one address, keeps an empty post empty, and stores no directions when none', async () => {
    const { form, post } = await accountWithForm(h);
    expect((await post({ name: 'Grace', _replyto: 'a@example.com, b@example.com' })).status).toBe(201);
    expect((await post({ name: 'Lin' })).status).toBe(201);
    const empty = await post({ _subject: 'Only a subject', _next: 'https://example.com/' });
    expect(empty).toMatchObject({ status: 422, body: { type: expect.stringMatching(/validation-failed$/) } });
    const rows = await submissionsOf(h, form.id);
    expect(rows.map((r) => [r.payload, r.directions])).toEqual([
      [{ name: 'Grace' }, null],
      [{ name: 'Lin' }, null],
    ]);
  });

  it('sends a browser to _next on one of the form’s origins after a success (spam too), and nowhere else', async () => {
    const { form, post } = await accountWithForm(h, { form: { redirect_url: 'https://shop.example/thanks' } });
    await h.platform
      .db('forms')
      .where({ id: form.id })
      .update({ allowed_origins: JSON.stringify(['https://www.shop.example']) });
    const to = async (next: string, extra: Record<string, string> = {}) => {
      const res = await post(new URLSearchParams({ name: 'Ada', _next: next, ...extra }), { accept: browserAccept });
      return [res.status, res.headers.get('location')];
    };
    expect(await to('https://www.shop.example/merci?lang=fr')).toEqual([303, 'https://www.shop.example/merci?lang=fr']);
    expect(await to('https://shop.example/other')).toEqual([303, 'https://shop.example/other']);
    // Another site, another scheme, or no URL at all: the form's own redirect.
    for (const next of ['https://evil.example/', 'javascript:alert(1)', '//evil.example/', 'http://shop.example/'])
      expect(await to(next)).toEqual([303, 'https://shop.example/thanks']);
    // A post caught by the honeypot is answered as a success is, `_next` included.
    expect(await to('https://www.shop.example/merci', { _gotcha: 'bot' })).toEqual([
      303,
      'https://www.shop.example/merci',
    ]);
  });
});
