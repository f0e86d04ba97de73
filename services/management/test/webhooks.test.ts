import { Webhook } from 'standardwebhooks';
import { newId } from '@intake/shared/contracts';
import { eventually, factories, useStarted } from '@intake/shared/testing';
import { api, newOwner, ownerWithFailingHook, startManagement, startManagementWithWorkers } from './helpers';
import { answering, receiver, submit, verifyWithOctokit } from '../../delivery/test/helpers';

const ctx = useStarted(() => startManagementWithWorkers({ retryMs: 300, pollMs: 200 }));
const owner = () => newOwner(ctx);

/** A webhook as the API shows it just after it was made: enabled, standard, never called; no secret. */
const freshWebhook = (formId: string, url: string) => ({
  id: expect.stringMatching(/^wh_/),
  form_id: formId,
  url,
  enabled: true,
  format: 'standard',
  disabled_reason: null,
  health: {
    last_24h: { succeeded: 0, failed: 0, pending: 0 },
    last_success_at: null,
    last_failure_at: null,
    failing_since: null,
    consecutive_failures: 0,
  },
  created_at: expect.any(String),
  updated_at: expect.any(String),
});

describe('webhook routes, what works: managing', () => {
  it('creates (secret once, sealed at rest), lists without secrets, updates, rotates and deletes', async () => {
    const { formId, call } = await owner();
    const created = await call('POST', `/v1/forms/${formId}/webhooks`, { url: 'https://hooks.example.com/intake' });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/v1/webhooks/${created.body.id}`);
    expect(created.body).toEqual({
      ...freshWebhook(formId, 'https://hooks.example.com/intake'),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect(Buffer.from(created.body.secret.slice(6), 'base64')).toHaveLength(32);
    const stored = await ctx.platform.db('webhooks').where({ id: created.body.id }).first();
    expect(stored.secret).not.toContain(created.body.secret.slice(6, 20));
    expect(ctx.platform.secrets.open(stored.secret)).toBe(created.body.secret);

    const list = await call('GET', `/v1/forms/${formId}/webhooks`);
    expect(list.body.data).toEqual([
      { ...freshWebhook(formId, 'https://hooks.example.com/intake'), id: created.body.id },
    ]);

    const disabled = await call('PATCH', `/v1/webhooks/${created.body.id}`, {
      enabled: false,
      url: 'https://hooks.example.com/v2',
    });
    expect(disabled.status).toBe(200);
    expect(disabled.body).toMatchObject({ enabled: false, url: 'https://hooks.example.com/v2' });
    expect(disabled.body.secret).toBeUndefined();

    const rotated = await call('PATCH', `/v1/webhooks/${created.body.id}`, { rotate_secret: true });
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.body.secret);
    expect(
      ctx.platform.secrets.open((await ctx.platform.db('webhooks').where({ id: created.body.id }).first()).secret),
    ).toBe(rotated.body.secret);

    expect((await call('DELETE', `/v1/webhooks/${created.body.id}`)).status).toBe(204);
    expect((await call('GET', `/v1/forms/${formId}/webhooks`)).body.data).toEqual([]);
  });
});

describe('webhook routes, what works: test pings', () => {
  it('test ping: a signed webhook.test envelope, { status_code, ok }, no submission, and it shows in the log', async () => {
    const target = await receiver(answering(202, 'thanks'));
    try {
      const { formId, call } = await owner();
      const { body: hook } = await call('POST', `/v1/forms/${formId}/webhooks`, { url: target.url });
      const res = await call('POST', `/v1/webhooks/${hook.id}/test`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status_code: 202, ok: true });
      const [req] = target.requests;
      const envelope = JSON.parse(req!.body);
      expect(envelope).toEqual({
        type: 'webhook.test',
        id: expect.stringMatching(/^whd_/),
        created_at: expect.any(String),
        // `project`: null for a form in the account's default project.
        data: { form_id: formId, project: null, sample: true },
      });
      expect(req!.headers).toMatchObject({
        'x-service-event': 'webhook.test',
        'x-service-delivery': envelope.id,
        'x-service-attempt': '1',
        'user-agent': 'Service-Webhooks/1',
        'content-type': 'application/json',
      });
      expect(await verifyWithOctokit(hook.secret, req!.body, req!.headers['x-service-signature'] as string)).toBe(true);
      expect(new Webhook(hook.secret).verify(req!.body, req!.headers as Record<string, string>)).toEqual(envelope);
      expect(await ctx.platform.db('submissions').where({ form_id: formId })).toEqual([]);

      const log = await call('GET', `/v1/webhooks/${hook.id}/deliveries`);
      expect(log.body.data).toEqual([
        expect.objectContaining({
          id: envelope.id,
          type: 'webhook.test',
          status: 'succeeded',
          attempt_count: 1,
          errors: [],
          attempts: [
            expect.objectContaining({
              attempt: 1,
              trigger: 'test',
              status_code: 202,
              // The receiver is on loopback, allowed by WEBHOOK_ALLOW_PRIVATE_NETWORKS: its body is not kept.
              response_body: null,
              error: null,
            }),
          ],
        }),
      ]);
    } finally {
      await target.close();
    }
  });

  it('test ping reports a failing endpoint: its status, or 0 when it does not answer', async () => {
    const target = await receiver(answering(410));
    const { formId, call } = await owner();
    const { body: hook } = await call('POST', `/v1/forms/${formId}/webhooks`, { url: target.url });
    expect((await call('POST', `/v1/webhooks/${hook.id}/test`)).body).toMatchObject({ status_code: 410, ok: false });
    await target.close();
    expect((await call('POST', `/v1/webhooks/${hook.id}/test`)).body).toMatchObject({
      status_code: 0,
      ok: false,
      error: expect.stringMatching(/ECONNREFUSED/),
    });
  });
});

describe('webhook routes: a test ping with no delivery process running', () => {
  const alone = useStarted(() => startManagement({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: true }));

  it('answers 503 with Retry-After, and stores nothing', async () => {
    const target = await receiver();
    try {
      const { formId, call } = await newOwner(alone);
      const { body: hook } = await call('POST', `/v1/forms/${formId}/webhooks`, { url: target.url });
      const res = await call('POST', `/v1/webhooks/${hook.id}/test`);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(res.body).toMatchObject({ type: expect.stringMatching(/service-unavailable$/), status: 503 });
      expect(target.requests).toEqual([]);
      expect(await alone.platform.db('deliveries').where({ webhook_id: hook.id })).toEqual([]);
    } finally {
      await target.close();
    }
  });
});

describe('webhook routes, what works: the delivery log and replays', () => {
  it('the log shows every attempt, newest delivery first; a replay sends a failed delivery again at once', async () => {
    const { target, hook, accountId, formId, call } = await ownerWithFailingHook(ctx);
    try {
      const first = await submit(ctx.platform, { accountId, formId });
      const failed = await eventually(
        async () =>
          (await call('GET', `/v1/webhooks/${hook.id}/deliveries`)).body.data.find(
            (d: { status: string }) => d.status === 'failed',
          ),
        { timeoutMs: 10_000 },
      );
      expect(failed).toMatchObject({
        submission_id: first.submission_id,
        attempt_count: 5,
        last_status_code: 500,
        errors: Array(5).fill('receiver answered 500'),
      });
      expect(
        failed.attempts.map((a: { attempt: number; trigger: string; response_body: string }) => [
          a.attempt,
          a.trigger,
          a.response_body,
        ]),
      ).toEqual([1, 2, 3, 4, 5].map((n) => [n, 'schedule', null]));

      target.heal();
      const second = await submit(ctx.platform, { accountId, formId });
      await eventually(() => target.requests.some((r) => r.body.includes(second.submission_id)));
      const replay = await call('POST', `/v1/deliveries/${failed.id}/replay`);
      expect(replay.status).toBe(202);
      const replayed = await eventually(async () =>
        (await call('GET', `/v1/webhooks/${hook.id}/deliveries`)).body.data.find(
          (d: { id: string; status: string }) => d.id === failed.id && d.status === 'succeeded',
        ),
      );
      expect(replayed.attempts.at(-1)).toMatchObject({ attempt: 5, trigger: 'replay', status_code: 200 });
      const sent = target.requests.filter((r) => r.body.includes(first.submission_id));
      expect(sent).toHaveLength(6);
      expect(JSON.parse(sent[5]!.body).id).toBe(failed.id);

      // a disabled webhook is not called, not even by a replay
      expect((await call('PATCH', `/v1/webhooks/${hook.id}`, { enabled: false })).status).toBe(200);
      const refused = await call('POST', `/v1/deliveries/${failed.id}/replay`);
      expect([refused.status, refused.body.type]).toEqual([409, `${ctx.platform.config.PROBLEMS_URL}/conflict`]);
      expect(target.requests.filter((r) => r.body.includes(first.submission_id))).toHaveLength(6);

      const log = (await call('GET', `/v1/webhooks/${hook.id}/deliveries`)).body.data;
      expect(log.map((d: { submission_id: string }) => d.submission_id)).toEqual([
        second.submission_id,
        first.submission_id,
      ]);
    } finally {
      await target.close();
    }
  });

  it('returns at most the last 50 deliveries', async () => {
    const { accountId, formId, call } = await owner();
    const { body: hook } = await call('POST', `/v1/forms/${formId}/webhooks`, { url: 'https://hooks.example.com/' });
    const rows = [];
    for (let i = 0; i < 55; i++)
      rows.push(
        await factories.delivery(ctx.platform.db, {
          accountId,
          webhookId: hook.id,
          formId,
          status: 'succeeded',
          createdAt: new Date(Date.now() - (55 - i) * 1000),
        }),
      );
    const log = (await call('GET', `/v1/webhooks/${hook.id}/deliveries`)).body.data;
    expect(log).toHaveLength(50);
    expect(log[0].id).toBe(rows[54]!.id);
    expect(log[49].id).toBe(rows[5]!.id);
  });
});

describe('webhook routes, what errors', () => {
  it('422 for a body that does not fit, 404 for unknown ids, 401 without a key', async () => {
    const { formId, call } = await owner();
    const bad = await call('POST', `/v1/forms/${formId}/webhooks`, { url: 42, extra: true });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { field: string }) => e.field)).toEqual(
      expect.arrayContaining(['body/url', 'body/extra']),
    );
    expect((await call('PATCH', `/v1/webhooks/${newId('webhook')}`, { enabled: 'yes' })).status).toBe(422);
    for (const [method, path] of [
      ['POST', '/v1/forms/frm_nope/webhooks'],
      ['GET', '/v1/forms/frm_nope/webhooks'],
      ['PATCH', '/v1/webhooks/wh_nope'],
      ['DELETE', '/v1/webhooks/wh_nope'],
      ['GET', '/v1/webhooks/wh_nope/deliveries'],
      ['POST', '/v1/deliveries/whd_nope/replay'],
      ['POST', '/v1/webhooks/wh_nope/test'],
    ] as const) {
      const res = await call(
        method,
        path,
        method === 'POST' && path.endsWith('webhooks')
          ? { url: 'https://example.com/' }
          : method === 'PATCH'
            ? { enabled: true }
            : undefined,
      );
      expect({ method, path, status: res.status, type: res.body.type }).toEqual({
        method,
        path,
        status: 404,
        type: expect.stringMatching(/\/not-found$/),
      });
    }
    expect((await api(ctx.url)('GET', `/v1/forms/${formId}/webhooks`)).status).toBe(401);
  });
});

describe('webhook routes, what errors: one target per form', () => {
  it('409 conflict for a second webhook to a URL the form already sends to, however spelt; other forms may', async () => {
    const { accountId, formId, call } = await owner();
    const first = await call('POST', `/v1/forms/${formId}/webhooks`, { url: 'https://hooks.example.com/intake' });
    expect(first.status).toBe(201);
    for (const url of ['https://hooks.example.com/intake', 'https://HOOKS.example.com:443/intake']) {
      const again = await call('POST', `/v1/forms/${formId}/webhooks`, { url });
      expect([url, again.status, again.body.type]).toEqual([url, 409, expect.stringMatching(/\/conflict$/)]);
    }
    const other = await call('POST', `/v1/forms/${formId}/webhooks`, { url: 'https://hooks.example.com/other' });
    expect(other.status).toBe(201);
    // Moving the second onto the first's URL is refused too; moving a webhook onto its own URL is no change.
    const moved = await call('PATCH', `/v1/webhooks/${other.body.id}`, { url: 'https://hooks.example.com/intake' });
    expect(moved.status).toBe(409);
    const edited = await call('PATCH', `/v1/webhooks/${first.body.id}`, { url: 'https://hooks.example.com/intake' });
    expect([edited.status, edited.body.url]).toEqual([200, 'https://hooks.example.com/intake']);
    const renamed = await call('PATCH', `/v1/webhooks/${other.body.id}`, { url: 'https://hooks.example.com/new' });
    expect([renamed.status, renamed.body.url]).toEqual([200, 'https://hooks.example.com/new']);
    const secondForm = await factories.form(ctx.platform.db, accountId);
    const elsewhere = await call('POST', `/v1/forms/${secondForm.id}/webhooks`, {
      url: 'https://hooks.example.com/intake',
    });
    expect(elsewhere.status).toBe(201);
    expect(await ctx.platform.db('webhooks').where({ form_id: formId })).toHaveLength(2);
  });
});

describe('webhook routes, what must be refused', () => {
  it('another account’s form, webhook and delivery are 404', async () => {
    const mine = await owner();
    const theirs = await owner();
    const { body: hook } = await mine.call('POST', `/v1/forms/${mine.formId}/webhooks`, {
      url: 'https://hooks.example.com/',
    });
    const delivery = await factories.delivery(ctx.platform.db, {
      accountId: mine.accountId,
      webhookId: hook.id,
      formId: mine.formId,
      status: 'failed',
    });
    expect(
      (await theirs.call('POST', `/v1/forms/${mine.formId}/webhooks`, { url: 'https://evil.example.com/' })).status,
    ).toBe(404);
    expect((await theirs.call('GET', `/v1/forms/${mine.formId}/webhooks`)).status).toBe(404);
    expect((await theirs.call('PATCH', `/v1/webhooks/${hook.id}`, { url: 'https://evil.example.com/' })).status).toBe(
      404,
    );
    expect((await theirs.call('POST', `/v1/webhooks/${hook.id}/test`)).status).toBe(404);
    expect((await theirs.call('GET', `/v1/webhooks/${hook.id}/deliveries`)).status).toBe(404);
    expect((await theirs.call('POST', `/v1/deliveries/${delivery.id}/replay`)).status).toBe(404);
    expect((await theirs.call('DELETE', `/v1/webhooks/${hook.id}`)).status).toBe(404);
    expect((await mine.call('GET', `/v1/forms/${mine.formId}/webhooks`)).body.data[0]).toMatchObject({
      id: hook.id,
      url: 'https://hooks.example.com/',
    });
  });
});

describe('webhook URLs with private networks disallowed', () => {
  const ctx = useStarted(() => startManagement({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: false }));

  it('refuses http and targets inside our network with 422, on create and on update', async () => {
    const account = await factories.account(ctx.platform.db);
    const form = await factories.form(ctx.platform.db, account.id);
    const call = api(ctx.url, account.managementKey);
    for (const url of [
      'http://hooks.example.com/',
      'https://127.0.0.1/',
      'https://localhost:8443/',
      'https://[::ffff:169.254.169.254]/',
      'https://169.254.169.254/latest/meta-data/',
      'https://10.0.0.5/',
      'https://[fd00::1]/',
      'https://[::1]/',
    ]) {
      const res = await call('POST', `/v1/forms/${form.id}/webhooks`, { url });
      expect({ url, status: res.status, field: res.body.errors?.[0]?.field }).toEqual({
        url,
        status: 422,
        field: 'body/url',
      });
    }
    const ok = await call('POST', `/v1/forms/${form.id}/webhooks`, { url: 'https://93.184.216.34/hook' });
    expect(ok.status).toBe(201);
    expect((await call('PATCH', `/v1/webhooks/${ok.body.id}`, { url: 'https://192.168.0.1/' })).status).toBe(422);
    expect(await ctx.platform.db('webhooks').where({ form_id: form.id })).toHaveLength(1);
  });
});
