import {
  AIRTABLE_TOKEN,
  BASE_ID,
  call,
  endedDelivery,
  integrationSuite,
  KEY,
  NOTION_DATABASE,
  NOTION_TOKEN,
  post,
  t,
} from './harness';

/**
 * A form's client in the rows, records and pages its integrations write: a `Project` column in Sheets, a field or
 * property named `Project` in Airtable and Notion, for a form in a project; nothing new for one in the default project.
 * A file of its own: Airtable's tables and Notion's properties are read once a minute by the delivery process, so each
 * integration's destination here is set up before its first write.
 */
integrationSuite();

/** A form named "Contact" in a new project named `project`, or in the account's default project. */
async function contactForm(project?: string): Promise<{ id: string; slug: string }> {
  let projectId: string | undefined;
  if (project) {
    const made = await call('POST', '/v1/projects', { name: project });
    expect(made.status).toBe(201);
    projectId = made.body['id'] as string;
  }
  const form = await call('POST', '/v1/forms', { name: 'Contact', honeypot_field: 'hp', project_id: projectId });
  expect(form.status).toBe(201);
  return form.body as never;
}

async function connect(formId: string, format: string, destination: Record<string, string>): Promise<string> {
  const created = await call('POST', `/v1/forms/${formId}/webhooks`, { format, destination });
  expect(created.status).toBe(201);
  return created.body['id'] as string;
}

describe('the client in integrations', () => {
  it('gives a Sheets row of a form in a project a Project column after the time, and a form in no project none', async () => {
    t.google.register(KEY);
    const spreadsheet = '1' + 'p'.repeat(43);
    const acmeRows: string[][] = [];
    const ownRows: string[][] = [];
    t.google.spreadsheets.set(spreadsheet, {
      sheets: new Map([
        ['Acme', acmeRows],
        ['Own', ownRows],
      ]),
      sharedWith: new Set([KEY.client_email]),
    });
    const acme = await contactForm('Acme Dental');
    const own = await contactForm();
    const key = JSON.stringify(KEY);
    const acmeHook = await connect(acme.id, 'google_sheets', {
      spreadsheet_id: spreadsheet,
      sheet: 'Acme',
      service_account_key: key,
    });
    const ownHook = await connect(own.id, 'google_sheets', {
      spreadsheet_id: spreadsheet,
      sheet: 'Own',
      service_account_key: key,
    });

    const id = await post(acme.slug, { name: 'Ada' });
    expect((await endedDelivery(acmeHook, id)).status).toBe('succeeded');
    expect(acmeRows).toEqual([
      ['Submission', 'Received at', 'Project', 'name'],
      [id, expect.stringMatching(/^\d{4}-/), 'Acme Dental', 'Ada'],
    ]);
    const ownId = await post(own.slug, { name: 'Grace' });
    expect((await endedDelivery(ownHook, ownId)).status).toBe('succeeded');
    expect(ownRows).toEqual([
      ['Submission', 'Received at', 'name'],
      [ownId, expect.stringMatching(/^\d{4}-/), 'Grace'],
    ]);
  });

  it('writes the client to an Airtable table’s Project field, unless a posted field of that name took it', async () => {
    t.airtable.tables.push({
      id: 'tblClients00000001',
      name: 'Clients',
      fields: [
        { id: 'fld1', name: 'Name', type: 'singleLineText' },
        { id: 'fld2', name: 'Project', type: 'singleLineText' },
      ],
      records: [],
    });
    const form = await contactForm('Hale Dental');
    const hook = await connect(form.id, 'airtable', { base_id: BASE_ID, table: 'Clients', token: AIRTABLE_TOKEN });
    const first = await endedDelivery(hook, await post(form.slug, { name: 'Ada' }));
    expect(first.attempts[0]!.response_body).toMatch(/^Created record rec\w+ in “Clients”$/);
    const second = await endedDelivery(hook, await post(form.slug, { name: 'Lin', project: 'a new kitchen' }));
    expect(second.status).toBe('succeeded');
    const records = t.airtable.tables.at(-1)!.records as { fields: Record<string, string> }[];
    expect(records.map((r) => r.fields)).toEqual([
      { Name: 'Ada', Project: 'Hale Dental' },
      { Name: 'Lin', Project: 'a new kitchen' },
    ]);
  });

  it('writes the client to a Notion Project property and names it in the page’s default title', async () => {
    Object.assign(t.notion.source.properties, { Title: 'title', Name: 'rich_text', Project: 'rich_text' });
    const form = await contactForm('Keystone');
    const hook = await connect(form.id, 'notion', { database_id: NOTION_DATABASE, token: NOTION_TOKEN });
    const id = await post(form.slug, { name: 'Ada' });
    expect((await endedDelivery(hook, id)).status).toBe('succeeded');
    const text = (content: string) => [{ type: 'text', text: { content } }];
    expect(t.notion.source.pages.at(-1)!.properties).toEqual({
      Title: { title: text(`Contact — Keystone: ${id}`) },
      Name: { rich_text: text('Ada') },
      Project: { rich_text: text('Keystone') },
    });
  });
});
