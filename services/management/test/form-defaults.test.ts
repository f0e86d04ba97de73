import { subscribeFormChanges, type FormChange } from '@intake/shared/messaging';
import { eventually, factories, managementKeyWithRole, useStarted } from '@intake/shared/testing';
import { api, startManagement } from './helpers';

/**
 * A project's form defaults and its forms: what a form inherits when it is made, when the project's defaults change,
 * when it sets a setting itself and takes it back, when it moves; copies of a form and of a project's forms; templates.
 */
const ctx = useStarted(() => startManagement());

type Call = ReturnType<typeof api>;
type Form = { id: string; slug: string; name: string; project_id: string; inherited: string[] } & Record<
  string,
  unknown
>;

/** An agency: a client's project with one form already made before the client had defaults. */
async function agency() {
  const account = await factories.account(ctx.platform.db);
  const call = api(ctx.url, account.managementKey);
  const client = (await call('POST', '/v1/projects', { name: `Client ${Date.now()}` })).body as { id: string };
  const created = async (body: object): Promise<Form> => {
    const res = await call('POST', '/v1/forms', { project_id: client.id, ...body });
    expect(res.status).toBe(201);
    return res.body as Form;
  };
  const form = (id: string) => call('GET', `/v1/forms/${id}`).then((r) => r.body as Form);
  const setDefaults = async (defaults: object, project = client.id) => {
    const res = await call('PATCH', `/v1/projects/${project}`, { form_defaults: defaults });
    expect(res.status).toBe(200);
    return res.body as { form_defaults: object };
  };
  return { account, call, client, created, form, setDefaults };
}

const LEADS = { notify_emails: ['leads@agency.example'], mail_from_name: 'Acme Dental' };

describe('form defaults, what works: a change of the project’s', () => {
  it('writes a change into every form of the project that does not set it itself, the trash’s too, and announces each', async () => {
    const a = await agency();
    const plain = await a.created({ name: 'Contact' });
    const own = await a.created({ name: 'Careers', notify_emails: ['hr@client.example'] });
    const trashed = await a.created({ name: 'Old' });
    expect((await a.call('DELETE', `/v1/forms/${trashed.id}`)).status).toBe(204);
    const notices: FormChange[] = [];
    const subscription = subscribeFormChanges(ctx.platform.nats, (c) => notices.push(c));
    try {
      await ctx.platform.nats.nc.flush();
      const project = await a.setDefaults({ ...LEADS, retention_days: null, spam_rules: { max_links: 2 } });
      expect(project.form_defaults).toEqual({ ...LEADS, retention_days: null, spam_rules: { max_links: 2 } });
      expect((await a.call('GET', `/v1/projects/${a.client.id}`)).body.form_defaults).toEqual(project.form_defaults);

      expect(await a.form(plain.id)).toMatchObject({
        ...LEADS,
        spam_rules: { max_links: 2 },
        inherited: ['notify_emails', 'mail_from_name', 'spam_rules', 'retention_days'],
      });
      expect(await a.form(own.id)).toMatchObject({
        notify_emails: ['hr@client.example'],
        mail_from_name: 'Acme Dental',
        inherited: ['mail_from_name', 'spam_rules', 'retention_days'],
      });
      const inTrash = await ctx.platform.db('forms').where({ id: trashed.id }).first('notify_emails', 'mail_from_name');
      expect(inTrash).toEqual(LEADS);
      await eventually(() => [plain, own, trashed].every((f) => notices.some((n) => n.form_id === f.id)), {
        message: 'each changed form announced',
      });
      expect(notices).toContainEqual({ form_id: plain.id, slug: plain.slug });
    } finally {
      subscription.stop();
    }

    // Replaced as a whole: a setting the project stops setting stays on its forms as their own value.
    await a.setDefaults({ notify_emails: ['new-leads@agency.example'] });
    expect(await a.form(plain.id)).toMatchObject({
      notify_emails: ['new-leads@agency.example'],
      mail_from_name: 'Acme Dental',
      inherited: ['notify_emails'],
    });
    expect((await a.form(own.id)).notify_emails).toEqual(['hr@client.example']);

    const entry = await ctx.platform
      .db('audit_log')
      .where({ account_id: a.account.id, action: 'project.updated' })
      .orderBy('at', 'desc')
      .first('details');
    expect(entry.details).toEqual({ changed: ['form_defaults'], settings: ['notify_emails'], forms: 2 });
    const log = (await a.call('GET', '/v1/audit-log?action=project.updated')).body.data as { summary: string }[];
    expect(log[0]?.summary).toMatch(/changed the form defaults of the project “Client .*” \(2 forms updated\)\.$/);
  });
});

describe('form defaults, what works: a form’s own settings', () => {
  it('a new form takes the project’s defaults for what it does not give itself, and keeps what it gives', async () => {
    const a = await agency();
    await a.setDefaults({ ...LEADS, allowed_origins: ['https://acme.example'], spam_filter: 'on' });
    const made = await a.created({ name: 'Quote', spam_filter: 'off' });
    expect(made).toMatchObject({
      ...LEADS,
      allowed_origins: ['https://acme.example'],
      spam_filter: 'off',
      inherited: ['notify_emails', 'allowed_origins', 'mail_from_name'],
    });
    // What it gave itself stays when the project changes it; what it inherits follows.
    await a.setDefaults({ ...LEADS, allowed_origins: ['https://acme.example'], spam_filter: 'shadow' });
    expect((await a.form(made.id)).spam_filter).toBe('off');
    // A form made in the account's default project inherits nothing here.
    const elsewhere = (await a.call('POST', '/v1/forms', { name: 'Agency' })).body as Form;
    expect(elsewhere).toMatchObject({ notify_emails: [], inherited: [] });
  });

  it('a setting given with PATCH becomes the form’s own; `inherit` takes it from the project again', async () => {
    const a = await agency();
    const form = await a.created({ name: 'Contact' });
    await a.setDefaults(LEADS);
    const changed = await a.call('PATCH', `/v1/forms/${form.id}`, { mail_from_name: 'Front desk' });
    expect(changed.body).toMatchObject({ mail_from_name: 'Front desk', inherited: ['notify_emails'] });
    await a.setDefaults({ ...LEADS, mail_from_name: 'Acme Dental Clinic' });
    expect((await a.form(form.id)).mail_from_name).toBe('Front desk');

    const back = await a.call('PATCH', `/v1/forms/${form.id}`, { inherit: ['mail_from_name'], name: 'Contact us' });
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({
      name: 'Contact us',
      mail_from_name: 'Acme Dental Clinic',
      inherited: ['notify_emails', 'mail_from_name'],
    });
    await a.setDefaults({ ...LEADS, mail_from_name: 'Acme' });
    expect((await a.form(form.id)).mail_from_name).toBe('Acme');
  });

  it('a form moved to another project takes its defaults for what it does not set itself', async () => {
    const a = await agency();
    const other = (await a.call('POST', '/v1/projects', { name: 'Client B' })).body as { id: string };
    await a.setDefaults(LEADS);
    await a.setDefaults(
      { notify_emails: ['b@client-b.example'], pages: { thank_you: { title: 'Thanks from B' } } },
      other.id,
    );
    const form = await a.created({ name: 'Contact', mail_from_name: 'Mine' });
    const moved = await a.call('PATCH', `/v1/forms/${form.id}`, { project_id: other.id });
    expect(moved.body).toMatchObject({
      project_id: other.id,
      notify_emails: ['b@client-b.example'],
      mail_from_name: 'Mine',
      pages: { thank_you: { title: 'Thanks from B' } },
      inherited: ['notify_emails', 'pages'],
    });
  });
});

describe('copies of forms', () => {
  it('copies a form with its settings and what it sets itself, not its webhooks, into its project or another', async () => {
    const a = await agency();
    await a.setDefaults(LEADS);
    const original = await a.created({
      name: 'Contact',
      status: 'paused',
      honeypot_field: 'website',
      mail_from_name: 'Front desk',
      redirect_url: 'https://acme.example/thanks',
      spam_rules: { blocked_words: ['casino'] },
    });
    expect((await a.call('POST', `/v1/forms/${original.id}/webhooks`, { url: 'https://hooks.example/x' })).status).toBe(
      201,
    );
    const copy = await a.call('POST', `/v1/forms/${original.id}/duplicate`, {});
    expect(copy.status).toBe(201);
    expect(copy.headers.get('location')).toBe(`/v1/forms/${copy.body.id}`);
    const same = (f: Form) => {
      const { id: _i, slug: _s, name: _n, ingest_url: _u, created_at: _c, updated_at: _up, ...settings } = f;
      return settings;
    };
    expect(copy.body).toMatchObject({ name: 'Contact (copy)', status: 'paused' });
    expect(copy.body.slug).not.toBe(original.slug);
    expect(same(copy.body)).toEqual(same(await a.form(original.id)));
    expect((await a.call('GET', `/v1/forms/${copy.body.id}/webhooks`)).body.data).toEqual([]);
    // The copy follows the project as the original does.
    await a.setDefaults({ ...LEADS, notify_emails: ['other@agency.example'] });
    expect((await a.form(copy.body.id)).notify_emails).toEqual(['other@agency.example']);

    const other = (await a.call('POST', '/v1/projects', { name: 'Client B' })).body as { id: string };
    await a.setDefaults({ mail_from_name: 'Client B', notify_emails: ['b@client-b.example'] }, other.id);
    const there = await a.call('POST', `/v1/forms/${original.id}/duplicate`, {
      name: 'B contact',
      project_id: other.id,
    });
    expect(there.body).toMatchObject({
      name: 'B contact',
      project_id: other.id,
      mail_from_name: 'Front desk',
      notify_emails: ['b@client-b.example'],
      inherited: ['notify_emails'],
    });
    const entry = await ctx.platform
      .db('audit_log')
      .where({ account_id: a.account.id, action: 'form.created', target_id: there.body.id })
      .first('details');
    expect(entry.details).toEqual({ slug: there.body.slug, copy_of: original.id });
  });

  it('starts a project from another’s forms: its defaults and a copy of each form out of the trash', async () => {
    const a = await agency();
    await a.setDefaults({ ...LEADS, allowed_origins: ['https://acme.example'] });
    const contact = await a.created({ name: 'Contact', mail_from_name: 'Front desk' });
    await a.created({ name: 'Quote' });
    const gone = await a.created({ name: 'Gone' });
    expect((await a.call('DELETE', `/v1/forms/${gone.id}`)).status).toBe(204);

    const res = await a.call('POST', '/v1/projects', { name: 'Client C', forms_from: a.client.id });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Client C',
      form_count: 2,
      form_defaults: { ...LEADS, allowed_origins: ['https://acme.example'] },
    });
    const copies = (await a.call('GET', `/v1/forms?project_id=${res.body.id}`)).body.data as Form[];
    expect(copies.map((f) => f.name).sort()).toEqual(['Contact', 'Quote']);
    expect(copies.find((f) => f.name === 'Contact')).toMatchObject({
      mail_from_name: 'Front desk',
      inherited: ['notify_emails', 'allowed_origins'],
    });
    expect(copies.every((f) => f.id !== contact.id && f.slug !== contact.slug)).toBe(true);
    // The new client's defaults are its own from now on.
    await a.setDefaults({ notify_emails: ['c@client-c.example'] }, res.body.id);
    expect((await a.form(contact.id)).notify_emails).toEqual(LEADS.notify_emails);
    const log = (await a.call('GET', `/v1/audit-log?project_id=${res.body.id}&limit=10`)).body.data as {
      action: string;
      summary: string;
    }[];
    expect(log.map((e) => e.action)).toEqual(['project.updated', 'form.created', 'form.created', 'project.created']);
    expect(log[3]?.summary).toMatch(/created the project “Client C” with a copy of another project’s 2 forms\.$/);
  });
});

describe('form templates', () => {
  it('fills in each template’s settings as the form’s own; what the body gives wins', async () => {
    const a = await agency();
    await a.setDefaults({ notify_emails: ['leads@agency.example'], spam_rules: { max_links: 9 } });
    const contact = await a.created({ name: 'Contact', template: 'contact' });
    expect(contact).toMatchObject({
      notify_emails: ['leads@agency.example'],
      notification_template: { subject: 'Message from {{name}}' },
      spam_rules: { required_fields: ['email', 'message'], max_links: 2, block_disposable: true },
      autoresponse: { enabled: false, email_field: 'email' },
      inherited: ['notify_emails'],
    });
    const jobs = await a.created({
      name: 'Jobs',
      template: 'job_application',
      notification_template: { subject: 'CV: {{name}}' },
    });
    expect(jobs).toMatchObject({
      notification_template: { subject: 'CV: {{name}}' },
      spam_rules: { required_fields: ['name', 'email', 'cv'] },
    });
    for (const template of ['quote', 'newsletter']) {
      const made = await a.created({ name: template, template });
      expect(made.spam_rules).toMatchObject({
        block_disposable: true,
        required_fields: expect.arrayContaining(['email']),
      });
      expect((made.notification_template as { subject: string }).subject).toMatch(/\{\{(name|email)\}\}/);
    }
    const doc = (await (await fetch(`${ctx.url}/openapi`)).json()) as {
      components: { schemas: Record<string, unknown> };
      paths: Record<string, { post?: { requestBody: { content: { 'application/json': { schema: unknown } } } } }>;
    };
    const described = JSON.stringify(doc.paths['/v1/forms']?.post?.requestBody);
    for (const template of ['contact', 'quote', 'job_application', 'newsletter'])
      expect(described).toContain(`\`${template}\``);
    expect(described).toContain('file field `cv`');
  });
});

describe('form defaults, what errors', () => {
  it('422 for a default that does not fit the form’s setting, an unknown setting, or a null where none is taken', async () => {
    const a = await agency();
    for (const [defaults, field] of [
      [{ notify_emails: ['not an address'] }, 'body/form_defaults/notify_emails/0'],
      [{ honeypot_field: 'website' }, 'body/form_defaults/honeypot_field'],
      [{ notify_emails: null }, 'body/form_defaults/notify_emails'],
      [{ spam_filter: 'always' }, 'body/form_defaults/spam_filter'],
      [{ retention_days: 0 }, 'body/form_defaults/retention_days'],
      [{ mail_from_name: 'Evil <x@y.z>' }, 'body/form_defaults/mail_from_name'],
      [{ spam_rules: { max_links: -1 } }, 'body/form_defaults/spam_rules/max_links'],
    ] as const) {
      const res = await a.call('PATCH', `/v1/projects/${a.client.id}`, { form_defaults: defaults });
      expect({ defaults, status: res.status, fields: res.body.errors?.map((e: { field: string }) => e.field) }).toEqual(
        {
          defaults,
          status: 422,
          fields: expect.arrayContaining([field]),
        },
      );
    }
    expect((await a.call('PATCH', `/v1/projects/${a.client.id}`, {})).status).toBe(422);
    expect((await a.call('GET', `/v1/projects/${a.client.id}`)).body.form_defaults).toEqual({});
  });

  it('422 for `inherit` naming what the project does not set, or a setting also given a value', async () => {
    const a = await agency();
    await a.setDefaults(LEADS);
    const form = await a.created({ name: 'Contact', mail_from_name: 'Mine' });
    for (const [body, field] of [
      [{ inherit: ['allowed_origins'] }, 'body/inherit/0'],
      [{ inherit: ['mail_from_name'], mail_from_name: 'Other' }, 'body/inherit/0'],
      [{ inherit: ['name'] }, 'body/inherit/0'],
      [{ inherit: ['mail_from_name', 'mail_from_name'] }, 'body/inherit'],
    ] as const) {
      const res = await a.call('PATCH', `/v1/forms/${form.id}`, body);
      expect({ body, status: res.status, fields: res.body.errors?.map((e: { field: string }) => e.field) }).toEqual({
        body,
        status: 422,
        fields: [field],
      });
    }
    expect(await a.form(form.id)).toMatchObject({ mail_from_name: 'Mine', inherited: ['notify_emails'] });
    expect((await a.call('POST', '/v1/forms', { name: 'X', template: 'survey' })).status).toBe(422);
    expect((await a.call('POST', `/v1/forms/${form.id}/duplicate`, { name: '' })).status).toBe(422);
    expect((await a.call('POST', `/v1/forms/${form.id}/duplicate`, { slug: 'mine' })).status).toBe(422);
  });
});

describe('form defaults, what must be refused', () => {
  it('404 for another account’s project or form, everywhere one is named', async () => {
    const a = await agency();
    const form = await a.created({ name: 'Contact' });
    const stranger = await factories.account(ctx.platform.db);
    const theirs = api(ctx.url, stranger.managementKey);
    const theirProject = (await theirs('GET', '/v1/projects')).body.data[0].id as string;
    for (const [call, method, path, body] of [
      [theirs, 'PATCH', `/v1/projects/${a.client.id}`, { form_defaults: LEADS }],
      [theirs, 'POST', `/v1/forms/${form.id}/duplicate`, {}],
      [theirs, 'POST', '/v1/projects', { name: 'Mine', forms_from: a.client.id }],
      [a.call, 'POST', `/v1/forms/${form.id}/duplicate`, { project_id: theirProject }],
    ] as [Call, string, string, object][]) {
      const res = await call(method, path, body);
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
    }
    expect((await a.call('GET', `/v1/projects/${a.client.id}`)).body.form_defaults).toEqual({});
    expect((await theirs('GET', '/v1/projects')).body.data).toHaveLength(1);
  });

  it('an editor limited to the client copies only within the client, and cannot set the client’s defaults', async () => {
    const a = await agency();
    const home = (await a.call('GET', '/v1/projects')).body.data[0].id as string;
    const theirs = await a.created({ name: 'Contact' });
    const agencyOwn = (await a.call('POST', '/v1/forms', { name: 'Agency' })).body as Form;
    const key = await managementKeyWithRole(ctx.platform.db, a.account.id, 'editor', { projectIds: [a.client.id] });
    const editor = api(ctx.url, key);
    expect((await editor('POST', `/v1/forms/${theirs.id}/duplicate`, {})).status).toBe(201);
    expect((await editor('POST', `/v1/forms/${theirs.id}/duplicate`, { project_id: home })).status).toBe(404);
    expect((await editor('POST', `/v1/forms/${agencyOwn.id}/duplicate`, { project_id: a.client.id })).status).toBe(404);
    expect((await editor('PATCH', `/v1/projects/${a.client.id}`, { form_defaults: LEADS })).status).toBe(403);
    expect((await editor('PATCH', `/v1/forms/${theirs.id}`, { notify_emails: ['x@client.example'] })).status).toBe(200);
    const viewer = api(ctx.url, await managementKeyWithRole(ctx.platform.db, a.account.id, 'viewer'));
    expect((await viewer('POST', `/v1/forms/${theirs.id}/duplicate`, {})).status).toBe(403);
    expect((await viewer('GET', `/v1/projects/${a.client.id}`)).body.form_defaults).toEqual({});
    expect((await a.call('GET', `/v1/forms?project_id=${home}`)).body.data).toHaveLength(1);
  });
});
