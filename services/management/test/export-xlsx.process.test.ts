import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { factories, useStarted } from '@intake/shared/testing';
import { ownerWithForm as ownerWithFormOf, startManagement } from './helpers';
import { parseCsv } from './seed';

const run = promisify(execFile);
const ctx = useStarted(() => startManagement());

/**
 * The workbook as Python's openpyxl reads it (Debian's python3-openpyxl; `.ci/run` installs it): per row, each
 * cell's value (a date as ISO text) and openpyxl's type (`s` text, `n` number, `d` date, `f` formula).
 */
async function openWorkbook(bytes: Buffer): Promise<{ sheet: string; rows: [unknown, string][][] }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'intake-xlsx-'));
  try {
    const file = path.join(dir, 'export.xlsx');
    await writeFile(file, bytes);
    const script = [
      'import json, sys, datetime, openpyxl',
      'wb = openpyxl.load_workbook(sys.argv[1])',
      'ws = wb.active',
      'cell = lambda c: [c.value.isoformat() if isinstance(c.value, datetime.datetime) else c.value, c.data_type]',
      'print(json.dumps({"sheet": ws.title, "rows": [[cell(c) for c in row] for row in ws.iter_rows()]}))',
    ].join('\n');
    const { stdout } = await run('/usr/bin/python3', ['-c', script, file]);
    return JSON.parse(stdout);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function download(url: string, key: string) {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  return { res, bytes: Buffer.from(await res.arrayBuffer()) };
}

describe('export.xlsx', () => {
  it('opens in openpyxl: every value a text cell exactly as posted, received times as dates in the zone asked', async () => {
    const { account, form, submit } = await ownerWithFormOf(ctx);
    const payload = {
      name: 'Zoë Café',
      phone: '+44 20 7946 0000',
      formula: '=HYPERLINK("https://evil.example","click")',
      at: '@SUM(1)',
      note: 'two\nlines',
      control: 'bell\u0007here',
    };
    const s = await submit({ payload, receivedAt: new Date('2026-07-01T10:30:05.000Z') });
    const { res, bytes } = await download(
      `${ctx.url}/v1/forms/${form.id}/export.xlsx?tz=Europe/Paris`,
      account.managementKey,
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${form.slug}-submissions.xlsx"`);
    const book = await openWorkbook(bytes);
    expect(book.sheet).toBe('Submissions');
    const [header, row] = book.rows;
    expect(header?.map(([v]) => v)).toEqual([
      'id',
      'received_at (Europe/Paris)',
      'status',
      'files',
      'spam_score',
      'spam_reasons',
      ...Object.keys(payload),
    ]);
    expect(row).toEqual([
      [s.id, 's'],
      // 10:30:05 UTC is 12:30:05 in Paris in July (CEST).
      ['2026-07-01T12:30:05', 'd'],
      ['received', 's'],
      [0, 'n'],
      [null, 'n'],
      [null, 'n'],
      ...Object.values(payload).map((v) => [v.replace('\u0007', '\uFFFD'), 's']),
    ]);
  });

  it('refuses a time zone that is none with a 422 naming it; UTC by default', async () => {
    const { account, form, call, submit } = await ownerWithFormOf(ctx);
    await submit({ payload: { a: '1' }, receivedAt: new Date('2026-01-15T23:59:59.000Z') });
    const refused = await call('GET', `/v1/forms/${form.id}/export.xlsx?tz=Mars%2FOlympus`);
    expect(refused).toMatchObject({ status: 422, body: { type: expect.stringMatching(/validation-failed$/) } });
    expect(refused.body.errors).toEqual([{ field: 'query/tz', message: expect.stringContaining('IANA') }]);
    const { bytes } = await download(`${ctx.url}/v1/forms/${form.id}/export.xlsx`, account.managementKey);
    const [header, row] = (await openWorkbook(bytes)).rows;
    expect(header?.[1]).toEqual(['received_at (UTC)', 's']);
    expect(row?.[1]).toEqual(['2026-01-15T23:59:59', 'd']);
  });

  it('cuts a value over Excel’s 32,767 characters with a note, and the workbook still opens', async () => {
    const { account, form, submit } = await ownerWithFormOf(ctx);
    await submit({ payload: { long: 'x'.repeat(40_000) } });
    const { bytes } = await download(`${ctx.url}/v1/forms/${form.id}/export.xlsx`, account.managementKey);
    const [, row] = (await openWorkbook(bytes)).rows;
    const cell = String(row?.[6]?.[0]);
    expect(cell).toHaveLength(32_767);
    expect(cell).toMatch(/^x+ … \(cut: 40000 characters in all; the NDJSON export has every one\)$/);
  });
});

describe('export.xlsx of a form in a project', () => {
  it('gives a form in a project a project column of text cells, and names the file after the client and the day in tz', async () => {
    const { account, form, submit } = await ownerWithFormOf(ctx);
    const client = await factories.project(ctx.platform.db, account.id, 'Hale Dental');
    await ctx.platform.db('forms').where({ id: form.id }).update({ name: 'Job application', project_id: client.id });
    await submit({ payload: { name: 'Ada' } });
    const before = new Date();
    const { res, bytes } = await download(
      `${ctx.url}/v1/forms/${form.id}/export.xlsx?tz=Pacific/Kiritimati`,
      account.managementKey,
    );
    // UTC+14: its day is a day ahead of UTC's for most of the UTC day.
    const day = new Date(before.getTime() + 14 * 3_600_000).toISOString().slice(0, 10);
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="hale-dental-job-application-${day}.xlsx"`,
    );
    const [header, row] = (await openWorkbook(bytes)).rows;
    expect(header?.slice(6).map(([v]) => v)).toEqual(['project', 'name']);
    expect(row?.slice(6)).toEqual([
      ['Hale Dental', 's'],
      ['Ada', 's'],
    ]);
  });
});

describe('export.csv?bom=true', () => {
  it('begins with a byte-order mark (and only when asked), the rest as before', async () => {
    const { account, form, submit } = await ownerWithFormOf(ctx);
    await submit({ payload: { name: 'Zoë' } });
    const plain = await download(`${ctx.url}/v1/forms/${form.id}/export.csv`, account.managementKey);
    const marked = await download(`${ctx.url}/v1/forms/${form.id}/export.csv?bom=true`, account.managementKey);
    expect([...marked.bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(plain.bytes[0]).toBe('i'.charCodeAt(0));
    expect(marked.bytes.subarray(3).equals(plain.bytes)).toBe(true);
    expect(parseCsv(plain.bytes.toString('utf8'))[1]?.slice(6)).toEqual(['Zoë']);
  });
});

describe('data-subjects/export.xlsx', () => {
  it('opens in openpyxl: the person’s submissions newest first, a column per field, values as posted, audited', async () => {
    const { account, form, call, submit } = await ownerWithFormOf(ctx);
    const older = await submit({
      payload: { email: ' Ada@Example.TEST', phone: '+44 20 7946 0000' },
      receivedAt: new Date('2026-07-01T10:00:00.000Z'),
    });
    const newer = await submit({
      payload: { name: '=HYPERLINK("https://evil.example")', email: 'ada@example.test' },
      receivedAt: new Date('2026-07-02T10:00:00.000Z'),
    });
    await submit({ payload: { email: 'bob@example.test', other: 'not hers' } });
    const { res, bytes } = await download(
      `${ctx.url}/v1/data-subjects/export.xlsx?email=ada%40example.test&tz=Europe/Paris`,
      account.managementKey,
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="data-subject.xlsx"');
    const [header, ...rows] = (await openWorkbook(bytes)).rows;
    expect(header?.map(([v]) => v)).toEqual([
      'id',
      'form_id',
      'form',
      'project',
      'received_at (Europe/Paris)',
      'status',
      '_replyto',
      'files',
      'email',
      'phone',
      'name',
    ]);
    expect(rows).toEqual([
      [
        [newer.id, 's'],
        [form.id, 's'],
        ['Test form', 's'],
        [null, 'n'], // the account's default project
        ['2026-07-02T12:00:00', 'd'],
        ['received', 's'],
        [null, 'n'],
        [null, 'n'],
        ['ada@example.test', 's'],
        [null, 'n'],
        ['=HYPERLINK("https://evil.example")', 's'],
      ],
      [
        [older.id, 's'],
        [form.id, 's'],
        ['Test form', 's'],
        [null, 'n'], // the account's default project
        ['2026-07-01T12:00:00', 'd'],
        ['received', 's'],
        [null, 'n'],
        [null, 'n'],
        [' Ada@Example.TEST', 's'],
        ['+44 20 7946 0000', 's'],
        [null, 'n'],
      ],
    ]);
    const refused = await call('GET', '/v1/data-subjects/export.xlsx?email=ada%40example.test&tz=Nowhere');
    expect(refused.status).toBe(422);
    const audited = await ctx.platform
      .db('audit_log')
      .where({ account_id: account.id, action: 'data_subject.exported' })
      .pluck('details');
    expect(audited).toEqual([expect.objectContaining({ submissions: 2, format: 'xlsx' })]);
  });
});
