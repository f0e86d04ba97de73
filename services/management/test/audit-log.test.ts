import { purgeAuditLog } from '@intake/shared/audit';
import { addTestMember, factories, memberSessionHeaders, useStarted } from '@intake/shared/testing';
import { api, startManagement } from './helpers';

const ctx = useStarted(() => startManagement({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: true }));

/** An account whose admin key makes a few changes, so its log has entries. */
async function busyAccount() {
  const a = await factories.account(ctx.platform.db);
  const call = api(ctx.url, a.managementKey);
  const form = await call('POST', '/v1/forms', {
    name: 'Audited',
    bot_challenge: { provider: 'turnstile', secret: 'turnstile-secret-value' },
  });
  await call('PATCH', `/v1/forms/${form.body.id}`, { name: 'Renamed', notify_emails: ['private@people.example'] });
  const hook = await call('POST', `/v1/forms/${form.body.id}/webhooks`, { url: 'http://127.0.0.1:9/hook' });
  await call('PATCH', `/v1/webhooks/${hook.body.id}`, { rotate_secret: true });
  await call('GET', `/v1/forms/${form.body.id}/export.ndjson?status=received`);
  await call('GET', `/v1/forms/${form.body.id}/export.xlsx?tz=Europe/Paris`);
  const invited = await call('POST', '/v1/members', { email: 'audited@people.example', role: 'viewer' });
  await call('PATCH', `/v1/members/${invited.body.id}`, { role: 'editor' });
  await call('DELETE', `/v1/members/${invited.body.id}`);
  const key = await call('POST', '/v1/api-keys', { type: 'submission', name: 'site' });
  await call('DELETE', `/v1/api-keys/${key.body.id}`);
  await call('DELETE', `/v1/forms/${form.body.id}`);
  return {
    ...a,
    call,
    formId: form.body.id as string,
    hookId: hook.body.id as string,
    hookSecret: hook.body.secret as string,
  };
}

describe('the audit log', () => {
  it('records each change with who, what and from where, and names what changed, never secret values', async () => {
    const a = await busyAccount();
    const log = await a.call('GET', '/v1/audit-log?limit=200');
    expect(log.status).toBe(200);
    const actions = log.body.data.map((e: { action: string }) => e.action).reverse();
    expect(actions).toEqual([
      'form.created',
      'form.updated',
      'webhook.created',
      'webhook.secret_rotated',
      'submissions.exported',
      'submissions.exported',
      'member.invited',
      'member.role_changed',
      'member.removed',
      'api_key.created',
      'api_key.revoked',
      'form.deleted',
    ]);
    const keyId = (await ctx.platform.db('api_keys').where({ account_id: a.id, type: 'management' }).first('id')).id;
    const updated = log.body.data.find((e: { action: string }) => e.action === 'form.updated');
    expect(updated).toMatchObject({
      id: expect.stringMatching(/^aud_/),
      actor: { type: 'api_key', id: keyId, label: expect.any(String) },
      target: { type: 'form', id: a.formId },
      ip: expect.any(String),
      details: { changed: ['name', 'notify_emails'] },
    });
    const text = JSON.stringify(log.body);
    for (const secret of ['turnstile-secret-value', 'private@people.example', a.hookSecret, a.managementKey])
      expect(text).not.toContain(secret);
    const exports = log.body.data.filter((e: { action: string }) => e.action === 'submissions.exported');
    expect(exports.map((e: { details: unknown }) => e.details)).toEqual([
      { format: 'xlsx', filters: { tz: 'Europe/Paris' } },
      { format: 'ndjson', filters: { status: 'received' } },
    ]);
    expect(log.body.data.find((e: { action: string }) => e.action === 'member.role_changed').details).toEqual({
      from: 'viewer',
      to: 'editor',
    });
  });

  it('pages by cursor, filters by action, actor and time, and exports NDJSON', async () => {
    const a = await busyAccount();
    const first = await a.call('GET', '/v1/audit-log?limit=4');
    const second = await a.call('GET', `/v1/audit-log?limit=4&cursor=${first.body.next_cursor}`);
    expect(first.body.data).toHaveLength(4);
    expect(second.body.data[0].id < first.body.data[3].id).toBe(true);
    const forms = await a.call('GET', '/v1/audit-log?action=form.created');
    expect(forms.body.data.map((e: { action: string }) => e.action)).toEqual(['form.created']);
    const none = await a.call(
      'GET',
      `/v1/audit-log?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
    );
    expect(none.body).toEqual({ data: [], next_cursor: null });
    const byActor = await a.call('GET', `/v1/audit-log?actor=${forms.body.data[0].actor.id}`);
    expect(byActor.body.data.length).toBe(12);
    const exported = await a.call('GET', '/v1/audit-log/export.ndjson');
    expect(exported.headers.get('content-type')).toMatch(/application\/x-ndjson/);
    const lines = exported.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.length).toBeGreaterThanOrEqual(12);
    expect(lines[lines.length - 1].action).toBe('form.created');
    expect((await a.call('GET', '/v1/audit-log?cursor=nonsense')).status).toBe(422);
    // Exporting the log is itself a sensitive read, and recorded.
    expect((await a.call('GET', '/v1/audit-log?action=audit_log.exported')).body.data).toHaveLength(1);
  });
});

describe('the audit log in words', () => {
  it('says who did what to what, names each object as it is now, counts a bulk change in one entry', async () => {
    const a = await factories.account(ctx.platform.db);
    const call = api(ctx.url, a.managementKey);
    const keyLabel = (await ctx.platform.db('api_keys').where({ account_id: a.id }).first('prefix')).prefix as string;
    const form = (await call('POST', '/v1/forms', { name: 'Contact' })).body as { id: string };
    await call('PATCH', `/v1/forms/${form.id}`, { name: 'Contact us' });
    const ids: string[] = [];
    for (let n = 0; n < 3; n++)
      ids.push(
        (await factories.submission(ctx.platform, { accountId: a.id, formId: form.id, payload: { n: `${n}` } })).id,
      );
    const bulk = await call('POST', '/v1/submissions/bulk', {
      action: 'delete',
      ids: [...ids, 'sub_01aaaaaaaaaaaaaaaaaaaaaaaa'],
    });
    expect(bulk.body.done.sort()).toEqual([...ids].sort());
    const gone = (await call('POST', '/v1/forms', { name: 'Temporary' })).body as { id: string };
    await call('DELETE', `/v1/forms/${gone.id}?permanently=true`);

    const entries = (await call('GET', '/v1/audit-log?limit=20')).body.data as {
      action: string;
      summary: string;
      target: { type: string; id: string; name: string | null } | null;
    }[];
    const said = entries.map((e) => e.summary);
    const who = `Key “${keyLabel}”`;
    expect(said).toEqual(
      expect.arrayContaining([
        `${who} created the form “Contact us”.`,
        `${who} changed name of the form “Contact us”.`,
        `${who} moved 3 submissions to the trash.`,
        `${who} deleted the form ${gone.id} (since deleted) for good.`,
      ]),
    );
    // One entry for the bulk, none per submission.
    expect(entries.filter((e) => e.action === 'submission.deleted')).toEqual([]);
    expect(entries.filter((e) => e.action === 'submissions.bulk_changed')).toHaveLength(1);
    expect(entries.find((e) => e.action === 'form.created' && e.target?.id === form.id)?.target?.name).toBe(
      'Contact us',
    );

    const actions = (await call('GET', '/v1/audit-log/actions')).body.data as { action: string; label: string }[];
    expect(actions).toEqual(expect.arrayContaining([{ action: 'api_key.created', label: 'Api key created' }]));
    const filtered = (await call('GET', '/v1/audit-log?action=submissions.bulk_changed')).body.data;
    expect(filtered).toHaveLength(1);
  });
});

describe('the audit log: who reads it, and what the database allows', () => {
  it('is for admins and owners; a member’s entries name the member', async () => {
    const a = await factories.account(ctx.platform.db);
    const editor = await addTestMember(ctx.platform.db, a.id, 'editor');
    const headers = await memberSessionHeaders(ctx.platform.db, a.id, editor.memberId);
    const created = await api(ctx.url)(
      'POST',
      '/v1/forms',
      { name: 'By a member' },
      { ...headers, 'user-agent': 'people-test' },
    );
    expect(created.status).toBe(201);
    expect((await api(ctx.url)('GET', '/v1/audit-log', undefined, { ...headers })).status).toBe(403);
    const log = await api(ctx.url, a.managementKey)('GET', '/v1/audit-log');
    expect(log.body.data[0]).toMatchObject({
      action: 'form.created',
      actor: { type: 'member', id: editor.memberId, label: editor.email },
      user_agent: 'people-test',
    });
  });

  it('is append-only: the database refuses updates and deletes, except the retention purge', async () => {
    const a = await busyAccount();
    await expect(
      ctx.platform.db('audit_log').where({ account_id: a.id }).update({ action: 'form.tampered' }),
    ).rejects.toThrow(/append-only/);
    await expect(ctx.platform.db('audit_log').where({ account_id: a.id }).delete()).rejects.toThrow(/append-only/);
    const count = async () =>
      Number((await ctx.platform.db('audit_log').where({ account_id: a.id }).count('* as n'))[0]?.n);
    const before = await count();
    expect(await purgeAuditLog(ctx.platform.db, 365, new Date())).toBe(0);
    expect(await count()).toBe(before);
    // A year and a day later, they are due.
    expect(await purgeAuditLog(ctx.platform.db, 365, new Date(Date.now() + 366 * 86_400_000))).toBeGreaterThanOrEqual(
      before,
    );
    expect(await count()).toBe(0);
  });
});

describe('a change and its audit entry', () => {
  it('commit together: when its entry cannot be written, the change is not made', async () => {
    const a = await factories.account(ctx.platform.db);
    const call = api(ctx.url, a.managementKey);
    const form = await call('POST', '/v1/forms', { name: 'Kept as it was' });
    const hook = await call('POST', `/v1/forms/${form.body.id}/webhooks`, { url: 'http://127.0.0.1:9/hook' });
    const { db } = ctx.platform;
    // This account's log refuses new entries (a full disk, a lost connection, as far as the change can tell).
    await db.raw(`CREATE FUNCTION intake_test_refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'the audit log refuses this entry'; END $$`);
    await db.raw(`CREATE TRIGGER intake_test_refuse_audit BEFORE INSERT ON audit_log FOR EACH ROW
      WHEN (NEW.account_id = '${a.id}') EXECUTE FUNCTION intake_test_refuse_audit()`);
    try {
      const renamed = await call('PATCH', `/v1/forms/${form.body.id}`, { name: 'Changed without a record' });
      const deleted = await call('DELETE', `/v1/webhooks/${hook.body.id}`);
      const key = await call('POST', '/v1/api-keys', { type: 'submission', name: 'unrecorded' });
      expect([renamed.status, deleted.status, key.status]).toEqual([500, 500, 500]);
    } finally {
      await db.raw('DROP TRIGGER intake_test_refuse_audit ON audit_log');
      await db.raw('DROP FUNCTION intake_test_refuse_audit()');
    }
    expect((await call('GET', `/v1/forms/${form.body.id}`)).body.name).toBe('Kept as it was');
    expect((await call('GET', `/v1/webhooks/${hook.body.id}`)).status).toBe(200);
    expect(await db('api_keys').where({ account_id: a.id, name: 'unrecorded' })).toEqual([]);
    // Written with the change, the entry is not written a second time after it.
    await call('PATCH', `/v1/forms/${form.body.id}`, { name: 'Changed and recorded' });
    const updates = await call('GET', '/v1/audit-log?action=form.updated');
    expect(updates.body.data).toHaveLength(1);
  });
});
