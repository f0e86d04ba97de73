import { type Queryable } from '@intake/shared/base';
import { problem } from '@intake/shared/contracts';
import {
  instruments,
  recordPurged,
  recordPurgeFailure,
  zeroPurgeFailures,
  type PurgeReason,
} from '@intake/shared/telemetry';
import { observeGauge, type Platform, type Worker } from '@intake/shared/runtime';
import {
  addToPurgeTally,
  deleteSubmissionsOfForm,
  findDelivered,
  findExpired,
  findFileKeys,
  findPurgeForms,
  findTrashed,
  deleteEmptyTrashedForms,
  takePurgeTallies,
  tombstoneSubmissions,
  purgeLagSeconds,
  underFormPurgeLock,
  type PurgeForm,
  startPurgeTransaction,
} from './purge.repository';
import { auditAs } from '../platform/audit-trail';

type Deps = Pick<Platform, 'db' | 'blobs' | 'logger' | 'clock'>;

const DAY_MS = 24 * 60 * 60 * 1000;
/**
 * Submissions removed per transaction: each batch holds its rows for a few milliseconds, never a lock ingest waits on,
 * and is short enough that the purge's bursts of CPU (its process and its Postgres backend) are brief.
 */
export const PURGE_BATCH = 200;

/**
 * The share of the time the purge works: after a batch that took t ms it waits t × (1 − duty) / duty (at most
 * MAX_PAUSE_MS), so it uses at most that share of one core and ingest's statements meet it that much less often. At
 * 0.1 (with batches of 200) ingest kept its rate and its p99 within 1.5× on the 2-core box while the purge removed
 * 180–260 submissions a second, about 20 million a day; at 0.25 its p99 went to 1.3–2.0× (docs/decisions.md, "Data
 * lifecycle").
 */
export const PURGE_DUTY = 0.1;
/** Days a deleted form or submission stays in the trash by default (TRASH_DAYS). */
export const TRASH_DAYS = 30;

/**
 * The moment before which what went to the trash is deleted for good: the purge removes it, and a restore no longer
 * finds it, even before the purge has reached it.
 */
export function trashedBefore(now: Date, trashDays: number): Date {
  return new Date(now.getTime() - trashDays * DAY_MS);
}
const MAX_PAUSE_MS = 2000;

/** How long to wait after a batch that took `batchMs` for the purge to work `duty` of the time (1: no wait). */
export function pauseAfter(batchMs: number, duty = PURGE_DUTY): number {
  if (!(duty > 0 && duty < 1)) return 0;
  return Math.min(MAX_PAUSE_MS, Math.round((batchMs * (1 - duty)) / duty));
}

const pause = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/** How a run paces itself: submissions per batch (PURGE_BATCH) and the share of the time it works (PURGE_DUTY). */
export interface PurgePace {
  batchSize?: number;
  duty?: number;
}

/**
 * What one run removed, by reason; `left` counts batches left for the next run (storage or database refused);
 * `skipped` the forms another replica was purging (it has them); `raced` the submissions a batch selected that were
 * gone before it removed them (an erasure, or a purge of another replica: double work, 0 when the forms' locks hold).
 */
export type PurgeCounts = Record<Exclude<PurgeReason, 'request'>, number> & {
  left: number;
  skipped: number;
  raced: number;
};

/**
 * Removes one batch of one form: the files first, then (only if storage took them) the rows in one short transaction.
 * A storage failure leaves the rows for the next run rather than orphaning a file; a crash after the files went
 * leaves rows whose files are gone, which the next run selects again and finishes (deleting a missing file is no
 * error in either store). Returns how many submissions went, or undefined when the batch was left.
 */
export async function purgeBatch(
  props: Deps & {
    formId: string;
    ids: string[];
    mode: 'delete' | 'tombstone';
    /** The account and reason whose purge tally counts the batch (a run's batches; not an erasure's). */
    tally?: { accountId: string; reason: Exclude<PurgeReason, 'request'> };
  },
): Promise<number | undefined> {
  const { db, blobs, logger, formId, ids, mode } = props;
  const keys = await findFileKeys(db, ids);
  try {
    if (keys.length > 0) await blobs.delete(keys);
  } catch (err) {
    recordPurgeFailure({ stage: 'files' });
    logger.warn({ err, formId, files: keys.length }, 'purge: object storage refused; the rows stay for the next run');
    return undefined;
  }
  try {
    return await db.transaction(async (trx) => {
      await startPurgeTransaction(trx);
      const removed =
        mode === 'delete'
          ? await deleteSubmissionsOfForm(trx, formId, ids)
          : await tombstoneSubmissions(trx, { formId, ids, now: props.clock.now() });
      if (props.tally && removed > 0) await addToPurgeTally(trx, { ...props.tally, count: removed });
      return removed;
    });
  } catch (err) {
    recordPurgeFailure({ stage: 'rows' });
    logger.warn({ err, formId }, 'purge: could not remove a batch; it stays for the next run');
    return undefined;
  }
}

/** What the purge does to one form, each a selection of batches and what is done to them. */
function tasksOf(form: PurgeForm, now: Date, trashDays: number) {
  const ago = (days: number) => new Date(now.getTime() - days * DAY_MS);
  const tasks: { reason: Exclude<PurgeReason, 'request'>; mode: 'delete' | 'tombstone'; next: NextBatch }[] = [];
  // The trash's time is up: a form's submissions with it (all of them when the form went there), first.
  const trashed = trashedBefore(now, trashDays);
  const all = form.deleted_at !== null && form.deleted_at < trashed;
  tasks.push({
    reason: 'trash',
    mode: 'delete',
    next: (db, limit) => findTrashed(db, { formId: form.id, before: trashed, limit, all }),
  });
  const limits = [
    { reason: 'retention', days: form.retention_days, spamOnly: false },
    { reason: 'spam', days: form.spam_retention_days, spamOnly: true },
  ] as const;
  for (const { reason, days, spamOnly } of limits) {
    if (days === null) continue;
    const before = ago(days);
    tasks.push({
      reason,
      mode: 'delete',
      next: (db, limit) => findExpired(db, { formId: form.id, before, limit, spamOnly }),
    });
  }
  if (form.delete_after_delivery)
    tasks.push({
      reason: 'delivered',
      mode: 'tombstone',
      next: (db, limit) => findDelivered(db, { formId: form.id, limit }),
    });
  return tasks;
}
type NextBatch = (db: Queryable, limit: number) => Promise<string[]>;

/**
 * One purge run: for every form, what its retention, spam retention and delete-after-delivery make due, in batches
 * of `batchSize` until none is left, a batch is left for the next run, or `signal` aborts (a stopping process ends
 * its run between batches). Nothing is remembered between runs: what is due is found again, so a run that dies
 * halfway is resumed by the next one, on this replica or another. Each form is purged under an advisory lock of its
 * own, taken without waiting: replicas purging at once split the forms between them, and never select the same rows
 * (before, every replica walked every form in the same order, selected the same batches and waited on each other's
 * row locks: contention, not throughput). Each batch adds what it removed to its account's purge tally in its own
 * transaction, and the end of a run turns every tally into one `submissions.purged` entry in that account's audit
 * log: a run killed halfway leaves its tally to the next run's entry, so what it removed is audited all the same.
 */
export async function purgeDue(
  props: Deps &
    PurgePace & {
      signal?: AbortSignal;
      trashDays?: number;
      /** Benchmarks only: purge without the forms' locks, as every replica did before (bench/purge-replicas.js). */
      uncoordinated?: boolean;
    },
): Promise<PurgeCounts> {
  const { db } = props;
  const batchSize = props.batchSize ?? PURGE_BATCH;
  const duty = props.duty ?? PURGE_DUTY;
  const trashDays = props.trashDays ?? TRASH_DAYS;
  const counts: PurgeCounts = { retention: 0, spam: 0, delivered: 0, trash: 0, left: 0, skipped: 0, raced: 0 };
  const now = props.clock.now();
  try {
    for (const form of await findPurgeForms(db)) {
      const purgeForm = async () => {
        for (const task of tasksOf(form, now, trashDays))
          if (!(await purgeTask({ ...props, batchSize, duty, form, task, counts }))) return false;
        return true;
      };
      // One replica at a time per form: another one holding it is purging it now; this one goes on with the next.
      const run = props.uncoordinated
        ? { locked: true as const, value: await purgeForm() }
        : await underFormPurgeLock(db, form.id, purgeForm);
      if (!run.locked) counts.skipped++;
      else if (!run.value) return counts;
    }
    // Forms whose time in the trash is up, once their submissions are gone (their webhooks go with them).
    await deleteEmptyTrashedForms(db, trashedBefore(now, trashDays));
    return counts;
  } finally {
    await auditTallies(db, now);
  }
}

/** One entry per account with a purge tally: what the purge removed (or left) since its last entry, and how many. */
async function auditTallies(db: Deps['db'], at: Date): Promise<void> {
  await takePurgeTallies(db, async (trx, { account_id: accountId, ...details }) => {
    const purge = auditAs({ accountId, actor: { type: 'system', id: null, label: 'purge' } }, at);
    await purge.record(trx, { action: 'submissions.purged', target: { type: 'account', id: accountId }, details });
  });
}

/**
 * One form's task in batches until none is left or a batch is left for the next run, adding what went to every
 * count given; false once `signal` aborts (the run ends).
 */
async function purgeTask(
  props: Deps & {
    batchSize: number;
    duty: number;
    signal?: AbortSignal | undefined;
    form: PurgeForm;
    task: ReturnType<typeof tasksOf>[number];
    counts: PurgeCounts;
  },
): Promise<boolean> {
  const { db, signal, batchSize, form, task } = props;
  for (;;) {
    if (signal?.aborted) return false;
    const started = Date.now();
    const ids = await task.next(db, batchSize);
    if (ids.length === 0) return true;
    const tally = { accountId: form.account_id, reason: task.reason };
    const removed = await purgeBatch({ ...props, formId: form.id, ids, mode: task.mode, tally });
    await pause(pauseAfter(Date.now() - started, props.duty), signal);
    if (removed === undefined) {
      props.counts.left++;
      await addToPurgeTally(db, { accountId: form.account_id, reason: 'left', count: 1 }).catch(() => undefined);
      return true;
    }
    props.counts[task.reason] += removed;
    props.counts.raced += ids.length - removed;
    recordPurged({ reason: task.reason, count: removed });
    if (ids.length < batchSize) return true;
  }
}

/**
 * Runs `purgeDue` at start and every `intervalMs` (PURGE_INTERVAL_SECONDS), never two runs at once; one log line per
 * run that removed anything (what and how many), and one audit-log entry per account it touched (`purgeDue`). `stop()` aborts a run between batches and waits for it.
 */
export function startPurger(props: Deps & PurgePace & { intervalMs: number; trashDays?: number }): Worker {
  const controller = new AbortController();
  zeroPurgeFailures();
  const lag = observePurgeLag({ db: props.db, clock: props.clock, trashDays: props.trashDays ?? TRASH_DAYS });
  let running: Promise<unknown> | undefined;
  const run = () => {
    running ??= purgeDue({ ...props, signal: controller.signal })
      .then((n) => {
        if (n.retention + n.spam + n.delivered + n.trash + n.left + n.raced > 0)
          props.logger.info({ purged: n }, 'purge run');
      })
      .catch((err) => props.logger.warn({ err }, 'purge run failed; will retry'))
      .finally(() => (running = undefined));
  };
  const first = setImmediate(run);
  const timer = setInterval(run, props.intervalMs);
  timer.unref();
  return {
    async stop() {
      clearImmediate(first);
      clearInterval(timer);
      controller.abort();
      await lag.stop();
      await running;
    },
  };
}

/**
 * How long a computed purge lag serves the scrapes that follow: one pass over the forms per pod at most this often
 * (10,001 forms, 200,000 submissions: 0.5–0.7 s of Postgres on the loaded dev box). The lag moves by hours and its
 * alert is at 6 h, so 5 minutes stale costs nothing.
 */
const LAG_CACHE_MS = 5 * 60_000;

/**
 * `intake.purge.lag` at each scrape: how long the oldest submission due for removal has been due (`purgeLagSeconds`),
 * computed at most every 5 minutes (LAG_CACHE_MS).
 */
export function observePurgeLag(props: Pick<Deps, 'db' | 'clock'> & { trashDays: number; cacheMs?: number }): Worker {
  let last: { at: number; lag: Promise<number> } | undefined;
  return observeGauge(instruments().purgeLag, () => {
    const at = Date.now();
    if (!last || at - last.at >= (props.cacheMs ?? LAG_CACHE_MS)) {
      const lag = purgeLagSeconds(props.db, { now: props.clock.now(), trashDays: props.trashDays });
      last = { at, lag };
      // A failure is not kept: the next scrape asks again.
      lag.catch(() => (last = undefined));
    }
    return last.lag;
  });
}

/** Removes the given submissions of the account now, form by form, as retention does; throws 503 if storage refuses. */
export async function purgeSubmissions(props: Deps & { rows: { id: string; form_id: string }[] }): Promise<number> {
  const byForm = new Map<string, string[]>();
  for (const r of props.rows) byForm.set(r.form_id, [...(byForm.get(r.form_id) ?? []), r.id]);
  let deleted = 0;
  for (const [formId, all] of byForm) {
    for (let i = 0; i < all.length; i += PURGE_BATCH) {
      const removed = await purgeBatch({ ...props, formId, ids: all.slice(i, i + PURGE_BATCH), mode: 'delete' });
      if (removed === undefined)
        throw problem('service-unavailable', `Removed ${deleted}; the rest could not be removed now: try again`);
      deleted += removed;
    }
  }
  recordPurged({ reason: 'request', count: deleted });
  return deleted;
}
