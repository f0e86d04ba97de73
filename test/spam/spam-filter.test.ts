import { periodKey, type SpamRules } from '@intake/shared/contracts';
import { buildServiceApp } from '@intake/shared/runtime';
import {
  emptyTestDatabaseUrl,
  eventually,
  factories,
  listen,
  registerOpenApi,
  useStarted,
} from '@intake/shared/testing';
import { managementService, openApi } from '@intake/management';
import { accountWithForm, poster, startIngest, type IngestHarness } from '../../services/ingest/test/helpers';
import { api } from '../../services/management/test/helpers';
import { purgeDue } from '../../services/management/src/lifecycle/purge';
import { corpusPosts, type CorpusPost } from './corpus';

/**
 * The spam filter through real HTTP on the machine's Postgres and NATS: ingest takes the posts,
 * management (on the same platform, so its form-change notices reach ingest) takes the owner's
 * settings and marks. Every answer is checked against the served OpenAPI document.
 */
interface Stack extends IngestHarness {
  managementUrl: string;
}

async function startStack(): Promise<Stack> {
  // Training posts come from one address: a budget that never refuses them.
  // A database of its own: the purge a test runs 31 days ahead would purge every other file's data too.
  const h = await startIngest({ RATE_LIMIT_POINTS: 100_000, DATABASE_URL: await emptyTestDatabaseUrl('spamfilter') });
  const server = await listen(buildServiceApp(managementService, h.platform).callback());
  registerOpenApi(server.url, openApi(h.platform));
  const closeIngest = h.close;
  return Object.assign(h, {
    managementUrl: server.url,
    async close() {
      await server.close();
      await closeIngest();
    },
  });
}

/** A fresh account with one form whose spam settings are set through the API before anything posts to it. */
async function ownerWithFilter(s: Stack, settings: { spam_filter?: string; spam_rules?: SpamRules }) {
  const { account, form, post } = await accountWithForm(s);
  const call = api(s.managementUrl, account.managementKey);
  const res = await call('PATCH', `/v1/forms/${form.id}`, settings);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject(settings);
  const submission = async (id: string) => (await call('GET', `/v1/submissions/${id}`)).body;
  const latest = async () => {
    const { body } = await call('GET', `/v1/forms/${form.id}/submissions?limit=1`);
    return body.data[0];
  };
  return { account, form, post, call, submission, latest };
}

async function usedThisMonth(s: Stack, accountId: string): Promise<number> {
  const row = await s.platform
    .db('usage_counters')
    .where({ account_id: accountId, period: periodKey(new Date()) })
    .first('used');
  return row ? Number(row.used) : 0;
}

async function outboxSubjects(s: Stack, submissionId: string): Promise<string[]> {
  const rows = await s.platform.db.raw<{ rows: { subject: string }[] }>(
    `SELECT subject FROM outbox WHERE payload::json ->> 'submission_id' = ?`,
    [submissionId],
  );
  return rows.rows.map((r) => r.subject);
}

const s = useStarted(startStack);

describe('rules', () => {
  it('a blocked domain is spam: the benign answer, stored with its reason, no files, not counted, no created event', async () => {
    const owner = await ownerWithFilter(s, { spam_filter: 'on', spam_rules: { blocked_domains: ['mailinator.com'] } });
    const res = await owner.post(new URLSearchParams({ email: 'Bot@Mailinator.com', message: 'hello' }));
    expect(res.status).toBe(200);
    expect(res.body.id).toBeUndefined();
    const stored = await owner.latest();
    expect(stored).toMatchObject({ status: 'spam', spam_reasons: ['blocked-domain:mailinator.com'] });
    expect(stored.spam_reason).toBe('blocked-domain:mailinator.com');
    expect(await usedThisMonth(s, owner.account.id)).toBe(0);
    expect(await outboxSubjects(s, stored.id)).not.toContainEqual(expect.stringMatching(/submission\.created$/));
    const fine = await owner.post(new URLSearchParams({ email: 'ada@example.com', message: 'hello' }));
    expect(fine.status).toBe(201);
    expect(await owner.submission(fine.body.id as string)).toMatchObject({ status: 'received', spam_reasons: [] });
  });

  it('a subdomain of a blocked domain, a disposable address, a blocked phrase, too many links and a missing field each name themselves', async () => {
    const owner = await ownerWithFilter(s, {
      spam_filter: 'on',
      spam_rules: {
        blocked_domains: ['spam.example'],
        block_disposable: true,
        blocked_words: ['cheap pills'],
        max_links: 1,
        required_fields: ['message'],
      },
    });
    const cases: [Record<string, string>, string[]][] = [
      [{ email: 'a@mx.spam.example', message: 'hi' }, ['blocked-domain:spam.example']],
      [{ email: 'a@mailinator.com', message: 'hi' }, ['disposable-domain:mailinator.com']],
      [{ message: 'Buy CHEAP\n pills now' }, ['blocked-word:cheap pills']],
      [{ message: 'see https://a.example and www.b.example' }, ['too-many-links:2']],
      [{ email: 'ada@example.com' }, ['missing-field:message']],
    ];
    for (const [fields, reasons] of cases) {
      expect((await owner.post(fields)).status).toBe(200);
      expect(await owner.latest()).toMatchObject({ status: 'spam', spam_reasons: reasons });
    }
    // Whole words only: "cheap pillsbury" is not the phrase.
    expect((await owner.post({ message: 'cheap pillsbury dough' })).status).toBe(201);
  });

  it('refuses rules that are not rules (422), and keeps the form as it was', async () => {
    const owner = await ownerWithFilter(s, { spam_filter: 'off' });
    for (const body of [
      { spam_filter: 'sometimes' },
      { spam_rules: { max_links: -1 } },
      { spam_rules: { blocked_words: [''] } },
      { spam_rules: { unknown_rule: true } },
    ]) {
      const res = await owner.call('PATCH', `/v1/forms/${owner.form.id}`, body);
      expect(res.status).toBe(422);
    }
    const { body } = await owner.call('GET', `/v1/forms/${owner.form.id}`);
    expect(body).toMatchObject({ spam_filter: 'off', spam_rules: {} });
  });
});

describe('duplicates', () => {
  it('off by default: the same fields twice are two received posts', async () => {
    const owner = await ownerWithFilter(s, { spam_filter: 'on' });
    expect((await owner.post({ message: 'same' })).status).toBe(201);
    expect((await owner.post({ message: 'same' })).status).toBe(201);
  });

  it('within the window the same fields are spam (`duplicate`); other fields, or the same after the window, are not', async () => {
    const owner = await ownerWithFilter(s, {
      spam_filter: 'on',
      spam_rules: { reject_duplicates: true, duplicate_window_hours: 2 },
    });
    const first = await owner.post({ name: 'Ada', message: 'Hello' });
    expect(first.status).toBe(201);
    expect((await owner.post({ name: 'Ada', message: 'Hello' })).status).toBe(200);
    expect(await owner.latest()).toMatchObject({ status: 'spam', spam_reasons: ['duplicate'] });
    // The same values in another order are other fields (a submission keeps its posted order).
    expect((await owner.post({ message: 'Hello', name: 'Ada' })).status).toBe(201);
    // Three hours later (the rows moved back in time): outside the window.
    await s.platform.db.raw(`UPDATE submissions SET received_at = received_at - interval '3 hours' WHERE form_id = ?`, [
      owner.form.id,
    ]);
    expect((await owner.post({ name: 'Ada', message: 'Hello' })).status).toBe(201);
  });
});

/** Stores each post as ingest would and marks it through the API, as an owner clicking "spam" / "not spam" does. */
async function mark(owner: Awaited<ReturnType<typeof ownerWithFilter>>, examples: CorpusPost[]): Promise<void> {
  for (const example of examples) {
    const stored = await factories.submission(s.platform, {
      accountId: owner.account.id,
      formId: owner.form.id,
      payload: example.payload,
    });
    const res = await owner.call('PATCH', `/v1/submissions/${stored.id}`, {
      status: example.spam ? 'spam' : 'received',
    });
    expect(res.status).toBe(200);
  }
}

/** `on` without the starting model: what the form's own classifier learns is all that scores. */
const ownRulesOnly = { spam_filter: 'on', spam_rules: {} };

describe('the classifier', () => {
  let corpus: { spam: CorpusPost[]; ham: CorpusPost[] };
  beforeAll(() => {
    corpus = corpusPosts();
  });
  const training = () => [...corpus.spam.slice(0, 40), ...corpus.ham.slice(0, 40)];
  const heldOutSpam = () => corpus.spam[100] as CorpusPost;
  const heldOutReal = () => corpus.ham[100] as CorpusPost;

  it('trained on the owner’s marks, catches a held-out spam post and passes a held-out real one', async () => {
    const owner = await ownerWithFilter(s, { spam_filter: 'on' });
    await mark(owner, training());
    const caught = await owner.post(heldOutSpam().payload);
    expect(caught.status).toBe(200);
    const spam = await owner.latest();
    expect(spam.status).toBe('spam');
    expect(spam.spam_score).toBeGreaterThanOrEqual(0.9);
    expect(spam.spam_reasons).toEqual([`classifier:${spam.spam_score.toFixed(2)}`]);
    const passed = await owner.post(heldOutReal().payload);
    expect(passed.status).toBe(201);
    const real = await owner.submission(passed.body.id as string);
    expect(real).toMatchObject({ status: 'received', spam_reasons: [] });
    expect(real.spam_score).toBeLessThan(0.5);
  });

  it('learns from marks made after it was first used: the notice drops the cached model', async () => {
    const owner = await ownerWithFilter(s, ownRulesOnly);
    // Scored with no model yet (no marks, no starting model): nothing to say.
    const before = await owner.post({ message: 'first post' });
    expect(await owner.submission(before.body.id as string)).toMatchObject({ spam_score: null });
    await mark(owner, training());
    await eventually(async () => {
      const res = await owner.post(heldOutSpam().payload);
      return res.status === 200 && (await owner.latest()).spam_reasons[0]?.startsWith('classifier:');
    });
  });

  it('learns per project: marks teach their project’s forms, not another project’s, nor a form with its own', async () => {
    const owner = await ownerWithFilter(s, ownRulesOnly);
    const form = async (body: Record<string, unknown>) => {
      const res = await owner.call('POST', '/v1/forms', { name: 'Sibling', ...ownRulesOnly, ...body });
      expect(res.status).toBe(201);
      return { id: res.body.id as string, post: poster(s.url, res.body.slug as string) };
    };
    const client = (await owner.call('POST', '/v1/projects', { name: 'Client' })).body.id as string;
    const sibling = await form({});
    const elsewhere = await form({ project_id: client });
    const alone = await form({ spam_model: 'form' });
    await mark(owner, training());

    const scoreOf = async (target: { id: string; post: ReturnType<typeof poster> }) => {
      await target.post(heldOutSpam().payload);
      const row = await s.platform.db('submissions').where({ form_id: target.id }).orderBy('id', 'desc').first();
      return row.spam_score as number | null;
    };
    expect(await scoreOf(sibling)).toBeGreaterThanOrEqual(0.9);
    expect(await scoreOf(elsewhere)).toBeNull();
    expect(await scoreOf(alone)).toBeNull();
    const model = async (query: string) => (await owner.call('GET', `/v1/spam/model?${query}`)).body;
    expect(await model(`form_id=${sibling.id}`)).toMatchObject({ scope: { type: 'project' }, learning: false });
    expect(await model(`form_id=${elsewhere.id}`)).toMatchObject({
      scope: { type: 'project', id: client },
      spam_marks: 0,
      learning: true,
    });
    expect(await model(`form_id=${alone.id}`)).toMatchObject({ scope: { type: 'form', id: alone.id }, spam_marks: 0 });

    // Moved into the trained project, the form is judged by its classifier from its next post.
    const home = (await owner.call('GET', `/v1/forms/${owner.form.id}`)).body.project_id as string;
    expect((await owner.call('PATCH', `/v1/forms/${elsewhere.id}`, { project_id: home })).status).toBe(200);
    await eventually(async () => ((await scoreOf(elsewhere)) ?? 0) >= 0.9);
  });

  it('rescuing a caught post fires it once: counted and its created event written', async () => {
    const owner = await ownerWithFilter(s, { spam_filter: 'on' });
    await mark(owner, training());
    expect((await owner.post(heldOutSpam().payload)).status).toBe(200);
    const caught = await owner.latest();
    const used = await usedThisMonth(s, owner.account.id);
    expect((await owner.call('PATCH', `/v1/submissions/${caught.id}`, { status: 'received' })).status).toBe(200);
    expect((await owner.call('PATCH', `/v1/submissions/${caught.id}`, { status: 'received' })).status).toBe(200);
    expect(await usedThisMonth(s, owner.account.id)).toBe(used + 1);
    const created = (await outboxSubjects(s, caught.id)).filter((x) => x.endsWith('submission.created'));
    expect(created).toHaveLength(1);
  });
});

describe('marks', () => {
  it('go with their submission: a marked submission deleted for good (out of the trash) takes its example', async () => {
    const owner = await ownerWithFilter(s, { spam_filter: 'shadow' });
    await mark(owner, [{ spam: true, payload: { email: 'someone@example.com', message: 'buy now' } }]);
    const examples = () => s.platform.db('spam_examples').where({ account_id: owner.account.id });
    const [example] = await examples();
    expect(example).toMatchObject({ is_spam: true, payload: { email: 'someone@example.com', message: 'buy now' } });
    expect((await owner.call('DELETE', `/v1/submissions/${example.submission_id}`)).status).toBe(204);
    // In the trash it can still be restored, mark and all; once the trash's time is up it goes with its example.
    expect(await examples()).toHaveLength(1);
    const later = new Date(Date.now() + 31 * 86_400_000);
    await purgeDue({ ...s.platform, clock: { now: () => later }, trashDays: 30 });
    expect(await examples()).toEqual([]);
  });
});

describe('shadow mode', () => {
  it('changes nothing but the score and the reasons: received, counted, its created event written', async () => {
    const corpus = corpusPosts();
    const owner = await ownerWithFilter(s, {
      spam_filter: 'shadow',
      spam_rules: { blocked_domains: ['spam.example'] },
    });
    await mark(owner, [...corpus.spam.slice(0, 40), ...corpus.ham.slice(0, 40)]);
    const used = await usedThisMonth(s, owner.account.id);
    const payload = Object.assign({}, (corpus.spam[100] as CorpusPost).payload, { email: 'win@spam.example' });
    const res = await owner.post(payload);
    expect(res.status).toBe(201);
    const stored = await owner.submission(res.body.id as string);
    expect(stored.status).toBe('received');
    expect(stored.spam_reason).toBeNull();
    expect(stored.spam_score).toBeGreaterThanOrEqual(0.9);
    expect(stored.spam_reasons).toEqual(['blocked-domain:spam.example', `classifier:${stored.spam_score.toFixed(2)}`]);
    expect(await usedThisMonth(s, owner.account.id)).toBe(used + 1);
    expect(await outboxSubjects(s, stored.id)).toContainEqual(expect.stringMatching(/submission\.created$/));
  });

  it('`off` records no score', async () => {
    const { account, form, post } = await accountWithForm(s);
    const call = api(s.managementUrl, account.managementKey);
    expect((await call('PATCH', `/v1/forms/${form.id}`, { spam_filter: 'off' })).status).toBe(200);
    const res = await post({ message: 'hello' });
    expect((await call('GET', `/v1/submissions/${res.body.id}`)).body).toMatchObject({
      spam_score: null,
      spam_reasons: [],
    });
  });
});
