import { parseArgs } from 'node:util';
import { createDb, ensureDatabase, loadConfig, type Db } from '@intake/shared/base';
import { isProblem } from '@intake/shared/contracts';
import { migrate, unlockMigrations } from '@intake/shared/schema';
import { createAccount, setAccountContactEmail, type PlanId } from '../people/accounts';
import { addMember, MEMBERS_USAGE } from './members';

/** The largest quota the accounts.quota_override column (a Postgres integer) holds. */
export const MAX_QUOTA = 2_147_483_647;

const USAGE = `Usage: npm run --silent admin -- accounts create --plan free|pro|team [--name NAME] [--quota N] [--email ADDRESS]
       npm run --silent admin -- accounts update ACCOUNT_ID --email ADDRESS
       npm run --silent admin -- migrate --unlock
${MEMBERS_USAGE}

create prints one JSON object on stdout with account_id and management_key (shown this once).
update sets the contact address that receives quota warnings (--email '' clears it) and prints the account.
migrate --unlock clears the migration lock a killed migrator left (waiting for one that runs) and prints { unlocked }.`;

/** The operator CLI. Exactly one JSON object on stdout; everything else on stderr. */
export async function runAdmin(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number; stdout?: unknown; stderr?: string }> {
  const [noun, verb, ...rest] = argv;
  if (noun === 'migrate') return verb === '--unlock' && rest.length === 0 ? unlock(env) : { code: 2, stderr: USAGE };
  if (noun === 'accounts' && verb === 'update') return updateAccount(rest, env);
  if (noun === 'members' && verb === 'add') return addMember(rest, env, withDatabase);
  if (noun !== 'accounts' || verb !== 'create') return { code: 2, stderr: USAGE };
  let values: { plan?: string; name?: string; quota?: string; email?: string };
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        plan: { type: 'string' },
        name: { type: 'string' },
        quota: { type: 'string' },
        email: { type: 'string' },
      },
      strict: true,
    }));
  } catch (err) {
    return { code: 2, stderr: `${(err as Error).message}\n\n${USAGE}` };
  }
  if (!values.plan || !['free', 'pro', 'team'].includes(values.plan))
    return { code: 2, stderr: `--plan must be free, pro or team\n\n${USAGE}` };
  if (values.quota !== undefined && !(/^\d{1,10}$/.test(values.quota) && Number(values.quota) <= MAX_QUOTA))
    return {
      code: 2,
      stderr: `--quota must be a whole number of submissions per month from 0 to ${MAX_QUOTA} (got ${JSON.stringify(values.quota)})`,
    };
  if (values.email !== undefined && !/^[^\s@]+@[^\s@]+$/.test(values.email))
    return { code: 2, stderr: '--email must be an e-mail address' };

  return withDatabase(env, (db) =>
    createAccount({
      db,
      plan: values.plan as PlanId,
      name: values.name,
      quota: values.quota === undefined ? undefined : Number(values.quota),
      contactEmail: values.email,
      now: new Date(),
    }),
  );
}

/** `accounts update ACCOUNT_ID --email ADDRESS`: the contact address for quota warnings. */
async function updateAccount(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout?: unknown; stderr?: string }> {
  let parsed: { values: { email?: string }; positionals: string[] };
  try {
    parsed = parseArgs({ args, options: { email: { type: 'string' } }, allowPositionals: true, strict: true });
  } catch (err) {
    return { code: 2, stderr: `${(err as Error).message}\n\n${USAGE}` };
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) return { code: 2, stderr: `accounts update takes one ACCOUNT_ID\n\n${USAGE}` };
  if (values.email === undefined) return { code: 2, stderr: `accounts update needs --email ADDRESS\n\n${USAGE}` };
  if (values.email !== '' && !/^[^\s@]+@[^\s@]+$/.test(values.email))
    return { code: 2, stderr: '--email must be an e-mail address' };
  return withDatabase(env, (db) =>
    setAccountContactEmail({ db, accountId: positionals[0] as string, contactEmail: values.email || null }),
  );
}

/** `migrate --unlock`: knex's lock cleared under the migrators' advisory lock, on Postgres itself; runs no migration. */
async function unlock(env: NodeJS.ProcessEnv): Promise<{ code: number; stdout?: unknown; stderr?: string }> {
  const config = loadConfig(env);
  const db = createDb(config.DATABASE_DIRECT_URL, { poolMax: 2, applicationName: 'intake-admin' });
  try {
    // Waits, idle, for a migrator that runs (its lock is not stale); fails naming it after MIGRATION_LOCK_WAIT_SECONDS.
    const unlocked = await unlockMigrations(db, { lockWaitMs: config.MIGRATION_LOCK_WAIT_SECONDS * 1000 });
    return { code: 0, stdout: { unlocked } };
  } catch (err) {
    return { code: 1, stderr: String((err as Error).message) };
  } finally {
    await db.destroy();
  }
}

/** Runs `action` on the migrated database (created when missing); its result is the JSON printed, a failure the message. */
async function withDatabase(
  env: NodeJS.ProcessEnv,
  action: (db: Db) => Promise<unknown>,
): Promise<{ code: number; stdout?: unknown; stderr?: string }> {
  const config = loadConfig(env);
  await ensureDatabase(config.DATABASE_URL);
  const db = createDb(config.DATABASE_URL, { poolMax: 2, applicationName: 'intake-admin' });
  try {
    await migrate(db, { lockWaitMs: config.MIGRATION_LOCK_WAIT_SECONDS * 1000 });
    return { code: 0, stdout: await action(db) };
  } catch (err) {
    return { code: 1, stderr: isProblem(err) ? err.detail : String((err as Error).message) };
  } finally {
    await db.destroy();
  }
}

if (require.main === module) {
  runAdmin(process.argv.slice(2)).then(
    ({ code, stdout, stderr }) => {
      if (stdout !== undefined) process.stdout.write(`${JSON.stringify(stdout)}\n`);
      if (stderr) process.stderr.write(`${stderr}\n`);
      process.exitCode = code;
    },
    (err) => {
      process.stderr.write(`${(err as Error).message}\n`);
      process.exitCode = 1;
    },
  );
}
