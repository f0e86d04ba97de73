import { parseArgs } from 'node:util';
import { createLogger, loadConfig, type Db } from '@intake/shared/base';
import { isId, problem } from '@intake/shared/contracts';
import { isRole } from '@intake/shared/auth';
import { accountExists } from '../people/account.repository';
import { inviteMember } from '../people/members';
import { auditAs } from '../platform/audit-trail';

export const MEMBERS_USAGE = `       npm run --silent admin -- members add --account ACCOUNT_ID --email ADDRESS --role viewer|editor|admin|owner

members add invites a person (an owner, say, so a fresh install gets its first owner without a key) and prints
the member with its invitation_url (single use, valid 7 days).`;

type Result = { code: number; stdout?: unknown; stderr?: string };

/** `members add --account acc_... --email ... --role ...`: an invitation made by the operator. */
export async function addMember(
  args: string[],
  env: NodeJS.ProcessEnv,
  withDatabase: (env: NodeJS.ProcessEnv, action: (db: Db) => Promise<unknown>) => Promise<Result>,
): Promise<Result> {
  let values: { account?: string; email?: string; role?: string };
  try {
    ({ values } = parseArgs({
      args,
      options: { account: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' } },
      strict: true,
    }));
  } catch (err) {
    return { code: 2, stderr: `${(err as Error).message}\n\n${MEMBERS_USAGE}` };
  }
  if (!values.account || !isId('account', values.account))
    return { code: 2, stderr: '--account must be an account id, acc_...' };
  if (!values.email || !/^[^\s@]+@[^\s@]+$/.test(values.email) || values.email.length > 320)
    return { code: 2, stderr: '--email must be an e-mail address' };
  if (!isRole(values.role)) return { code: 2, stderr: '--role must be viewer, editor, admin or owner' };
  const { account, email, role } = values as { account: string; email: string; role: typeof values.role & string };
  const config = loadConfig(env);
  const logger = createLogger({ level: config.LOG_LEVEL, service: 'admin', destination: 2 });
  return withDatabase(env, async (db) => {
    if (!(await accountExists(db, account))) throw problem('not-found', `No account ${account}`);
    const now = new Date();
    const { member, invitationUrl } = await inviteMember({
      platform: { db, config, logger },
      accountId: account,
      email,
      role: role as never,
      actorRole: 'owner',
      audit: auditAs({ accountId: account, actor: { type: 'operator', id: null, label: 'operator CLI' } }, now),
      now,
    });
    return {
      id: member.id,
      account_id: account,
      email: member.email,
      role: member.role,
      status: member.status,
      invitation_url: invitationUrl,
    };
  });
}
