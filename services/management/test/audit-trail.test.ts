import { generate } from 'otplib';
import {
  addTestMember,
  eventually,
  factories,
  listen,
  memberSessionHeaders,
  uniqueEmail,
  useStarted,
} from '@intake/shared/testing';
import { managementService } from '../src';
import { api, startManagementWithWorkers } from './helpers';
import { PASSWORD, personWithPassword, sessionOf } from './people-helpers';

/**
 * Every operation of the management API that is not a GET writes an audit entry when it succeeds: the test walks the
 * route list itself, so an operation added without an entry, or without a case here, fails it. Each case makes what
 * its operation needs in a fresh account, then counts the account's entries around the one call.
 */
const ctx = useStarted(() =>
  startManagementWithWorkers({ retryMs: 60_000, pollMs: 50 }, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: true }),
);

/** What a case's call answered. */
type Answer = Awaited<ReturnType<ReturnType<typeof api>>>;

/** A fresh account: its management key's caller, and the makings most cases share. */
async function world() {
  const account = await factories.account(ctx.platform.db);
  const call = api(ctx.url, account.managementKey);
  const created = async (path: string, body: unknown) => {
    const res = await call('POST', path, body);
    expect(res.status).toBe(201);
    return res.body as { id: string; invitation_url?: string };
  };
  const form = () => created('/v1/forms', { name: `Form ${uniqueEmail('f')}` });
  const submission = async (formId: string) =>
    factories.submission(ctx.platform, { accountId: account.id, formId, payload: { email: 'ada@people.example' } });
  const webhook = async (formId: string) => created(`/v1/forms/${formId}/webhooks`, { url: receiverUrl });
  /** A member of the account with a password, and a console session of theirs, as headers. */
  const member = async (role: 'viewer' | 'owner' = 'owner') => {
    const person = await personWithPassword(ctx.platform.db, role, account.id);
    const headers: Record<string, string> = {
      ...(await memberSessionHeaders(ctx.platform.db, account.id, person.memberId)),
    };
    return {
      ...person,
      headers,
      call: (method: string, path: string, body?: unknown) => api(ctx.url)(method, path, body, headers),
    };
  };
  return { account, call, created, form, submission, webhook, member };
}
type World = Awaited<ReturnType<typeof world>>;

/**
 * A case: makes what the operation needs, and answers the one call to count entries around (in w's account, or in
 * the one `logOf` names: an account the call made).
 */
type Case = (w: World) => Promise<() => Promise<Answer & { logOf?: string }>>;

/** A code of an authenticator with this secret, now. */
const codeOf = async (secret: string) => generate({ secret });

/**
 * An owner's session with an authenticator enrolled and confirmed: its secret and recovery codes (a code is taken
 * once, so what follows proves itself with the password or a recovery code).
 */
async function withAuthenticator(w: World) {
  const owner = await w.member('owner');
  const started = await owner.call('POST', '/v1/two-factor/enrolment');
  expect(started.status).toBe(201);
  const secret = started.body.secret as string;
  const confirmed = await owner.call('POST', '/v1/two-factor/enrolment/confirm', { code: await codeOf(secret) });
  expect(confirmed.status).toBe(200);
  return { ...owner, secret, recoveryCodes: confirmed.body.recovery_codes as string[] };
}

const CASES: Record<string, Case> = {
  createApiKey: async (w) => () => w.call('POST', '/v1/api-keys', { type: 'submission', name: 'site' }),
  revokeApiKey: async (w) => {
    const key = await w.created('/v1/api-keys', { type: 'submission' });
    return () => w.call('DELETE', `/v1/api-keys/${key.id}`);
  },
  createProject: async (w) => () => w.call('POST', '/v1/projects', { name: 'Acme Dental' }),
  updateProject: async (w) => {
    const project = await w.created('/v1/projects', { name: 'Acme' });
    return () => w.call('PATCH', `/v1/projects/${project.id}`, { name: 'Acme Dental' });
  },
  deleteProject: async (w) => {
    const project = await w.created('/v1/projects', { name: 'Acme' });
    return () => w.call('DELETE', `/v1/projects/${project.id}`);
  },
  createForm: async (w) => () => w.call('POST', '/v1/forms', { name: 'Contact' }),
  updateForm: async (w) => {
    const form = await w.form();
    return () => w.call('PATCH', `/v1/forms/${form.id}`, { name: 'Contact us' });
  },
  duplicateForm: async (w) => {
    const form = await w.form();
    return () => w.call('POST', `/v1/forms/${form.id}/duplicate`, { name: 'Contact (client B)' });
  },
  deleteForm: async (w) => {
    const form = await w.form();
    return () => w.call('DELETE', `/v1/forms/${form.id}`);
  },
  restoreForm: async (w) => {
    const form = await w.form();
    expect((await w.call('DELETE', `/v1/forms/${form.id}`)).status).toBe(204);
    return () => w.call('POST', `/v1/forms/${form.id}/restore`);
  },
  updateSubmission: async (w) => {
    const submission = await w.submission((await w.form()).id);
    return () => w.call('PATCH', `/v1/submissions/${submission.id}`, { status: 'spam' });
  },
  deleteSubmission: async (w) => {
    const submission = await w.submission((await w.form()).id);
    return () => w.call('DELETE', `/v1/submissions/${submission.id}`);
  },
  restoreSubmissions: async (w) => {
    const submission = await w.submission((await w.form()).id);
    expect((await w.call('DELETE', `/v1/submissions/${submission.id}`)).status).toBe(204);
    return () => w.call('POST', '/v1/submissions/restore', { ids: [submission.id] });
  },
  bulkSubmissions: async (w) => {
    const submission = await w.submission((await w.form()).id);
    return () => w.call('POST', '/v1/submissions/bulk', { action: 'spam', ids: [submission.id] });
  },
  bulkSubmissionsByFilter: async (w) => {
    const form = await w.form();
    await w.submission(form.id);
    return () => w.call('POST', `/v1/forms/${form.id}/submissions/bulk`, { action: 'delete', filter: {} });
  },
  saveView: async (w) => {
    const form = await w.form();
    return () => w.call('POST', `/v1/forms/${form.id}/views`, { name: 'Spam', filters: { status: 'spam' } });
  },
  deleteSavedView: async (w) => {
    const form = await w.form();
    const view = await w.created(`/v1/forms/${form.id}/views`, { name: 'Spam', filters: { status: 'spam' } });
    return () => w.call('DELETE', `/v1/views/${view.id}`);
  },
  createWebhook: async (w) => {
    const form = await w.form();
    return () => w.call('POST', `/v1/forms/${form.id}/webhooks`, { url: receiverUrl });
  },
  updateWebhook: async (w) => {
    const hook = await w.webhook((await w.form()).id);
    return () => w.call('PATCH', `/v1/webhooks/${hook.id}`, { enabled: false });
  },
  deleteWebhook: async (w) => {
    const hook = await w.webhook((await w.form()).id);
    return () => w.call('DELETE', `/v1/webhooks/${hook.id}`);
  },
  testWebhook: async (w) => {
    const hook = await w.webhook((await w.form()).id);
    return () => w.call('POST', `/v1/webhooks/${hook.id}/test`);
  },
  replayWebhook: async (w) => {
    const hook = await w.webhook((await w.form()).id);
    return () => w.call('POST', `/v1/webhooks/${hook.id}/replay`, { status: 'failed' });
  },
  replayDelivery: async (w) => {
    const form = await w.form();
    const hook = await w.webhook(form.id);
    const delivery = await factories.delivery(ctx.platform.db, {
      accountId: w.account.id,
      webhookId: hook.id,
      formId: form.id,
      status: 'failed',
    });
    return () => w.call('POST', `/v1/deliveries/${delivery.id}/replay`);
  },
  replayFailedDeliveries: async (w) => {
    const hook = await w.webhook((await w.form()).id);
    return () => w.call('POST', `/v1/webhooks/${hook.id}/replay-failed`);
  },
  eraseDataSubject: async (w) => {
    await w.submission((await w.form()).id);
    return () => w.call('DELETE', '/v1/data-subjects?email=ada%40people.example');
  },
  inviteMember: async (w) => () => w.call('POST', '/v1/members', { email: uniqueEmail('invited'), role: 'viewer' }),
  updateMember: async (w) => {
    const invited = await w.created('/v1/members', { email: uniqueEmail('invited'), role: 'viewer' });
    return () => w.call('PATCH', `/v1/members/${invited.id}`, { role: 'editor' });
  },
  removeMember: async (w) => {
    const invited = await w.created('/v1/members', { email: uniqueEmail('invited'), role: 'viewer' });
    return () => w.call('DELETE', `/v1/members/${invited.id}`);
  },
  resendInvitation: async (w) => {
    const invited = await w.created('/v1/members', { email: uniqueEmail('invited'), role: 'viewer' });
    return () => w.call('POST', `/v1/members/${invited.id}/invitation`);
  },
  acceptInvitation: async (w) => {
    const invited = await w.created('/v1/members', { email: uniqueEmail('invited'), role: 'viewer' });
    const token = invited.invitation_url?.split('#')[1];
    return () => api(ctx.url)('POST', '/v1/invitations/accept', { token, password: PASSWORD });
  },
  createSession: async (w) => () => api(ctx.url)('POST', '/v1/sessions', { key: w.account.managementKey }),
  deleteCurrentSession: async (w) => {
    const member = await w.member('viewer');
    return () => member.call('DELETE', '/v1/sessions/current');
  },
  endMySession: async (w) => {
    const member = await w.member('viewer');
    const other = { ...(await memberSessionHeaders(ctx.platform.db, w.account.id, member.memberId)) };
    const sessions = (await api(ctx.url)('GET', '/v1/sessions', undefined, other)).body.data as {
      id: string;
      current: boolean;
    }[];
    const otherId = sessions.find((s) => s.current)?.id;
    return () => member.call('DELETE', `/v1/sessions/${otherId}`);
  },
  switchAccount: async (w) => {
    // The sign-in is recorded in the account switched to: a member of w's, signed in to another account first.
    const member = await w.member('viewer');
    const elsewhere = await factories.account(ctx.platform.db);
    const there = await addTestMember(ctx.platform.db, elsewhere.id, 'viewer', { email: member.email });
    const headers = { ...(await memberSessionHeaders(ctx.platform.db, elsewhere.id, there.memberId)) };
    return () => api(ctx.url)('POST', '/v1/sessions/switch', { account_id: w.account.id }, headers);
  },
  signInWithPassword: async (w) => {
    const person = await personWithPassword(ctx.platform.db, 'viewer', w.account.id);
    return () =>
      api(ctx.url)('POST', '/v1/sessions/password', { email: person.email, password: PASSWORD }, person.from);
  },
  signInSecondFactor: async (w) => {
    const owner = await withAuthenticator(w);
    const signed = await api(ctx.url)(
      'POST',
      '/v1/sessions/password',
      { email: owner.email, password: PASSWORD },
      owner.from,
    );
    expect(signed.status).toBe(202);
    const pending = { ...sessionOf(signed).headers, ...owner.from };
    return () => api(ctx.url)('POST', '/v1/sessions/two-factor', { code: owner.recoveryCodes[0] }, pending);
  },
  requestPasswordReset: async (w) => {
    const person = await personWithPassword(ctx.platform.db, 'viewer', w.account.id);
    return () => api(ctx.url)('POST', '/v1/password-resets', { email: person.email }, person.from);
  },
  confirmTwoFactorEnrolment: async (w) => {
    const owner = await w.member('owner');
    const started = await owner.call('POST', '/v1/two-factor/enrolment');
    const code = await codeOf(started.body.secret);
    return () => owner.call('POST', '/v1/two-factor/enrolment/confirm', { code });
  },
  renewRecoveryCodes: async (w) => {
    const owner = await withAuthenticator(w);
    return () => owner.call('POST', '/v1/two-factor/recovery-codes', { password: PASSWORD });
  },
  disableTwoFactor: async (w) => {
    const owner = await withAuthenticator(w);
    return () => owner.call('POST', '/v1/two-factor/disable', { password: PASSWORD });
  },
  updateAccount: async (w) => {
    const owner = await withAuthenticator(w);
    return () => owner.call('PATCH', '/v1/account', { require_two_factor: true });
  },
  createAccount: async (w) => {
    const owner = await w.member('owner');
    // The new account's log starts with its creation.
    return async () => {
      const answer = await owner.call('POST', '/v1/accounts', { name: 'Side project' });
      return { ...answer, logOf: answer.body?.account_id as string };
    };
  },
};

/**
 * The operations that write no entry, and why. Each is a request of someone who is not yet a member of the account
 * the entry would belong to, or changes nothing.
 */
const NO_ENTRY: Record<string, string> = {
  lookupInvitation: 'reads what an invitation link is for (a POST only to keep the token out of URLs)',
  startTwoFactorEnrolment: 'nothing is on until the code confirms it; the confirmation is recorded',
  requestSignUp: 'no account exists yet: the confirmed sign-up records `account.created` in the new account',
  confirmSignUp: 'makes a new account (its own log starts with `account.created`): checked in account-creation.test',
  confirmPasswordReset: 'the link’s token is only mailed: `password.changed` is checked in sign-in.test',
};

let receiverUrl = '';
let receiver: Awaited<ReturnType<typeof listen>>;
beforeAll(async () => {
  receiver = await listen((_req, res) => res.end('ok'));
  receiverUrl = `${receiver.url}/hook`;
});
afterAll(() => receiver.close());

const entriesOf = async (accountId: string) =>
  Number((await ctx.platform.db('audit_log').where({ account_id: accountId }).count<{ n: string }[]>('* as n'))[0]?.n);

describe('the audit trail', () => {
  it('has a case, or a reason for no entry, for every operation that is not a GET', () => {
    const operations = managementService
      .routes({ config: ctx.platform.config })
      .filter((r) => r.method !== 'GET')
      .map((r) => r.operationId);
    const covered = new Set([...Object.keys(CASES), ...Object.keys(NO_ENTRY)]);
    expect(operations.filter((id) => !covered.has(id))).toEqual([]);
    expect([...covered].filter((id) => !operations.includes(id))).toEqual([]);
  });

  it.each(Object.keys(CASES))('%s writes an entry in the account’s log when it succeeds', async (operationId) => {
    const w = await world();
    const act = await CASES[operationId]!(w);
    const before = await entriesOf(w.account.id);
    const answer = await act();
    expect(answer.status).toBeGreaterThanOrEqual(200);
    expect(answer.status).toBeLessThan(300);
    // Some record after the answer (a password reset's work is not waited for, so its answer says nothing).
    const log = answer.logOf ?? w.account.id;
    await eventually(async () => (await entriesOf(log)) > (log === w.account.id ? before : 0), {
      message: `an entry for ${operationId}`,
    });
  });
});
