import fc from 'fast-check';
import { factories, useStarted } from '@intake/shared/testing';
import { ownerWithForm as ownerWithFormOf, startManagement } from './helpers';
import { parseCsv } from './seed';

const ctx = useStarted(() => startManagement());

const ownerWithForm = () => ownerWithFormOf(ctx);

/** The CSV export's own columns, before one per field. */
const FIXED_COLUMNS = ['id', 'received_at', 'status', 'files', 'spam_score', 'spam_reasons'];

describe('export, what works: CSV', () => {
  it('CSV: RFC 4180 quoting and CRLF, one column per field seen, newest first, as an attachment', async () => {
    const { form, call, submit } = await ownerWithForm();
    const older = await submit({
      payload: { name: 'Ada, Countess', message: 'She said "hi"\nthen left' },
      receivedAt: new Date('2026-05-01T00:00:00.000Z'),
    });
    const newer = await submit({
      status: 'spam',
      payload: { name: 'Bot', phone: '+1 555' },
      receivedAt: new Date('2026-05-02T00:00:00.000Z'),
    });
    const res = await call('GET', `/v1/forms/${form.id}/export.csv`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${form.slug}-submissions.csv"`);
    expect(res.text).toContain('"Ada, Countess",,"She said ""hi""\nthen left"');
    expect(res.text.endsWith('\r\n')).toBe(true);
    expect(parseCsv(res.text)).toEqual([
      // The fields in the order they first appear reading down the export: the newer row's, then the older's.
      [...FIXED_COLUMNS, 'name', 'phone', 'message'],
      [newer.id, '2026-05-02T00:00:00.000Z', 'spam', '0', '', 'honeypot', 'Bot', '+1 555', ''],
      [older.id, '2026-05-01T00:00:00.000Z', 'received', '0', '', '', 'Ada, Countess', '', 'She said "hi"\nthen left'],
    ]);
    const filtered = parseCsv((await call('GET', `/v1/forms/${form.id}/export.csv?status=received`)).text);
    expect(filtered).toEqual([
      [...FIXED_COLUMNS, 'name', 'message'],
      [older.id, '2026-05-01T00:00:00.000Z', 'received', '0', '', '', 'Ada, Countess', 'She said "hi"\nthen left'],
    ]);
  });

  it('CSV: cells that a spreadsheet would run as a formula are neutralised; NDJSON keeps them as sent', async () => {
    const { form, call, submit } = await ownerWithForm();
    const payload = {
      a: '=HYPERLINK("https://evil.example","click")',
      b: '@SUM(1)',
      c: '-2+3',
      d: '\t=1',
      e: 'plain = text',
      f: 'a@b.example',
      g: '\n=1+1',
      // Plain numbers stay as they are; anything more than a sign and digit groups keeps the apostrophe.
      h: '+41 44 123 45 67',
      i: '-12.5',
      j: '+44 20 7946 1050',
      k: '+1-555-0100',
      l: '+41 44 123 45 67 =1',
      m: '-1+cmd|calc',
      n: '+41  44',
      o: '+41 44\n=1',
    };
    await submit({ payload });
    const [, row] = parseCsv((await call('GET', `/v1/forms/${form.id}/export.csv`)).text);
    expect(row?.slice(6)).toEqual([
      `'${payload.a}`,
      "'@SUM(1)",
      "'-2+3",
      "'\t=1",
      'plain = text',
      'a@b.example',
      "'\n=1+1",
      '+41 44 123 45 67',
      '-12.5',
      '+44 20 7946 1050',
      "'+1-555-0100",
      "'+41 44 123 45 67 =1",
      "'-1+cmd|calc",
      "'+41  44",
      "'+41 44\n=1",
    ]);
    const line = JSON.parse((await call('GET', `/v1/forms/${form.id}/export.ndjson`)).text);
    expect(line.payload).toEqual(payload);
  });
});

describe('export, what works: a form in a project', () => {
  /** A form named `name` of a new account, in a new project named `project`. */
  async function clientForm(project: string, name = 'Contact') {
    const owner = await ownerWithForm();
    const client = await factories.project(ctx.platform.db, owner.account.id, project);
    await ctx.platform.db('forms').where({ id: owner.form.id }).update({ name, project_id: client.id });
    return { ...owner, client };
  }
  const today = () => new Date().toISOString().slice(0, 10);

  it('CSV and NDJSON name the project in every row, and the file after the client, the form and the day', async () => {
    const { form, call, submit, client } = await clientForm('Acme Dental');
    const s = await submit({ payload: { name: 'Ada' }, receivedAt: new Date('2026-05-01T00:00:00.000Z') });
    const res = await call('GET', `/v1/forms/${form.id}/export.csv`);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="acme-dental-contact-${today()}.csv"`);
    expect(parseCsv(res.text)).toEqual([
      [...FIXED_COLUMNS, 'project', 'name'],
      [s.id, '2026-05-01T00:00:00.000Z', 'received', '0', '', '', 'Acme Dental', 'Ada'],
    ]);
    const ndjson = await call('GET', `/v1/forms/${form.id}/export.ndjson`);
    expect(ndjson.headers.get('content-disposition')).toBe(
      `attachment; filename="acme-dental-contact-${today()}.ndjson"`,
    );
    expect(JSON.parse(ndjson.text)).toMatchObject({ id: s.id, project: { id: client.id, name: 'Acme Dental' } });
  });

  it('gives a name outside ASCII as RFC 6266’s filename*, with an ASCII filename beside it', async () => {
    const { form, call, submit } = await clientForm('Zoë Café & 田中', 'Café form');
    await submit({ payload: { name: 'Ada' } });
    const res = await call('GET', `/v1/forms/${form.id}/export.csv`);
    const wanted = `zoë-café-田中-café-form-${today()}.csv`;
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="zoe-cafe-cafe-form-${today()}.csv"; filename*=UTF-8''${encodeURIComponent(wanted)}`,
    );
  });

  it('slugs a project named like markup or a path into letters and dashes, and its cell stays text', async () => {
    const { form, call, submit } = await clientForm('<img src=x onerror=alert(1)>/../"x"');
    await submit({ payload: { name: 'Ada' } });
    const res = await call('GET', `/v1/forms/${form.id}/export.csv`);
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="img-src-x-onerror-alert-1-x-contact-${today()}.csv"`,
    );
    expect(parseCsv(res.text)[1]![6]).toBe('<img src=x onerror=alert(1)>/../"x"');
  });
});

describe('export, what works: NDJSON, volume and an empty form', () => {
  it('NDJSON: one JSON object per line with the filters of the list', async () => {
    const { form, call, submit } = await ownerWithForm();
    const a = await submit({
      payload: { q: 'needle here' },
      receivedAt: new Date('2026-05-01T00:00:00.000Z'),
    });
    await submit({ payload: { q: 'hay' } });
    const res = await call('GET', `/v1/forms/${form.id}/export.ndjson?q=NEEDLE`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const lines = res.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      {
        id: a.id,
        form_id: form.id,
        project: null, // the account's default project
        received_at: '2026-05-01T00:00:00.000Z',
        status: 'received',
        files: 0,
        spam_score: null,
        spam_reasons: [],
        payload: { q: 'needle here' },
      },
    ]);
  });

  it('streams many rows across batches in order, every row exactly once', async () => {
    const { account, form, call } = await ownerWithForm();
    const n = 2500;
    await ctx.platform.db.raw(
      `INSERT INTO submissions (id, account_id, form_id, status, payload, received_at)
         SELECT ? || lpad(i::text, 10, '0'), ?, ?, 'received',
                json_build_object('i', i::text, CASE WHEN i % 1000 = 0 THEN 'rare_' || i ELSE 'common' END, 'x'),
                timestamptz '2026-06-01' + (i || ' seconds')::interval
         FROM generate_series(1, ?) AS i`,
      [`sub_${account.id.slice(-16)}`, account.id, form.id, n],
    );
    const csv = parseCsv((await call('GET', `/v1/forms/${form.id}/export.csv`)).text);
    expect(csv[0]).toEqual([
      ...FIXED_COLUMNS,
      // As they first appear reading down the export (newest first).
      'i',
      'common',
      'rare_2000',
      'rare_1000',
    ]);
    expect(csv).toHaveLength(n + 1);
    expect(csv.slice(1).map((r) => Number(r[6]))).toEqual(Array.from({ length: n }, (_, k) => n - k));
    expect(csv.find((r) => r[6] === '2000')?.[8]).toBe('x');
    const ndjson = (await call('GET', `/v1/forms/${form.id}/export.ndjson`)).text.trimEnd().split('\n');
    expect(new Set(ndjson.map((l) => JSON.parse(l).id)).size).toBe(n);
  });

  it('an empty form exports just the header', async () => {
    const { form, call } = await ownerWithForm();
    expect((await call('GET', `/v1/forms/${form.id}/export.csv`)).text).toBe(
      'id,received_at,status,files,spam_score,spam_reasons\r\n',
    );
    expect((await call('GET', `/v1/forms/${form.id}/export.ndjson`)).text ?? '').toBe('');
  });
});

describe('export, what errors', () => {
  it('404 for an unknown form, 422 for a bad filter', async () => {
    const { form, call } = await ownerWithForm();
    expect((await call('GET', '/v1/forms/frm_nope/export.csv')).status).toBe(404);
    const bad = await call('GET', `/v1/forms/${form.id}/export.ndjson?until=soon`);
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].field).toBe('query/until');
  });
});

/** What a spreadsheet runs as a formula: a cell that starts with = + - @, a tab, a CR (OWASP's list) or a LF. */
const FORMULA_LEAD = /^[=+\-@\t\r\n]/;
/** A sign and digit groups split by one space or dot (`+41 44 123 45 67`): no formula can be made of it, so it stays. */
const PLAIN_NUMBER = /^[+-]\d+(?:[ .]\d+)*$/;

const PIECES = ['=', '+', '-', '@', '\t', '\r', '\n', '\r\n', ',', '"', "'", ' ', 'a', '1', '=1+1', '=HYPERLINK("x")'];
const hostileText = fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 6 }).map((a) => a.join(''));

describe('export, what must be refused: rows and formulas from visitors’ names and values', () => {
  it('every cell of a generated hostile export reads back whole, in its own row, and none starts a formula', async () => {
    const { account, call } = await ownerWithForm();
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(hostileText, { minLength: 1, maxLength: 4 }),
        fc.array(hostileText, { minLength: 4, maxLength: 4 }),
        async (names, values) => {
          const form = await factories.form(ctx.platform.db, account.id);
          const payload = Object.fromEntries(names.map((name, i) => [name, values[i] ?? '']));
          const sub = await factories.submission(ctx.platform, { accountId: account.id, formId: form.id, payload });
          const rows = parseCsv((await call('GET', `/v1/forms/${form.id}/export.csv`)).text);
          const guarded = (text: string) => (FORMULA_LEAD.test(text) && !PLAIN_NUMBER.test(text) ? `'${text}` : text);
          expect(rows).toEqual([
            [...FIXED_COLUMNS, ...Object.keys(payload).map(guarded)],
            [sub.id, expect.any(String), 'received', '0', '', '', ...Object.values(payload).map(guarded)],
          ]);
          for (const cell of rows.flat().filter((c) => !PLAIN_NUMBER.test(c))) expect(cell).not.toMatch(FORMULA_LEAD);
        },
      ),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 40) },
    );
  });

  it('a value with a bare LF is quoted, so the line after it cannot begin a row with =1+1', async () => {
    const { form, call, submit } = await ownerWithForm();
    await submit({ payload: { '=HYPERLINK("http://evil.example/","x")': 'hi\n=1+1', '@who': 'x\r-2' } });
    const { text } = await call('GET', `/v1/forms/${form.id}/export.csv`);
    expect(text).toContain(`"'=HYPERLINK(""http://evil.example/"",""x"")",'@who\r\n`);
    expect(text).toContain('"hi\n=1+1","x\r-2"');
    expect(parseCsv(text)).toHaveLength(2);
  });
});
