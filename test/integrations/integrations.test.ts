import { eventually } from '@intake/shared/testing';
import {
  AIRTABLE_TOKEN,
  BASE_ID,
  call,
  endedDelivery,
  integrationSuite,
  KEY,
  newForm,
  NOTION_DATABASE,
  NOTION_TOKEN,
  post,
  SPREADSHEET,
  t,
  type Delivery,
} from './harness';

integrationSuite();

async function connect(formId: string, format: string, destination: Record<string, string>) {
  const created = await call('POST', `/v1/forms/${formId}/webhooks`, { format, destination });
  expect(created.status).toBe(201);
  return created.body as { id: string; url: string; destination: Record<string, string> };
}

describe('Google Sheets', () => {
  it('appends a row per submission under a header kept in posted field order, new fields as new columns (the grid grown)', async () => {
    t.google.register(KEY);
    const rows = [['Submission', 'Received at', 'name']];
    t.google.spreadsheets.set(SPREADSHEET, {
      sheets: new Map([['Leads', rows]]),
      sharedWith: new Set([KEY.client_email]),
      columns: new Map([['Leads', 4]]), // fewer than the fields will need: the sheet is given more
    });
    const form = await newForm();
    const webhook = await connect(form.id, 'google_sheets', {
      spreadsheet_id: `https://docs.google.com/spreadsheets/d/${SPREADSHEET}/edit#gid=0`,
      sheet: 'Leads',
      service_account_key: JSON.stringify(KEY),
    });
    expect(webhook.destination).toEqual({
      spreadsheet_id: SPREADSHEET,
      sheet: 'Leads',
      client_email: KEY.client_email,
    });
    expect(webhook.url).toBe(`https://docs.google.com/spreadsheets/d/${SPREADSHEET}/edit#sheet=Leads`);
    const ping = await call('POST', `/v1/webhooks/${webhook.id}/test`);
    expect(ping.body).toMatchObject({ ok: true, status_code: 200 });
    expect(rows).toHaveLength(1); // a test ping writes nothing

    const first = await post(form.slug, { email: 'ada@example.com', name: 'Ada', message: '=HYPERLINK("x")' });
    expect((await endedDelivery(webhook.id, first)).status).toBe('succeeded');
    const second = await post(form.slug, { name: 'Grace', phone: '+44 20 7946 0000', email: 'grace@example.com' });
    const delivery = await endedDelivery(webhook.id, second);
    expect(delivery.status).toBe('succeeded');
    expect(delivery.attempts[0]!.response_body).toMatch(/^Appended a row at 'Leads'!A3; new columns: phone$/);

    expect(rows[0]).toEqual(['Submission', 'Received at', 'name', 'email', 'message', 'phone']);
    // Written before `phone` had a column: a RAW cell keeps the formula as text.
    expect(rows[1]).toEqual([first, expect.stringMatching(/^\d{4}-/), 'Ada', 'ada@example.com', '=HYPERLINK("x")']);
    expect(rows[2]).toEqual([
      second,
      expect.stringMatching(/^\d{4}-/),
      'Grace',
      'grace@example.com',
      '',
      '+44 20 7946 0000',
    ]);
    expect(t.google.spreadsheets.get(SPREADSHEET)!.columns!.get('Leads')).toBe(6);
  });

  it('tells the owner when the spreadsheet is not shared with the service account', async () => {
    t.google.spreadsheets.set('1' + 'n'.repeat(30), { sheets: new Map([['Sheet1', []]]), sharedWith: new Set() });
    const form = await newForm();
    const webhook = await connect(form.id, 'google_sheets', {
      spreadsheet_id: '1' + 'n'.repeat(30),
      service_account_key: JSON.stringify(KEY),
    });
    const ping = await call('POST', `/v1/webhooks/${webhook.id}/test`);
    expect(ping.body).toMatchObject({ ok: false, status_code: 403 });
    expect(ping.body['error']).toBe(
      `Google Sheets answered 403: The caller does not have permission (share the spreadsheet with ${KEY.client_email} as an editor)`,
    );
  });
});

describe('Airtable', () => {
  it('creates a record per submission, fields by name; those the table lacks are skipped and named', async () => {
    t.airtable.tables.push({
      id: 'tblLeads0000000001',
      name: 'Leads',
      fields: [
        { id: 'fld1', name: 'Name', type: 'singleLineText' },
        { id: 'fld2', name: 'Email', type: 'email' },
        { id: 'fld3', name: 'Submission', type: 'singleLineText' },
      ],
      records: [],
    });
    const form = await newForm();
    const webhook = await connect(form.id, 'airtable', { base_id: BASE_ID, table: 'Leads', token: AIRTABLE_TOKEN });
    expect(webhook.destination).toEqual({ base_id: BASE_ID, table: 'Leads' });
    const id = await post(form.slug, { name: 'Ada', email: 'ada@example.com', company: 'Analytical', notes: 'hi' });
    const delivery = await endedDelivery(webhook.id, id);
    expect(delivery.status).toBe('succeeded');
    expect(delivery.attempts[0]!.response_body).toMatch(
      /^Created record rec\w+ in “Leads”; skipped fields the table does not have: company, notes$/,
    );
    expect(t.airtable.tables[0]!.records).toEqual([
      expect.objectContaining({ fields: { Submission: id, Name: 'Ada', Email: 'ada@example.com' } }),
    ]);
  });

  it('retries a 429 after the Retry-After the API sent, not the ladder’s shorter step', async () => {
    const form = await newForm();
    const webhook = await connect(form.id, 'airtable', {
      base_id: BASE_ID,
      table: 'tblLeads0000000001',
      token: AIRTABLE_TOKEN,
    });
    await call('POST', `/v1/webhooks/${webhook.id}/test`); // reads the table once, so the next calls are the writes
    t.airtable.rateLimitNext(1, 2);
    const id = await post(form.slug, { name: 'Lin' });
    const delivery = await endedDelivery(webhook.id, id);
    expect(delivery.status).toBe('succeeded');
    expect(delivery.attempts.map((a) => a.status_code)).toEqual([429, 200]);
    expect(delivery.attempts[0]!.error).toMatch(/^Airtable answered 429/);
    const writes = t.airtable.requests.filter((r) => r.method === 'POST').slice(-2);
    expect(writes[1]!.at - writes[0]!.at).toBeGreaterThanOrEqual(1900);
  });

  it('waits the 30 s Airtable documents after a 429 that names no wait', async () => {
    const form = await newForm();
    const webhook = await connect(form.id, 'airtable', { base_id: BASE_ID, table: 'Leads', token: AIRTABLE_TOKEN });
    await call('POST', `/v1/webhooks/${webhook.id}/test`); // reads the table once, so the next call is the write
    t.airtable.rateLimitNext(1, null);
    const id = await post(form.slug, { name: 'Lin' });
    const waiting = await eventually(
      async () => {
        const list = (await call('GET', `/v1/webhooks/${webhook.id}/deliveries`)).body.data as unknown as Delivery[];
        return list.find((d) => d.submission_id === id && d.status === 'retrying');
      },
      { message: 'the delivery waits for its retry' },
    );
    const wait = Date.parse(waiting.next_attempt_at!) - Date.parse(waiting.attempts[0]!.started_at);
    expect(wait).toBeGreaterThanOrEqual(29_000);
  });

  it('shows the owner a refused token, in the test ping and in the delivery log', async () => {
    const form = await newForm();
    const webhook = await connect(form.id, 'airtable', {
      base_id: BASE_ID,
      table: 'Leads',
      token: 'patRevoked0000000000',
    });
    const ping = await call('POST', `/v1/webhooks/${webhook.id}/test`);
    const refused =
      'Airtable answered 401: AUTHENTICATION_REQUIRED: Authentication required (Airtable refused the token: ' +
      'connect the integration again with a current personal access token)';
    expect(ping.body).toMatchObject({ ok: false, status_code: 401, error: refused });
    const id = await post(form.slug, { name: 'Lin' });
    const delivery = await endedDelivery(webhook.id, id);
    expect(delivery.attempts[0]).toMatchObject({ status_code: 401, error: refused });
  });
});

describe('Notion', () => {
  it('creates a page per submission, each field as its property’s type takes it', async () => {
    Object.assign(t.notion.source.properties, { Name: 'title', Email: 'email', Seats: 'number', Plan: 'select' });
    const form = await newForm();
    const webhook = await connect(form.id, 'notion', {
      database_id: `https://www.notion.so/acme/${NOTION_DATABASE.replace(/-/g, '')}?v=abc`,
      token: NOTION_TOKEN,
    });
    expect(webhook.destination).toEqual({ database_id: NOTION_DATABASE });
    const id = await post(form.slug, { name: 'Ada', email: 'ada@example.com', seats: 'many', plan: 'Team, yearly' });
    const delivery = await endedDelivery(webhook.id, id);
    expect(delivery.status).toBe('succeeded');
    expect(delivery.attempts[0]!.response_body).toMatch(/^Created page \w+; skipped fields: seats$/);
    expect(t.notion.source.pages.at(-1)!.properties).toEqual({
      Name: { title: [{ type: 'text', text: { content: 'Ada' } }] },
      Email: { email: 'ada@example.com' },
      Plan: { select: { name: 'Team  yearly' } },
    });
  });
});

describe('connecting', () => {
  it('refuses what an integration does not take, naming the field and never quoting a credential', async () => {
    const form = await newForm();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ format: 'notion' }, 'body/destination', 'is required for notion'],
      [
        { format: 'notion', url: 'https://hooks.example.com/x', destination: {} },
        'body/url',
        'is not taken by notion: it writes to its destination',
      ],
      [
        { url: 'https://hooks.example.com/x', destination: { token: 'x' } },
        'body/destination',
        'is only taken by google_sheets, airtable and notion',
      ],
      [
        { format: 'notion', destination: { database_id: 'nope', token: NOTION_TOKEN } },
        'body/destination/database_id',
        'is not a database id or a database’s address',
      ],
      [
        { format: 'airtable', destination: { base_id: BASE_ID, table: 'Leads', sheet: 'x', token: AIRTABLE_TOKEN } },
        'body/destination/sheet',
        'is not a setting of airtable',
      ],
      [
        { format: 'airtable', destination: { base_id: BASE_ID, table: 'Leads', token: 'two words here' } },
        'body/destination/token',
        'is not an API token (10 to 500 printable characters, no spaces)',
      ],
      [
        {
          format: 'google_sheets',
          destination: {
            spreadsheet_id: SPREADSHEET,
            service_account_key: '{"type":"service_account","client_email":"a@b.example","private_key":"SECRET-PEM"}',
          },
        },
        'body/destination/service_account_key',
        'holds a private_key that is not a readable PEM key',
      ],
    ];
    for (const [body, field, message] of cases) {
      const res = await call('POST', `/v1/forms/${form.id}/webhooks`, body);
      expect({ status: res.status, errors: res.body['errors'] }).toEqual({ status: 422, errors: [{ field, message }] });
    }
    expect(t.answers.join('\n')).not.toContain('SECRET-PEM');
  });

  it('changes a destination keeping its credential, and refuses turning an integration into something else', async () => {
    const form = await newForm();
    const webhook = await connect(form.id, 'airtable', { base_id: BASE_ID, table: 'Leads', token: AIRTABLE_TOKEN });
    const moved = await call('PATCH', `/v1/webhooks/${webhook.id}`, { destination: { table: 'tblLeads0000000001' } });
    expect(moved.body).toMatchObject({ destination: { base_id: BASE_ID, table: 'tblLeads0000000001' } });
    expect((await call('POST', `/v1/webhooks/${webhook.id}/test`)).body).toMatchObject({ ok: true });
    const refused = await call('PATCH', `/v1/webhooks/${webhook.id}`, { format: 'standard' });
    expect(refused.status).toBe(422);
    expect((await call('GET', `/v1/webhooks/${webhook.id}/sample`)).status).toBe(409); // it signs no request
    const again = await call('POST', `/v1/forms/${form.id}/webhooks`, {
      format: 'airtable',
      destination: { base_id: BASE_ID, table: 'tblLeads0000000001', token: AIRTABLE_TOKEN },
    });
    expect(again.status).toBe(409);
  });
});

describe('credentials', () => {
  it('appear in no answer of the API and nowhere in the delivery process’s log', () => {
    const secrets = [AIRTABLE_TOKEN, NOTION_TOKEN, 'patRevoked0000000000', ...KEY.private_key.split('\n').slice(1, 4)];
    const answers = t.answers.join('\n');
    const log = t.output.join('');
    expect(log).toContain('"msg":"NATS answered: workers started"'); // its log is the one read here
    for (const secret of secrets) {
      expect(answers.includes(secret)).toBe(false);
      expect(log.includes(secret)).toBe(false);
    }
    expect([...t.google.issued.keys()].some((token) => log.includes(token))).toBe(false);
  });
});
