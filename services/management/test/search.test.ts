import type { Knex } from 'knex';
import fc from 'fast-check';
import { newId } from '@intake/shared/contracts';
import { useStarted } from '@intake/shared/testing';
import { drainSearchBacklog } from '../src/submissions/search-indexer';
import { listSubmissionsPage } from '../src/submissions/submission.repository';
import { api, ownerWithForm as ownerWithFormOf, startManagement } from './helpers';

const ctx = useStarted(() => startManagement());

const DAY_MS = 86_400_000;
/** Over three years: the search index's 30-day buckets number about 37. */
const SPAN_DAYS = 1_100;
const ROWS = 400;

/** Field values with words that recur (so a word matches rows in many buckets), punctuation, accents and CJK. */
const VOCABULARY = [
  'Zephyrine',
  'zephyr',
  'the order',
  'ORDER 17, please',
  'Müller & Søn',
  'café crème',
  '日本語のテキスト',
  'a-b_c',
  '100% sure',
  'line one\nline two',
  'x',
  'bezephyrined',
  'ça va?',
  'person7@example.test',
];

type Row = { id: string; received_at: string; payload: Record<string, string> };

/**
 * A form of ROWS submissions over SPAN_DAYS, and a second form of the same account with the same rows. Every other row
 * of the first form is left in the search backlog (migration 024), as if the indexer had not reached it yet, unless
 * `indexed`: a search must find both kinds in one walk.
 */
async function seeded(options: { indexed?: boolean } = {}) {
  const owner = await ownerWithFormOf(ctx);
  const other = await ownerWithFormOf(ctx);
  const rows: Row[] = Array.from({ length: ROWS }, (_, i) => {
    const pick = (k: number) => VOCABULARY[(i * 7 + k * 5 + Math.floor(i / 3)) % VOCABULARY.length]!;
    return {
      id: newId('submission'),
      // Some rows share a received time: the order's tie-break (the id) is part of what is checked.
      received_at: new Date(Date.UTC(2026, 0, 1) - Math.floor((i * SPAN_DAYS) / ROWS) * DAY_MS).toISOString(),
      payload: { name: `${pick(1)} ${i}`, message: i % 4 === 0 ? `${pick(2)} and ${pick(3)}` : pick(4) },
    };
  });
  const insert = (
    form: { account: { id: string }; form: { id: string } },
    ids: (r: Row) => string,
    which: (i: number) => boolean,
  ) =>
    ctx.platform.db('submissions').insert(
      rows
        .map((r, i) => ({
          ...r,
          id: ids(r),
          payload: JSON.stringify(r.payload),
          account_id: form.account.id,
          form_id: form.form.id,
          status: i % 9 === 0 ? 'spam' : 'received',
        }))
        .filter((_, i) => which(i)),
    );
  await insert(
    owner,
    (r) => r.id,
    (i) => i % 2 === 0,
  );
  await insert(
    other,
    () => newId('submission'),
    () => true,
  );
  await drainSearchBacklog(ctx.platform.db);
  await insert(
    owner,
    (r) => r.id,
    (i) => i % 2 === 1,
  );
  if (options.indexed) await drainSearchBacklog(ctx.platform.db);
  return { ...owner, rows };
}

/**
 * Text as search compares it, for the vocabulary's letters: accents off (decomposed, marks dropped; ø, which does not
 * decompose, as unaccent folds it), lower case, full-width signs as their ASCII selves.
 */
const fold = (text: string) => text.normalize('NFKD').replace(/\p{M}/gu, '').replace(/[øØ]/g, 'o').toLowerCase();

/** What the search must answer: rows with a value containing `q`, ignoring case and accents, newest first, ties by id. */
function expected(rows: Row[], q: string): string[] {
  const needle = fold(q);
  return rows
    .filter((r) => Object.values(r.payload).some((v) => fold(v).includes(needle)))
    .sort((a, b) => b.received_at.localeCompare(a.received_at) || b.id.localeCompare(a.id))
    .map((r) => r.id);
}

/** Every page of the list with `query`, following `next_cursor`. */
async function allPages(call: ReturnType<typeof api>, formId: string, query: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await call(
      'GET',
      `/v1/forms/${formId}/submissions?limit=20&${query}${cursor ? `&cursor=${cursor}` : ''}`,
    );
    expect([page.status, page.body.detail]).toEqual([200, undefined]);
    ids.push(...page.body.data.map((s: { id: string }) => s.id));
    cursor = page.body.next_cursor;
  } while (cursor);
  return ids;
}

describe('searching a form’s submissions', () => {
  it('finds exactly the rows whose values contain the text, in order, a page at a time, in both orders', async () => {
    const { form, call, rows } = await seeded();
    const queries = ['zephyr', 'ZEPHYRINE', 'r 17, p', 'müller & s', 'é c', 'のテキ', '100%', 'a-b_c', 'ne\nli', 'x'];
    for (const q of queries) {
      const want = expected(rows, q);
      expect([q, await allPages(call, form.id, `q=${encodeURIComponent(q)}`)]).toEqual([q, want]);
      const asc = await allPages(call, form.id, `order=asc&q=${encodeURIComponent(q)}`);
      expect([q, asc]).toEqual([q, [...want].reverse()]);
    }
  });

  it('holds for any piece of any value, with a status and a time range, and counts the same rows', async () => {
    const { form, call, rows } = await seeded();
    const spam = new Set(rows.filter((_, i) => i % 9 === 0).map((r) => r.id));
    const byId = new Map(rows.map((r) => [r.id, r]));
    const piece = fc
      .tuple(fc.nat(ROWS - 1), fc.boolean(), fc.nat(40), fc.integer({ min: 1, max: 12 }), fc.boolean())
      .map(([i, inName, start, length, upper]) => {
        const value = inName ? rows[i]!.payload.name! : rows[i]!.payload.message!;
        const text = value.slice(start % value.length, (start % value.length) + length);
        return upper ? text.toUpperCase() : text;
      })
      .filter((q) => q.trim().length > 0);
    const range = fc.tuple(fc.integer({ min: 0, max: SPAN_DAYS }), fc.integer({ min: 1, max: SPAN_DAYS }));
    await fc.assert(
      fc.asyncProperty(piece, range, async (q, [from, days]) => {
        const since = new Date(Date.UTC(2026, 0, 1) - (from + days) * DAY_MS).toISOString();
        const until = new Date(Date.UTC(2026, 0, 1) - from * DAY_MS).toISOString();
        const want = expected(rows, q).filter((id) => {
          const at = byId.get(id)!.received_at;
          return !spam.has(id) && at >= since && at < until;
        });
        const query = `status=received&since=${since}&until=${until}&q=${encodeURIComponent(q)}`;
        expect(await allPages(call, form.id, query)).toEqual(want);
        const counted = await call('GET', `/v1/forms/${form.id}/submissions?total=true&${query}`);
        expect(counted.body.total).toBe(want.length);
      }),
      { numRuns: 40 },
    );
  });

  it('steps through, exports and acts on exactly what a search finds', async () => {
    const { form, call, rows } = await seeded();
    const want = expected(rows, 'zephyr');
    for (const [i, id] of want.entries()) {
      const around = await call('GET', `/v1/submissions/${id}/neighbours?q=zephyr`);
      expect([id, around.body]).toEqual([id, { previous: want[i - 1] ?? null, next: want[i + 1] ?? null }]);
    }
    const exported = await call('GET', `/v1/forms/${form.id}/export.ndjson?q=zephyr`);
    const lines = (exported.text as string).trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(want);
    const bulk = await call('POST', `/v1/forms/${form.id}/submissions/bulk`, {
      action: 'delete',
      filter: { q: 'zephyr' },
    });
    expect(bulk.body).toEqual({ done: want.length });
    // To the trash, exactly those: hidden below, kept (keys and all) until the trash's time is up.
    const trashed = await ctx.platform
      .db('submissions')
      .where({ form_id: form.id })
      .whereNotNull('deleted_at')
      .pluck('id');
    expect(trashed.sort()).toEqual([...want].sort());
    const left = new Set(await allPages(call, form.id, 'status=received'));
    const spamLeft = new Set(await allPages(call, form.id, 'status=spam'));
    expect(
      rows
        .filter((r) => !left.has(r.id) && !spamLeft.has(r.id))
        .map((r) => r.id)
        .sort(),
    ).toEqual([...want].sort());
  });

  it('a word the form does not hold finds nothing, though another form holds it', async () => {
    const { form, call } = await seeded();
    const other = await ownerWithFormOf(ctx);
    await other.submit({ payload: { message: 'a quokka' } });
    expect(await allPages(call, form.id, 'q=quokka')).toEqual([]);
    expect(await allPages(other.call, other.form.id, 'q=quokka')).toHaveLength(1);
  });
});

describe('searching without accents', () => {
  it('ignores accents on both sides: cafe finds café, muller Müller, son Søn, and a full-width ％ is no wildcard', async () => {
    const { form, call, rows } = await seeded();
    for (const [q, like] of [
      ['cafe creme', 'café crème'],
      ['MULLER & SON', 'Müller & Søn'],
      ['ca va', 'ça va?'],
      ['Çà', 'ça va?'],
      ['100％', '100% sure'],
    ] as const) {
      const want = expected(rows, q);
      // The oracle folds as search does: the query finds the rows holding the accented text, among others.
      expect(want).toEqual(expect.arrayContaining(expected(rows, like)));
      expect(expected(rows, like).length).toBeGreaterThan(0);
      expect([q, await allPages(call, form.id, `q=${encodeURIComponent(q)}`)]).toEqual([q, want]);
    }
    expect(await allPages(call, form.id, `q=${encodeURIComponent('1％ s')}`)).toEqual([]);
  });
});

describe('how much a search reads', () => {
  it('reads about a page of matches from the newest buckets, not every match in the form', async () => {
    const { account, form, rows } = await seeded({ indexed: true });
    const want = expected(rows, 'zephyr');
    const { db } = ctx.platform;
    const queries: { sql: string; bindings: Knex.RawBinding[] }[] = [];
    const listen = (q: { sql: string; bindings: Knex.RawBinding[] }) => queries.push(q);
    db.on('query', listen);
    const page = await listSubmissionsPage(db, { accountId: account.id, formId: form.id, q: 'zephyr', limit: 8 });
    db.off('query', listen);
    expect(page.map((r) => r.id)).toEqual(want.slice(0, 8));
    // The walk's plan, run again: each bucket's candidates are one Function Scan of intake_search_candidates.
    const walk = queries.at(-1)!;
    const explained = await db.raw(`EXPLAIN (ANALYZE, FORMAT JSON) ${walk.sql.replace(/\$\d+/g, '?')}`, walk.bindings);
    type PlanNode = { 'Function Name'?: string; 'Actual Rows': number; 'Actual Loops': number; Plans?: PlanNode[] };
    const read = (n: PlanNode): number =>
      (n['Function Name'] === 'intake_search_candidates' ? n['Actual Rows'] * n['Actual Loops'] : 0) +
      (n.Plans ?? []).reduce((sum, child) => sum + read(child), 0);
    const candidates = read(explained.rows[0]['QUERY PLAN'][0].Plan);
    expect(candidates).toBeGreaterThanOrEqual(8);
    expect(candidates).toBeLessThan(want.length / 4);
  });
});
