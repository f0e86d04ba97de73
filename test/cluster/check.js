/**
 * The rig's checker: from the client's log, the receivers' logs and the database, what happened to one run's posts
 * (those whose Idempotency-Key starts with the run's prefix).
 *
 * - lost: acknowledged (a 201, or a replay's 200, with its submission id) but not stored;
 * - storedTwice: keys stored as more than one submission, and keys acknowledged with two different ids;
 * - notDelivered: stored submissions no receiver logged;
 * - deliveredTwice: delivery ids logged more than once (every receiver's log, merged), and submissions that got more
 *   than one delivery id;
 * - refusals: the longest window in which posts were refused (from the first refused attempt's send to the next
 *   acknowledged attempt's send), the answers that were neither 2xx nor a 503 with Retry-After, 500s, and hangs
 *   (attempts that ran into the client's time-out).
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const pg = require('pg');

const readLines = (file) =>
  fs.existsSync(file)
    ? fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];

const tally = (values) => values.reduce((t, v) => ({ ...t, [v]: (t[v] ?? 0) + 1 }), {});

/** Refusal windows from the attempts, in send order. */
function refusalWindows(attempts) {
  const sorted = [...attempts].sort((a, b) => a.t0 - b.t0);
  const windows = [];
  let openedAt;
  for (const a of sorted) {
    const ok = (a.status === 201 || a.status === 200) && a.id;
    if (!ok && openedAt === undefined) openedAt = a.t0;
    if (ok && openedAt !== undefined) {
      windows.push({ from: openedAt, to: a.t0, ms: a.t0 - openedAt });
      openedAt = undefined;
    }
  }
  if (openedAt !== undefined) windows.push({ from: openedAt, to: undefined, ms: Infinity });
  return windows;
}

/**
 * @param {{ clientLog: string, deliveryLogs: string[], databaseUrl: string, formId: string, prefix: string }} run
 */
async function check(run) {
  const attempts = readLines(run.clientLog).filter((a) => a.key.startsWith(`${run.prefix}-`));
  const acks = attempts.filter((a) => (a.status === 201 || a.status === 200) && a.id);
  const ackedIds = new Map();
  const idsByKey = new Map();
  for (const a of acks) {
    ackedIds.set(a.id, a.key);
    idsByKey.set(a.key, new Set([...(idsByKey.get(a.key) ?? []), a.id]));
  }
  const keys = new Set(attempts.map((a) => a.key));

  const client = new pg.Client({ connectionString: run.databaseUrl, connectionTimeoutMillis: 5000 });
  await client.connect();
  let stored;
  try {
    stored = (
      await client.query(
        `SELECT id, status, payload->>'k' AS k FROM submissions WHERE form_id = $1 AND payload->>'k' LIKE $2`,
        [run.formId, `${run.prefix}-%`],
      )
    ).rows;
  } finally {
    await client.end();
  }
  const storedIds = new Set(stored.map((s) => s.id));
  const storedByKey = tally(stored.map((s) => s.k));

  const deliveries = run.deliveryLogs
    .flatMap(readLines)
    .filter((d) => d.type === 'submission.created' && storedIds.has(d.submission));
  const deliveredSubmissions = new Set(deliveries.map((d) => d.submission));
  const deliveryIdsBySubmission = new Map();
  for (const d of deliveries)
    deliveryIdsBySubmission.set(
      d.submission,
      new Set([...(deliveryIdsBySubmission.get(d.submission) ?? []), d.delivery]),
    );
  const byDelivery = tally(deliveries.map((d) => d.delivery));
  const firstReceived = new Map();
  for (const d of deliveries) firstReceived.set(d.delivery, Math.min(firstReceived.get(d.delivery) ?? Infinity, d.t));

  const windows = refusalWindows(attempts);
  const longest = windows.reduce((m, w) => (w.ms > m.ms ? w : m), { ms: 0 });
  const refused = attempts.filter((a) => !((a.status === 201 || a.status === 200) && a.id));
  const badRefusals = refused.filter((a) => !(a.status === 503 && a.retryAfter !== undefined));

  return {
    posts: keys.size,
    attempts: attempts.length,
    statuses: tally(attempts.map((a) => a.status ?? a.error)),
    acked: new Set(acks.map((a) => a.key)).size,
    unacked: [...keys].filter((k) => !idsByKey.has(k)),
    stored: stored.length,
    lost: [...ackedIds.keys()].filter((id) => !storedIds.has(id)),
    storedTwice: [
      ...Object.entries(storedByKey)
        .filter(([, n]) => n > 1)
        .map(([k]) => k),
      ...[...idsByKey.entries()].filter(([, ids]) => ids.size > 1).map(([k]) => k),
    ],
    notDelivered: stored.filter((s) => s.status === 'received' && !deliveredSubmissions.has(s.id)).map((s) => s.id),
    deliveredTwice: Object.entries(byDelivery)
      .filter(([, n]) => n > 1)
      .map(([id, n]) => ({ id, times: n, first: firstReceived.get(id) })),
    submissionsWithTwoDeliveries: [...deliveryIdsBySubmission.entries()]
      .filter(([, ids]) => ids.size > 1)
      .map(([s]) => s),
    longestRefusalMs: longest.ms,
    longestRefusal: longest.from ? { from: new Date(longest.from).toISOString(), ms: longest.ms } : undefined,
    refusalWindows: windows.length,
    status500: attempts.filter((a) => a.status === 500).length,
    hangs: attempts.filter((a) => a.error === 'timeout').length,
    refusedOtherwise: tally(badRefusals.map((a) => `${a.status ?? a.error}${a.problem ? ` ${a.problem}` : ''}`)),
  };
}

/** The properties issue 67 asks of every run; returns the ones that failed (empty: all hold). */
function violations(report, { allowOtherRefusals = [], allowDoubledBetween } = {}) {
  const failed = [];
  if (report.lost.length) failed.push(`${report.lost.length} acknowledged posts not stored`);
  if (report.storedTwice.length) failed.push(`${report.storedTwice.length} posts stored twice`);
  if (report.unacked.length) failed.push(`${report.unacked.length} posts never acknowledged`);
  if (report.notDelivered.length) failed.push(`${report.notDelivered.length} stored submissions not delivered`);
  // A fault that cuts delivery off from Postgres may leave an attempt sent but unrecorded; the receiver gets it again
  // (the same delivery id, which receivers deduplicate by). Allowed only for one first received in `[from, to]`.
  const [from, to] = allowDoubledBetween ?? [Infinity, -Infinity];
  const doubled = report.deliveredTwice.filter((d) => !(d.first >= from && d.first <= to));
  if (doubled.length) failed.push(`${doubled.length} deliveries received twice`);
  if (report.submissionsWithTwoDeliveries.length)
    failed.push(`${report.submissionsWithTwoDeliveries.length} submissions delivered under two delivery ids`);
  if (report.status500) failed.push(`${report.status500} answers 500`);
  if (report.hangs) failed.push(`${report.hangs} posts hung past the client's time-out`);
  const other = Object.keys(report.refusedOtherwise).filter((k) => !allowOtherRefusals.some((a) => k.startsWith(a)));
  if (other.length) failed.push(`refused without a 503 and Retry-After: ${JSON.stringify(report.refusedOtherwise)}`);
  return failed;
}

module.exports = { check, violations, refusalWindows, readLines };

if (require.main === module) {
  const [dir, prefix] = process.argv.slice(2);
  const s = JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8'));
  const logs = path.join(dir, 'logs');
  check({
    clientLog: path.join(logs, 'client.jsonl'),
    deliveryLogs: fs
      .readdirSync(logs)
      .filter((f) => f.startsWith('deliveries-'))
      .map((f) => path.join(logs, f)),
    databaseUrl: `postgres://postgres:intk-rig@198.18.0.50:5432/intake`,
    formId: s.fixtures.formId,
    prefix,
  }).then((r) => console.log(JSON.stringify(r, null, 2)));
}
