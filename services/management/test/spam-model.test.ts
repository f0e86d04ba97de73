import { factories, useStarted } from '@intake/shared/testing';
import { api, ownerWithForm, startManagement } from './helpers';

const ctx = useStarted(() => startManagement());

const reasonsOf = (id: string, reasons: string[]) =>
  ctx.platform
    .db('submissions')
    .where({ id })
    .update({ spam_reasons: JSON.stringify(reasons) });

describe('GET /v1/spam/model', () => {
  it('counts the examples of each kind, says the model is learning below 10 of each, and stays in its account', async () => {
    const o = await ownerWithForm(ctx);
    const other = await ownerWithForm(ctx);
    await other.submit({ status: 'spam', spamReason: 'honeypot' });
    const empty = await o.call('GET', '/v1/spam/model');
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ spam_marks: 0, honeypot_catches: 0, not_spam_marks: 0, learning: true });
    expect(empty.body).toMatchObject({ min_examples: 10, threshold: 0.9 });

    const marked = [];
    for (let i = 0; i < 10; i++) marked.push(await o.submit({ payload: { message: `post ${i}` } }));
    for (const s of marked.slice(0, 4)) await o.call('PATCH', `/v1/submissions/${s.id}`, { status: 'spam' });
    for (const s of marked.slice(4)) await o.call('PATCH', `/v1/submissions/${s.id}`, { status: 'received' });
    for (let i = 0; i < 5; i++) await o.submit({ status: 'spam', spamReason: 'honeypot' });
    const still = await o.call('GET', '/v1/spam/model');
    expect(still.body).toMatchObject({ spam_marks: 4, honeypot_catches: 5, not_spam_marks: 6, learning: true });

    for (let i = 0; i < 4; i++) {
      const s = await o.submit({ payload: { message: `more ${i}` } });
      await o.call('PATCH', `/v1/submissions/${s.id}`, { status: 'received' });
    }
    await o.submit({ status: 'spam', spamReason: 'honeypot' });
    const ready = await o.call('GET', '/v1/spam/model');
    expect(ready.body).toMatchObject({ spam_marks: 4, honeypot_catches: 6, not_spam_marks: 10, learning: false });
  });

  it('counts this month’s posts to forms in shadow whose reasons the rules or the classifier gave, and on forms that are on the scores that only recorded', async () => {
    const o = await ownerWithForm(ctx, { settings: { spam_filter: 'shadow' } });
    const month = new Date().toISOString().slice(0, 7);
    const rule = await o.submit();
    await reasonsOf(rule.id, ['blocked-domain:mailinator.com']);
    const classifier = await o.submit();
    await reasonsOf(classifier.id, ['classifier:0.95']);
    // Not what shadow would have caught: a honeypot catch (kept out anyway), no reasons, and a post of long ago.
    const honeypot = await o.submit({ status: 'spam', spamReason: 'honeypot' });
    await reasonsOf(honeypot.id, ['honeypot', 'duplicate']);
    await o.submit();
    const old = await o.submit({ receivedAt: new Date(Date.UTC(2020, 0, 15)) });
    await reasonsOf(old.id, ['duplicate']);
    // A form whose filter is on: what its rules catch is spam, not shadow.
    const onForm = await factories.form(ctx.platform.db, o.account.id);
    await ctx.platform.db('forms').where({ id: onForm.id }).update({ spam_filter: 'on' });
    const caught = await factories.submission(ctx.platform, { accountId: o.account.id, formId: onForm.id });
    await reasonsOf(caught.id, ['duplicate']);
    // There the starting model only records: a post it scored 0.9 or more got in, and counts.
    const recorded = await factories.submission(ctx.platform, { accountId: o.account.id, formId: onForm.id });
    await reasonsOf(recorded.id, ['starting-model:0.97']);
    const low = await factories.submission(ctx.platform, { accountId: o.account.id, formId: onForm.id });
    await reasonsOf(low.id, ['starting-model:0.42']);

    const res = await o.call('GET', '/v1/spam/model');
    expect(res.body).toMatchObject({ month, shadow_caught: 3 });
  });

  it('says what kept this month’s spam of the form out, by kind of reason, most first; its sibling’s apart', async () => {
    const o = await ownerWithForm(ctx);
    const spam = (spamReason: string, props: { formId?: string; receivedAt?: Date } = {}) =>
      o.submit({ status: 'spam', spamReason, ...props });
    await spam('disposable-domain:mailinator.com');
    await spam('disposable-domain:yopmail.com');
    await spam('known-spam:seo-pitch');
    await spam('honeypot');
    await spam('honeypot');
    await spam('honeypot');
    await spam('known-spam:prize', { receivedAt: new Date(Date.UTC(2020, 0, 15)) });
    await o.submit();
    const sibling = await factories.form(ctx.platform.db, o.account.id);
    await spam('link-in-name:name', { formId: sibling.id });

    const res = await o.call('GET', `/v1/spam/model?form_id=${o.form.id}`);
    expect(res.body.caught).toEqual([
      { reason: 'honeypot', count: 3 },
      { reason: 'disposable-domain', count: 2 },
      { reason: 'known-spam', count: 1 },
    ]);
    const project = await o.call('GET', '/v1/spam/model');
    expect(project.body.caught).toContainEqual({ reason: 'link-in-name', count: 1 });
  });

  it('is for the account’s keys and members only', async () => {
    expect((await api(ctx.url)('GET', '/v1/spam/model')).status).toBe(401);
  });
});

describe('the owner’s marks and the figures', () => {
  it('marks move the day’s and the month’s received and spam figures (dashboard, Usage); the quota’s count stays', async () => {
    const o = await ownerWithForm(ctx);
    const db = ctx.platform.db;
    const day = new Date().toISOString().slice(0, 10);
    const { project_id: projectId } = await db('forms').where({ id: o.form.id }).first('project_id');
    const figures = async () => {
      const form = await db('usage_daily').where({ form_id: o.form.id, day }).first('received', 'spam');
      const project = await db('usage_daily_projects')
        .where({ account_id: o.account.id, project_id: projectId, day })
        .first('received', 'spam');
      const month = await db('usage_counters').where({ account_id: o.account.id }).first('used', 'spam');
      return { form: form ?? null, project: project ?? null, month: month ?? null };
    };
    const post = await o.submit();
    const caught = await o.submit({ status: 'spam', spamReason: 'honeypot' });
    const before = await figures();
    const mark = async (id: string, status: string) =>
      expect((await o.call('PATCH', `/v1/submissions/${id}`, { status })).status).toBe(200);
    const moved = (received: number, spam: number) => ({
      form: { received: (before.form?.received ?? 0) + received, spam: (before.form?.spam ?? 0) + spam },
      project: { received: (before.project?.received ?? 0) + received, spam: (before.project?.spam ?? 0) + spam },
      month: { used: before.month?.used ?? 0, spam: (before.month?.spam ?? 0) + spam },
    });
    await mark(post.id, 'spam');
    expect(await figures()).toEqual(moved(-1, 1));
    await mark(post.id, 'spam'); // the same mark again moves nothing
    expect(await figures()).toEqual(moved(-1, 1));
    await mark(post.id, 'received');
    expect(await figures()).toEqual(moved(0, 0));
    // A rescue leaves spam; its created event (the usage service's count) makes it received.
    await mark(caught.id, 'received');
    const rescued = moved(0, -1);
    expect(await figures()).toEqual({ ...rescued, month: { used: rescued.month.used + 1, spam: rescued.month.spam } });
  });
});
