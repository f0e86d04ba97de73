import { Webhook } from 'standardwebhooks';
import { newId } from '@intake/shared/contracts';
import { eventually, factories, useStarted } from '@intake/shared/testing';
import { api, newOwner, ownerWithFailingHook, startManagementWithWorkers } from './helpers';
import { submit, verifyWithOctokit } from '../../delivery/test/helpers';

/** The API the console needs beyond the basic resources, over management and the delivery workers. */
const ctx = useStarted(() => startManagementWithWorkers({ retryMs: 100, pollMs: 100 }));
const owner = () => newOwner(ctx);

describe('console support routes, what works', () => {
  it('filters the log by status, lists a submission’s deliveries, and replays every failed one', async () => {
    const { target, hook, accountId, formId, call } = await ownerWithFailingHook(ctx);
    try {
      const first = await submit(ctx.platform, { accountId, formId });
      const second = await submit(ctx.platform, { accountId, formId });
      const failed = await eventually(async () => {
        const list = (await call('GET', `/v1/webhooks/${hook.id}/deliveries?status=failed`)).body.data;
        return list.length === 2 && list;
      });
      expect(failed.map((d: { status: string }) => d.status)).toEqual(['failed', 'failed']);
      expect((await call('GET', `/v1/webhooks/${hook.id}/deliveries?status=succeeded`)).body.data).toEqual([]);

      const ofFirst = await call('GET', `/v1/submissions/${first.submission_id}/deliveries`);
      expect(ofFirst.status).toBe(200);
      expect(ofFirst.body.data).toHaveLength(1);
      expect(ofFirst.body.data[0]).toMatchObject({
        submission_id: first.submission_id,
        webhook_id: hook.id,
        webhook_url: target.url,
      });
      expect(ofFirst.body.data[0].attempts).toHaveLength(5);

      target.heal();
      const replay = await call('POST', `/v1/webhooks/${hook.id}/replay-failed`);
      expect(replay.status).toBe(202);
      expect([...replay.body.replayed].sort()).toEqual(failed.map((d: { id: string }) => d.id).sort());
      await eventually(
        async () => (await call('GET', `/v1/webhooks/${hook.id}/deliveries?status=succeeded`)).body.data.length === 2,
      );
      expect((await call('GET', `/v1/webhooks/${hook.id}/deliveries?status=failed`)).body.data).toEqual([]);
      expect(target.requests.filter((r) => r.body.includes(second.submission_id))).toHaveLength(6);
    } finally {
      await target.close();
    }
  });

  it('a signed sample verifies with the webhook’s secret, and its curl command quotes safely and carries no secret', async () => {
    const { formId, call } = await owner();
    const { body: hook } = await call('POST', `/v1/forms/${formId}/webhooks`, { url: "https://example.com/it's" });
    const sample = await call('GET', `/v1/webhooks/${hook.id}/sample`);
    expect(sample.status).toBe(200);
    const { body, headers, curl } = sample.body;
    expect(JSON.parse(body)).toMatchObject({ type: 'webhook.test', data: { form_id: formId, sample: true } });
    expect(await verifyWithOctokit(hook.secret, body, headers['x-service-signature'])).toBe(true);
    expect(new Webhook(hook.secret).verify(body, headers)).toBeTruthy();
    expect(curl).toContain(`curl -X POST 'https://example.com/it'\\''s'`);
    expect(curl).not.toContain(hook.secret);
  });

  it('bulk: marks several spam and back, then deletes them, reporting unknown ids', async () => {
    const { accountId, formId, call } = await owner();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await factories.submission(ctx.platform, { accountId, formId })).id);
    const spam = await call('POST', '/v1/submissions/bulk', { action: 'spam', ids: [...ids, 'sub_nope'] });
    expect(spam.body).toEqual({ done: ids, not_found: ['sub_nope'] });
    const listed = await call('GET', `/v1/forms/${formId}/submissions?status=spam`);
    expect(listed.body.data).toHaveLength(3);
    await call('POST', '/v1/submissions/bulk', { action: 'received', ids });
    expect((await call('GET', `/v1/forms/${formId}/submissions?status=spam`)).body.data).toHaveLength(0);
    const deleted = await call('POST', '/v1/submissions/bulk', { action: 'delete', ids: ids.slice(0, 2) });
    expect(deleted.body).toEqual({ done: ids.slice(0, 2), not_found: [] });
    expect((await call('GET', `/v1/forms/${formId}/submissions`)).body.data).toHaveLength(1);
  });
});

describe('console support routes, what errors', () => {
  it('422 for a bad filter or bulk body, 404 for unknown ids', async () => {
    const { call } = await owner();
    expect((await call('GET', `/v1/webhooks/${newId('webhook')}/deliveries?status=weird`)).status).toBe(422);
    expect((await call('POST', '/v1/submissions/bulk', { action: 'explode', ids: ['x'] })).status).toBe(422);
    expect((await call('POST', '/v1/submissions/bulk', { action: 'delete', ids: [] })).status).toBe(422);
    expect((await call('GET', `/v1/submissions/${newId('submission')}/deliveries`)).status).toBe(404);
    expect((await call('POST', '/v1/webhooks/wh_nope/replay-failed')).status).toBe(404);
    expect((await call('GET', '/v1/webhooks/wh_nope/sample')).status).toBe(404);
  });
});

describe('console support routes, what must be refused', () => {
  it('another account’s webhook, submission and ids are 404 / not_found, and nothing changes', async () => {
    const a = await owner();
    const b = await owner();
    const { body: hook } = await b.call('POST', `/v1/forms/${b.formId}/webhooks`, { url: 'https://example.com/h' });
    const sub = await factories.submission(ctx.platform, { accountId: b.accountId, formId: b.formId });
    expect((await a.call('GET', `/v1/webhooks/${hook.id}/sample`)).status).toBe(404);
    expect((await a.call('POST', `/v1/webhooks/${hook.id}/replay-failed`)).status).toBe(404);
    expect((await a.call('GET', `/v1/submissions/${sub.id}/deliveries`)).status).toBe(404);
    const bulk = await a.call('POST', '/v1/submissions/bulk', { action: 'delete', ids: [sub.id] });
    expect(bulk.body).toEqual({ done: [], not_found: [sub.id] });
    expect((await b.call('GET', `/v1/submissions/${sub.id}`)).status).toBe(200);
    expect((await api(ctx.url)('POST', '/v1/submissions/bulk', { action: 'delete', ids: [sub.id] })).status).toBe(401);
  });
});
