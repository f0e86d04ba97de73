/**
 * The rig's client: posts to a form at a steady rate, each post with an Idempotency-Key, retried as a careful website
 * would (on a 5xx, a 429, a reset or a time-out, after the answer's Retry-After, else half a second), and logs every
 * attempt as a JSON line: key, attempt, sent and answered (ms), status, the submission id of a 201 (or of a replay's
 * 200), Retry-After, or the error.
 *
 *   node test/cluster/load.js '<json options>'
 *   options: { url, log, rate (posts/s), seconds, prefix, timeoutMs (10000), giveUpAfterMs (120000 past the end) }
 *
 * Prints a summary on stdout when every post is acknowledged or given up.
 */
'use strict';
/* global AbortSignal */
const fs = require('node:fs');

const options = { timeoutMs: 10_000, giveUpAfterMs: 120_000, ...JSON.parse(process.argv[2]) };
const out = fs.openSync(options.log, 'a');
const write = (line) => fs.writeSync(out, `${JSON.stringify(line)}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const startedAt = Date.now();
const endsAt = startedAt + options.seconds * 1000;
const giveUpAt = endsAt + options.giveUpAfterMs;
const summary = { posts: 0, acked: 0, gaveUp: 0, attempts: 0, statuses: {} };

async function attempt(key, n, a) {
  const t0 = Date.now();
  const line = { key, n, a, t0 };
  try {
    const res = await fetch(options.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ k: key, n }),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    line.status = res.status;
    const retryAfter = res.headers.get('retry-after');
    if (retryAfter !== null) line.retryAfter = retryAfter;
    const text = await res.text();
    try {
      const body = JSON.parse(text);
      if (body.id) line.id = body.id;
      if (body.idempotent_replay) line.replay = true;
      if (body.type && res.status >= 400) line.problem = body.type.split('/').pop();
    } catch {
      line.body = text.slice(0, 200);
    }
  } catch (err) {
    const cause = err.cause?.code ?? err.cause?.message ?? err.name;
    line.error = err.name === 'TimeoutError' ? 'timeout' : cause;
  }
  line.t1 = Date.now();
  write(line);
  summary.attempts += 1;
  const k = line.status ?? line.error;
  summary.statuses[k] = (summary.statuses[k] ?? 0) + 1;
  return line;
}

async function post(n) {
  const key = `${options.prefix}-${n}`;
  summary.posts += 1;
  for (let a = 1; ; a += 1) {
    const line = await attempt(key, n, a);
    if ((line.status === 201 || line.status === 200) && line.id) {
      summary.acked += 1;
      return;
    }
    const retryable = line.error || line.status >= 500 || line.status === 429;
    if (!retryable || Date.now() > giveUpAt) {
      summary.gaveUp += 1;
      return;
    }
    const after = Number(line.retryAfter);
    await sleep(Number.isFinite(after) && after > 0 ? Math.min(after, 5) * 1000 : 500);
  }
}

async function main() {
  const inFlight = [];
  const interval = 1000 / options.rate;
  for (let n = 0; ; n += 1) {
    const due = startedAt + n * interval;
    if (due >= endsAt) break;
    const wait = due - Date.now();
    if (wait > 0) await sleep(wait);
    inFlight.push(post(n));
  }
  await Promise.all(inFlight);
  summary.ms = Date.now() - startedAt;
  console.log(JSON.stringify(summary));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
