import { factories, managementKeyWithRole, useStarted } from '@intake/shared/testing';
import { sealChatUrlsInTheClear } from '../src/webhooks/chat-urls';
import { api, newOwner, startManagementWithWorkers } from './helpers';
import { receiver } from '../../delivery/test/helpers';

/**
 * A chat webhook's URL (Slack, Discord, Teams) is the channel's credential: sealed at rest as an integration's
 * credential is, shown to no one whole (owner, viewer, sample curl, audit log), and still where deliveries go.
 */
const ctx = useStarted(() => startManagementWithWorkers({ retryMs: 300, pollMs: 200 }));
const SECRET = 'SLACKPATHSECRET';
const receivers: { close(): Promise<void> }[] = [];
afterAll(() => Promise.all(receivers.map((r) => r.close())));

async function slackWebhook() {
  const owner = await newOwner(ctx);
  const target = await receiver();
  receivers.push(target);
  const url = `${target.url}/services/T000/B000/${SECRET}`;
  const created = await owner.call('POST', `/v1/forms/${owner.formId}/webhooks`, { url, format: 'slack' });
  expect(created.status).toBe(201);
  return { ...owner, target, url, hook: created.body as { id: string; url: string } };
}

const storedRow = (id: string) => ctx.platform.db('webhooks').where({ id }).first();

describe('chat webhook URLs', () => {
  it('are sealed at rest and shown to no one whole, while deliveries still reach them', async () => {
    const { accountId, formId, call, target, url, hook } = await slackWebhook();
    expect(hook.url).toBe(`${new URL(url).origin}/…${SECRET.slice(-4)}`);
    const stored = await storedRow(hook.id);
    expect(stored.url).not.toContain(SECRET);
    expect(ctx.platform.secrets.open(stored.credential)).toBe(url);

    const viewer = api(ctx.url, await managementKeyWithRole(ctx.platform.db, accountId, 'viewer'));
    const answers = [
      await viewer('GET', `/v1/forms/${formId}/webhooks`),
      await viewer('GET', `/v1/webhooks/${hook.id}`),
      await viewer('GET', `/v1/webhooks/${hook.id}/sample`),
      await call('GET', '/v1/audit-log'),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(JSON.stringify(answers.map((a) => a.body))).not.toContain(SECRET);
    expect(answers[1]!.body).toMatchObject({ url: hook.url });

    // The URL as shown, sent back with the form (the console's edit saved unchanged), changes nothing.
    expect((await call('PATCH', `/v1/webhooks/${hook.id}`, { url: hook.url })).status).toBe(200);
    const ping = await call('POST', `/v1/webhooks/${hook.id}/test`);
    expect(ping.body).toMatchObject({ ok: true });
    expect(target.requests.map((r) => r.url)).toEqual([`/services/T000/B000/${SECRET}`]);
    // The same URL again is the same target, sealed or not.
    const again = await call('POST', `/v1/forms/${formId}/webhooks`, { url, format: 'slack' });
    expect(again.status).toBe(409);
  });

  it('are sealed when a webhook becomes a chat one, and in the clear again when it becomes standard', async () => {
    const { formId, call } = await newOwner(ctx);
    const url = `https://hooks.example.com/services/T000/B000/${SECRET}`;
    const created = await call('POST', `/v1/forms/${formId}/webhooks`, { url });
    expect(created.body.url).toBe(url);
    const chat = await call('PATCH', `/v1/webhooks/${created.body.id}`, { format: 'discord' });
    expect(chat.body).toMatchObject({ format: 'discord', url: `https://hooks.example.com/…${SECRET.slice(-4)}` });
    const sealed = await storedRow(created.body.id);
    expect([sealed.url.includes(SECRET), ctx.platform.secrets.open(sealed.credential)]).toEqual([false, url]);
    const standard = await call('PATCH', `/v1/webhooks/${created.body.id}`, { format: 'standard' });
    expect(standard.body).toMatchObject({ format: 'standard', url });
    expect(await storedRow(created.body.id)).toMatchObject({ url, credential: null });
  });

  it('have no signing secret: none shown when added, none to rotate, a new one when made standard', async () => {
    const { call, hook } = await slackWebhook();
    expect(hook).not.toHaveProperty('secret');
    const rotate = await call('PATCH', `/v1/webhooks/${hook.id}`, { rotate_secret: true });
    expect(rotate.status).toBe(422);
    expect(rotate.body.errors).toEqual([
      { field: 'body/rotate_secret', message: 'is not taken by a slack webhook: its messages are not signed' },
    ]);
    const before = (await storedRow(hook.id)).secret;
    // Made a signed webhook, it gets a secret its owner sees this once (the one it had was never shown).
    const standard = await call('PATCH', `/v1/webhooks/${hook.id}`, { format: 'standard' });
    expect(standard.body.secret).toMatch(/^whsec_/);
    expect((await storedRow(hook.id)).secret).not.toBe(before);
    // Made a chat one again, nothing secret comes back.
    const teams = await call('PATCH', `/v1/webhooks/${hook.id}`, { format: 'teams' });
    expect(teams.body).not.toHaveProperty('secret');
  });

  it('stored in the clear before are shown masked, and sealed by the management process’s upkeep', async () => {
    const { accountId, formId, call } = await newOwner(ctx);
    const url = `https://discord.com/api/webhooks/123/${SECRET}`;
    const { id } = await factories.webhook(ctx.platform, { accountId, formId, url });
    await ctx.platform.db('webhooks').where({ id }).update({ format: 'discord' });
    expect((await call('GET', `/v1/webhooks/${id}`)).body.url).toBe(`https://discord.com/…${SECRET.slice(-4)}`);
    expect(await sealChatUrlsInTheClear(ctx.platform.db, ctx.platform.secrets)).toBeGreaterThanOrEqual(1);
    const sealed = await storedRow(id);
    expect([sealed.url, ctx.platform.secrets.open(sealed.credential)]).toEqual([
      `https://discord.com/…${SECRET.slice(-4)}`,
      url,
    ]);
    expect((await call('GET', `/v1/webhooks/${id}`)).body.url).toBe(sealed.url);
  });
});
