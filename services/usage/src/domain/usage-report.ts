import { type Db } from '@intake/shared/base';
import { formProject, monthOf, periodKey, problem, toTimestamp } from '@intake/shared/contracts';
import type { UsageReport } from './usage-report.schema';
import {
  countAccountProjects,
  findAccountQuota,
  findCounters,
  findUsageByDay,
  findUsageByForm,
  sumStoredFileBytes,
} from '../repositories/usage.repository';

export type { UsageReport };

/** `YYYY-MM` -> the first instant of that UTC month. */
export function parseMonth(month: string): Date {
  const [year, mon] = month.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(year, mon - 1, 1));
}

/**
 * The account's usage for the UTC month containing `at`. `used` is usage_counters.used, the number
 * ingest enforces the quota on; the spam, byte and breakdown figures come from the usage consumer.
 * The limit is the account's current quota (quota_override, else the plan's).
 *
 * Limited to projects (a limited principal's, or the one asked for), every count is those projects' forms',
 * `used` included (their received submissions, as the consumer counted them); `limit` and `remaining` stay the
 * account's quota and what is left of it, which is when ingest refuses these forms too. A project that is not the
 * account's is not found, as any id of another account is.
 */
export async function usageReport(props: {
  db: Db;
  accountId: string;
  at: Date;
  /** Only these projects' forms (a limited principal's, or the one asked for); null: the account's. */
  projects: string[] | null;
}): Promise<UsageReport> {
  const { db, accountId, at, projects } = props;
  const account = await findAccountQuota(db, accountId);
  if (!account) throw problem('not-found', 'The account no longer exists');
  if (projects && (await countAccountProjects(db, accountId, projects)) < new Set(projects).size)
    throw problem('not-found', 'No such project');
  const { start, end } = monthOf(at);
  const from = periodKey(start);
  const to = end.toISOString().slice(0, 10);
  const [counters, forms, byDay, stored] = await Promise.all([
    findCounters(db, accountId, from),
    findUsageByForm(db, accountId, from, to, projects),
    findUsageByDay(db, accountId, from, to, projects),
    sumStoredFileBytes(db, accountId, projects),
  ]);
  const days: UsageReport['days'] = [];
  for (let d = new Date(start); d < end; d = new Date(d.getTime() + 86_400_000)) {
    const date = d.toISOString().slice(0, 10);
    days.push({ date, ...(byDay.get(date) ?? { received: 0, spam: 0, file_bytes: 0 }) });
  }
  return {
    account_id: accountId,
    plan: { id: account.plan_id, name: account.plan_name },
    period: { month: from.slice(0, 7), start: toTimestamp(start), end: toTimestamp(end) },
    limit: account.limit,
    used: projects ? days.reduce((n, d) => n + d.received, 0) : counters.used,
    remaining: Math.max(0, account.limit - counters.used),
    // A project's received, spam and bytes are its forms' (the counters are the account's).
    spam: projects ? days.reduce((n, d) => n + d.spam, 0) : counters.spam,
    file_bytes: projects ? days.reduce((n, d) => n + Number(d.file_bytes), 0) : counters.file_bytes,
    project_ids: projects,
    stored_file_bytes: stored,
    forms: forms.map(({ project_id, project_name, project_is_default, ...form }) => ({
      ...form,
      project: formProject({ project_id, project_name, project_is_default }),
    })),
    days,
  };
}
