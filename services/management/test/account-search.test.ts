import { factories, managementKeyWithRole, useStarted } from '@intake/shared/testing';
import { drainSearchBacklog } from '../src/submissions/search-indexer';
import { api, startManagement } from './helpers';

/** A search across an account's forms: `GET /v1/submissions?q=`. */
const ctx = useStarted(() => startManagement());

type Found = { id: string; form: { id: string; name: string }; project: { id: string; name: string } | null };
const idsOf = (body: { data: Found[] }) => body.data.map((s) => s.id);
const DAY_MS = 86_400_000;

/** Two clients' forms and one of the agency's own, with Müllers over three months (so over several buckets). */
async function agency() {
  const { db } = ctx.platform;
  const account = await factories.account(db);
  const call = api(ctx.url, account.managementKey);
  const acme = await factories.project(db, account.id, 'Acme Dental');
  const bolt = await factories.project(db, account.id, 'Bolt Garage');
  const booking = await factories.form(db, account.id, { name: 'Booking', project_id: acme.id });
  const quote = await factories.form(db, account.id, { name: 'Quote', project_id: bolt.id });
  const contact = await factories.form(db, account.id, { name: 'Contact' });
  const now = Date.now();
  const store = (formId: string, name: string, daysAgo: number, status: 'received' | 'spam' = 'received') =>
    factories.submission(ctx.platform, {
      accountId: account.id,
      formId,
      status,
      payload: { name, message: 'Hello' },
      receivedAt: new Date(now - daysAgo * DAY_MS),
    });
  const newest = await store(quote.id, 'Jürgen Müller', 1);
  const middle = await store(booking.id, 'Anna MÜLLER', 40);
  const oldest = await store(contact.id, 'Tom Muller', 80);
  await store(booking.id, 'Zoë Martin', 2);
  await store(quote.id, 'Spam Müller', 3, 'spam');
  const trashed = await store(booking.id, 'Gone Müller', 4);
  await ctx.platform.db('submissions').where({ id: trashed.id }).update({ deleted_at: new Date() });
  // Half indexed, half still in the backlog: the search reads both.
  await drainSearchBacklog(db);
  const waiting = await store(contact.id, 'Late Mueller Müller', 5);
  return { account, call, acme, bolt, booking, quote, contact, newest, middle, oldest, waiting };
}

describe('GET /v1/submissions?q=', () => {
  it('finds across every form, newest first, ignoring accents and case, naming form and client', async () => {
    const a = await agency();
    const found = await a.call('GET', '/v1/submissions?q=muller');
    expect(found.status).toBe(200);
    expect(idsOf(found.body)).toEqual([a.newest.id, a.waiting.id, a.middle.id, a.oldest.id]);
    expect(found.body.data[0]).toMatchObject({
      form: { id: a.quote.id, name: 'Quote' },
      project: { id: a.bolt.id, name: 'Bolt Garage' },
      payload: { name: 'Jürgen Müller' },
      deleted_at: null,
    });
    expect(found.body.data[3]).toMatchObject({ form: { name: 'Contact' }, project: null });

    // A page at a time, and one client's forms.
    const first = await a.call('GET', '/v1/submissions?q=MÜLLER&limit=2');
    const second = await a.call('GET', `/v1/submissions?q=MÜLLER&limit=2&cursor=${first.body.next_cursor}`);
    expect([...idsOf(first.body), ...idsOf(second.body)]).toEqual(idsOf(found.body));
    expect(second.body.next_cursor).toBeNull();
    expect(idsOf((await a.call('GET', `/v1/submissions?q=muller&project_id=${a.acme.id}`)).body)).toEqual([
      a.middle.id,
    ]);
    // Too short for the index: read through the received-time index instead.
    expect((await a.call('GET', '/v1/submissions?q=zo')).body.data.map((s: Found) => s.form.name)).toEqual(['Booking']);
  });

  it('keeps a limited key to its projects, another account to its own, and asks for q', async () => {
    const a = await agency();
    const limited = api(
      ctx.url,
      await managementKeyWithRole(ctx.platform.db, a.account.id, 'viewer', { projectIds: [a.bolt.id] }),
    );
    expect(idsOf((await limited('GET', '/v1/submissions?q=muller')).body)).toEqual([a.newest.id]);
    expect((await limited('GET', `/v1/submissions?q=muller&project_id=${a.acme.id}`)).status).toBe(404);
    const stranger = api(ctx.url, (await factories.account(ctx.platform.db)).managementKey);
    expect(idsOf((await stranger('GET', '/v1/submissions?q=muller')).body)).toEqual([]);
    const missing = await a.call('GET', '/v1/submissions');
    expect([missing.status, missing.body.errors]).toEqual([422, [expect.objectContaining({ field: 'query/q' })]]);
  });
});
