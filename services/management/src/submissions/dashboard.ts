import { type Db } from '@intake/shared/base';
import { problem } from '@intake/shared/contracts';
import { type Principal } from '@intake/shared/auth';
import { findProject, findProjects, type ProjectRow } from './project.repository';
import {
  findFailingWebhooks,
  findProjectUnread,
  findFormDays,
  findFormStats,
  findProjectDays,
  UNREAD_CAP,
  type DayRow,
} from './dashboard.repository';
import { decodeCursor, encodeCursor } from '../platform/cursor';

const DAY_MS = 86_400_000;
const dayKey = (at: number) => new Date(at).toISOString().slice(0, 10);

/** The window a dashboard shows: `days` UTC days up to today, and the last 7 of them (“this week”). */
function windowOf(now: Date, days: number) {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const dates = Array.from({ length: days }, (_, i) => dayKey(today - (days - 1 - i) * DAY_MS));
  return { dates, from: dates[0] as string, week: dayKey(today - 6 * DAY_MS) };
}

/** Every day of the window with its counts (zeros where nothing came). */
function series(dates: string[], rows: DayRow[]) {
  const byDay = new Map<string, { received: number; spam: number }>();
  for (const r of rows) {
    const day = byDay.get(r.day) ?? { received: 0, spam: 0 };
    byDay.set(r.day, { received: day.received + r.received, spam: day.spam + r.spam });
  }
  return dates.map((date) => ({ date, ...(byDay.get(date) ?? { received: 0, spam: 0 }) }));
}

/** Received, spam and this week's spam over a series; the last day anything was received. */
function sums(days: ReturnType<typeof series>, week: string) {
  let received = 0;
  let spam = 0;
  let spamWeek = 0;
  let lastDay: string | null = null;
  for (const d of days) {
    received += d.received;
    spam += d.spam;
    if (d.date >= week) spamWeek += d.spam;
    if (d.received > 0) lastDay = d.date;
  }
  return { received, spam, spam_week: spamWeek, last_day: lastDay };
}

const presentProject = (p: ProjectRow) => ({
  id: p.id,
  name: p.name,
  is_default: p.is_default,
  form_count: Number(p.form_count),
});

/**
 * The account's page: each project the principal sees with its forms, submissions and spam of the window, this week's
 * spam, failing webhooks and last day with a submission, and the account's submissions per day. Read from
 * `usage_daily` (one row per form and day) and the webhooks, never from submissions.
 */
export async function accountDashboard(props: { db: Db; principal: Principal; days: number; now: Date }) {
  const { db, principal } = props;
  const { dates, from, week } = windowOf(props.now, props.days);
  const [projects, days, failing, unread] = await Promise.all([
    findProjects(db, principal.accountId, principal.projectIds),
    findProjectDays(db, principal.accountId, principal.projectIds, from),
    findFailingWebhooks(db, principal.accountId, principal.projectIds),
    findProjectUnread(db, principal.accountId, principal.projectIds),
  ]);
  const total = series(dates, days);
  return {
    from,
    to: dates[dates.length - 1] as string,
    totals: { ...sums(total, week), failing_webhooks: [...failing.values()].reduce((a, b) => a + b, 0) },
    days: total,
    projects: projects.map((p) => {
      const own = series(
        dates,
        days.filter((d) => d.project_id === p.id),
      );
      const { n, capped } = unread.get(p.id) ?? { n: 0, capped: false };
      return {
        ...presentProject(p),
        ...sums(own, week),
        failing_webhooks: failing.get(p.id) ?? 0,
        unread: n,
        unread_capped: capped,
        days: own,
      };
    }),
  };
}

/**
 * A project's page: its submissions per day, and a page of its forms, each with its unread count (up to UNREAD_CAP),
 * last submission, failing webhooks, the window's submissions and spam per day and this week's spam. Bounded work per
 * form on the page, whatever the forms hold.
 */
export async function projectDashboard(props: {
  db: Db;
  accountId: string;
  projectId: string;
  days: number;
  limit: number;
  cursor?: string;
  now: Date;
}) {
  const { db, accountId, projectId } = props;
  const project = await findProject(db, accountId, projectId);
  if (!project) throw problem('not-found', `No project ${projectId}`);
  const { dates, from, week } = windowOf(props.now, props.days);
  const after = props.cursor ? decodeCursor(props.cursor, 'form') : undefined;
  const rows = await findFormStats(db, { accountId, projectId, limit: props.limit + 1, after });
  const page = rows.slice(0, props.limit);
  const [formDays, days, failing] = await Promise.all([
    findFormDays(
      db,
      accountId,
      page.map((f) => f.id),
      from,
    ),
    findProjectDays(db, accountId, [projectId], from),
    findFailingWebhooks(db, accountId, [projectId]),
  ]);
  const total = series(dates, days);
  const last = page[page.length - 1];
  return {
    project: presentProject(project),
    from,
    to: dates[dates.length - 1] as string,
    totals: { ...sums(total, week), failing_webhooks: failing.get(projectId) ?? 0 },
    days: total,
    forms: page.map((f) => {
      const own = series(
        dates,
        formDays.filter((d) => d.form_id === f.id),
      );
      const { received, spam, spam_week } = sums(own, week);
      return {
        id: f.id,
        name: f.name,
        slug: f.slug,
        status: f.status,
        unread: f.unread,
        unread_capped: f.unread >= UNREAD_CAP,
        last_submission_at: f.last_submission_at,
        failing_webhooks: f.failing_webhooks,
        received,
        spam,
        spam_week,
        days: own,
      };
    }),
    next_cursor: rows.length > props.limit && last ? encodeCursor(last.created_at, last.id) : null,
  };
}
