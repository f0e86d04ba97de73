import { DEFAULT_SPAM_RULES } from '@intake/shared/contracts';
import { buildServiceApp, type Worker } from '@intake/shared/runtime';
import { eventually, factories, listen, registerOpenApi, smtpSink, useStarted } from '@intake/shared/testing';
import { managementService, openApi } from '@intake/management';
import { deliveryService } from '@intake/delivery';
import { poster, startIngest, type Answer } from '../../services/ingest/test/helpers';
import { api } from '../../services/management/test/helpers';
import { receiver } from '../../services/delivery/test/helpers';
import posts from '../fixtures/form-posts.json';
import { corpusPosts } from './corpus';

/** Made-up posts of the kinds an agency's client forms get (test/fixtures/form-posts.json says how they were made). */
const formPosts = posts as unknown as { spam: Record<string, string>[]; ham: Record<string, string>[] };

/**
 * What a new form does with spam on day one, through the whole path: posts through ingest, its events relayed to the
 * delivery workers on the same platform, which mail the owner (a real SMTP server on loopback) and call the form's
 * webhook (a real HTTP receiver). Management on the same platform creates the forms and takes the owner's changes.
 */
const s = useStarted(async () => {
  const smtp = await smtpSink();
  const hook = await receiver();
  const h = await startIngest(
    { RATE_LIMIT_POINTS: 100_000, SMTP_URL: smtp.url, WEBHOOK_ALLOW_PRIVATE_NETWORKS: true },
    { relay: true },
  );
  const workers: Worker[] = await deliveryService.startWorkers(h.platform);
  const server = await listen(buildServiceApp(managementService, h.platform).callback());
  registerOpenApi(server.url, openApi(h.platform));
  return {
    ...h,
    smtp,
    hook,
    managementUrl: server.url,
    async close() {
      await Promise.allSettled(workers.map((w) => w.stop()));
      await server.close();
      await h.close();
      await hook.close();
      await smtp.close();
    },
  };
});

/** A new form made through the API as the console makes it, with an owner to mail and a webhook to call. */
async function newForm() {
  const account = await factories.account(s.platform.db, { plan: 'team' });
  const call = api(s.managementUrl, account.managementKey);
  const owner = `owner-${account.id.slice(-8).toLowerCase()}@client.example`;
  const created = await call('POST', '/v1/forms', { name: 'Contact', notify_emails: [owner] });
  expect(created.status).toBe(201);
  const form = created.body;
  const hook = await call('POST', `/v1/forms/${form.id}/webhooks`, { url: `${s.hook.url}/${form.id}` });
  expect(hook.status).toBe(201);
  const post = poster(s.url, form.slug as string);
  const submission = async (id: string) => (await call('GET', `/v1/submissions/${id}`)).body;
  const spamList = async () =>
    (await call('GET', `/v1/forms/${form.id}/submissions?status=spam&limit=100`)).body.data as {
      id: string;
      spam_reasons: string[];
    }[];
  return { account, call, owner, form, post, submission, spamList };
}

const mailsTo = (address: string) => s.smtp.mails.filter((m) => m.to.includes(address));
const hooksOf = (formId: string) => s.hook.requests.filter((r) => r.url === `/${formId}`);
const hookedIds = (formId: string) =>
  hooksOf(formId).map((r) => (JSON.parse(r.body) as { data: { submission_id: string } }).data.submission_id);

/** Posts each payload; the ids of the ones received (201) and how many were answered as spam (the benign 200). */
async function postAll(post: (fields: Record<string, string>) => Promise<Answer>, payloads: Record<string, string>[]) {
  const received: string[] = [];
  let spam = 0;
  for (const payload of payloads) {
    const res = await post(payload);
    if (res.status === 201) received.push(res.body.id as string);
    else {
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ok: true, status: 'accepted' });
      spam++;
    }
  }
  return { received, spam };
}

describe('a new form on day one', () => {
  it('starts `on` with the certain rules and the starting model', async () => {
    const { form } = await newForm();
    expect(form).toMatchObject({ spam_filter: 'on', spam_rules: DEFAULT_SPAM_RULES });
  });

  it('keeps the reviewer’s kinds of spam from the client (no mail, no webhook) and lets real posts through', async () => {
    const { owner, form, post, spamList, submission } = await newForm();
    const spam = await postAll(post, formPosts.spam);
    // 19 of the 20: the one left is a polite lead-widget pitch no certain rule names (the starting model flags it).
    expect(spam.spam).toBe(19);
    const ham = await postAll(post, formPosts.ham);
    expect(ham.spam).toBe(0);
    // Every real post is mailed and hooked; then nothing else was.
    await eventually(() => mailsTo(owner).length === formPosts.ham.length + spam.received.length, {
      timeoutMs: 30_000,
    });
    await eventually(() => hooksOf(form.id).length === formPosts.ham.length + spam.received.length, {
      timeoutMs: 30_000,
    });
    const caught = await spamList();
    expect(caught).toHaveLength(19);
    const hooked = new Set(hookedIds(form.id));
    for (const c of caught) expect(hooked.has(c.id)).toBe(false);
    expect(mailsTo(owner)).toHaveLength(formPosts.ham.length + 1);
    // Each names its rule.
    const kinds = new Set(caught.map((c) => c.spam_reasons[0]?.split(':')[0]));
    expect([...kinds].sort()).toEqual(['disposable-domain', 'known-spam', 'link-in-name']);
    const [missed] = spam.received;
    expect((await submission(missed as string)).spam_reasons).toEqual([
      expect.stringMatching(/^starting-model:0\.9\d$/),
    ]);
  });

  it('lets the corpus’s real mail through (the starting model only records) and catches none of it', async () => {
    const { post } = await newForm();
    const { ham } = corpusPosts();
    const res = await postAll(
      post,
      ham.map((h) => h.payload),
    );
    expect(res.spam).toBe(0);
  });

  it('loosened by its owner: a disposable address passes once the rule is off', async () => {
    const { call, form, post } = await newForm();
    const fields = { name: 'Kate', email: 'kate@mailinator.com', message: 'Do you deliver on Sundays?' };
    expect((await post(fields)).status).toBe(200);
    const { block_disposable: _, ...looser } = DEFAULT_SPAM_RULES;
    expect((await call('PATCH', `/v1/forms/${form.id}`, { spam_rules: looser })).status).toBe(200);
    await eventually(async () => (await post(fields)).status === 201, { timeoutMs: 70_000 });
  });
});
