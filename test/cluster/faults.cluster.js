/**
 * Issue 67's faults, each under load, each its own test, on one rig (rig.js) brought up before and torn down after.
 * Each test: wait until the rig is whole (a leader with a synchronous standby, every service ready, three NATS nodes),
 * start the client (load.js) in the client host, inject the fault, heal it, let the load finish, wait until every
 * stored submission is delivered (or a bound passes), then the checker (check.js) over the logs and the database; the
 * test fails on any violation of what issue 67 asks (check.js: violations).
 *
 *   npm run test:cluster   the short version (each fault once, a short load)
 *   npm run chaos          the long version (CHAOS_ROUNDS, 3 by default: each fault three times, a longer load)
 *
 * Every test prints one line `RESULT {json}`: the fault, the checker's report and the fault's own timings.
 */
'use strict';
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const path = require('node:path');
const fs = require('node:fs');
const { describe, it, before, after } = require('node:test');
const rig = require('./rig');
const { check, violations } = require('./check');

const LONG = process.env.CHAOS === 'long';
const ROUNDS = LONG ? Number(process.env.CHAOS_ROUNDS ?? 3) : 1;
const RATE = Number(process.env.CHAOS_RATE ?? (LONG ? 20 : 10));
/** Seconds of load around each fault: before it, and after it healed. */
const LEAD = LONG ? 8 : 3;
const TRAIL = LONG ? 15 : 4;
const NATS_CUT_SECONDS = LONG ? 30 : 10;
const APP_DOWN_SECONDS = LONG ? 30 : 10;
const DELIVERY_CUT_SECONDS = 30;
const SETTLE_MS = 150_000;
/** The rig's WEBHOOK_TIMEOUT_MS (rig.js): the longest an attempt runs. */
const WEBHOOK_TIMEOUT_MS = 5000;

let dir;
let fixtures;

const since = (t) => Date.now() - t;
const logs = () => path.join(dir, 'logs');

/** Waits until the rig is whole: Postgres with a synchronous standby, three NATS nodes, every service ready. */
async function steady() {
  await rig.until('a leader and a synchronous standby', rig.healthyPair, 180_000, 500);
  await rig.until(
    'three NATS nodes with JetStream',
    async () => {
      for (const h of rig.NATS)
        if ((await rig.httpGet(`http://${rig.address(h)}:8222/healthz`)).status !== 200) return false;
      return true;
    },
    120_000,
  );
  for (const host of rig.APPS)
    for (const svc of Object.keys(rig.SERVICES))
      await rig.until(`${svc} on ${host} ready`, () => rig.serviceReady(host, svc), 120_000, 500);
}

/** The client, in the client host, for `seconds`; resolves with its summary. */
function load(prefix, seconds) {
  const options = {
    url: `http://${rig.fqdn('lb')}/v1/f/${fixtures.slug}`,
    log: path.join(logs(), 'client.jsonl'),
    rate: RATE,
    seconds,
    prefix,
  };
  const child = spawn(
    'ip',
    ['netns', 'exec', rig.ns('client'), process.execPath, path.join(__dirname, 'load.js'), JSON.stringify(options)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  return new Promise((resolve, reject) =>
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`load exited ${code}`)))),
  );
}

function runCheck(prefix) {
  return check({
    clientLog: path.join(logs(), 'client.jsonl'),
    deliveryLogs: fs
      .readdirSync(logs())
      .filter((f) => f.startsWith('deliveries-'))
      .map((f) => path.join(logs(), f)),
    databaseUrl: `postgres://postgres:${rig.PG_PASSWORD}@${rig.address('lb')}:5432/intake`,
    formId: fixtures.formId,
    prefix,
  });
}

/**
 * One fault under load: `fault()` injects and heals it (within the load's time) and returns its own timings;
 * `seconds` of load in all. Returns the report.
 */
async function scenario(name, seconds, fault, options = {}) {
  await steady();
  const prefix = `${name}-${Date.now()}`;
  const started = Date.now();
  const client = load(prefix, seconds);
  await rig.sleep(LEAD * 1000);
  let timings;
  try {
    timings = await fault();
  } finally {
    // Whatever the fault left, the load ends and the rig heals before the next test.
    await client.catch(() => undefined);
  }
  const summary = await client;
  let report = await runCheck(prefix);
  const settleStarted = Date.now();
  while (report.notDelivered.length > 0 && since(settleStarted) < SETTLE_MS) {
    await rig.sleep(2000);
    report = await runCheck(prefix);
  }
  const result = {
    fault: name,
    rate: RATE,
    ms: since(started),
    settledMs: since(settleStarted),
    timings,
    summary,
    report,
  };
  console.log(`RESULT ${JSON.stringify(result)}`);
  const allowed = typeof options === 'function' ? options(timings) : (options ?? {});
  assert.deepEqual(violations(report, allowed), [], JSON.stringify(result));
  return report;
}

const pidsOf = (host) =>
  rig
    .shQuiet('ip', ['netns', 'pids', rig.ns(host)])
    .split('\n')
    .filter(Boolean)
    .map(Number);

/** Patroni's current leader as seen from a node that answers, else undefined. */
async function leaderName() {
  const c = await rig.patroniCluster();
  return c?.members?.find((m) => m.role === 'leader' && m.state === 'running')?.name;
}

/** The Postgres primary killed: every process of its host (Patroni and Postgres), SIGKILL; then Patroni started again. */
async function killPrimary() {
  const { leader } = await rig.healthyPair();
  const t0 = Date.now();
  rig.killPids(pidsOf(leader));
  const next = await rig.until(
    'another leader',
    async () => ((await leaderName()) ?? leader) !== leader && leaderName(),
    90_000,
    200,
  );
  const promotedMs = since(t0);
  rig.startPatroni(dir, leader);
  await rig.sleep(TRAIL * 1000);
  return { killed: leader, promoted: next, promotedMs };
}

/** The primary's link down while it leads, held past Patroni's ttl, then up again. */
async function partitionPrimary() {
  const { leader } = await rig.healthyPair();
  const t0 = Date.now();
  rig.inNs(leader, 'ip', ['link', 'set', 'eth0', 'down']);
  // The cut-off node answers on its own loopback: when it stops calling itself the primary.
  const ownRole = async () => {
    try {
      return rig.inNs(leader, 'curl', [
        '-s',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        '-m',
        '1',
        'http://127.0.0.1:8008/primary',
      ]);
    } catch {
      return 'none';
    }
  };
  let demotedMs;
  const next = await rig.until(
    'another leader',
    async () => {
      if (demotedMs === undefined && (await ownRole()) !== '200') demotedMs = since(t0);
      const c = await rig.patroniCluster();
      const l = c?.members?.find((m) => m.role === 'leader' && m.state === 'running')?.name;
      return l && l !== leader && l;
    },
    90_000,
    200,
  );
  const promotedMs = since(t0);
  await rig.until(
    'the cut-off node to demote itself',
    async () => {
      if (demotedMs === undefined && (await ownRole()) !== '200') demotedMs = since(t0);
      return demotedMs !== undefined;
    },
    60_000,
    200,
  );
  // Held past the ttl (twice over in the long version), so the old primary has had every chance to write alone.
  const hold = rig.PATRONI_TIMING.ttl * (LONG ? 2000 : 1500) - since(t0);
  if (hold > 0) await rig.sleep(hold);
  rig.inNs(leader, 'ip', ['link', 'set', 'eth0', 'up']);
  await rig.sleep(TRAIL * 1000);
  return { cut: leader, promoted: next, promotedMs, oldPrimaryDemotedMs: demotedMs, cutMs: since(t0) };
}

/** The NATS node leading the JetStream meta group cut off (link down), then back. */
async function partitionNats() {
  const jsz = (await rig.httpGet(`http://${rig.address('nats1')}:8222/jsz`)).body;
  const node = jsz.meta_cluster?.leader ?? 'nats1';
  rig.inNs(node, 'ip', ['link', 'set', 'eth0', 'down']);
  await rig.sleep(NATS_CUT_SECONDS * 1000);
  rig.inNs(node, 'ip', ['link', 'set', 'eth0', 'up']);
  await rig.sleep(TRAIL * 1000);
  return { cut: node, cutSeconds: NATS_CUT_SECONDS };
}

/** An application host killed (every process: the four services and its receiver), then brought back. */
async function killAppHost() {
  const host = 'app2';
  const killedAt = Date.now();
  rig.killPids(pidsOf(host));
  await rig.sleep(APP_DOWN_SECONDS * 1000);
  // Started again; the next test waits until it is ready.
  rig.startAppHost(dir, host);
  await rig.sleep(TRAIL * 1000);
  return { killed: host, downSeconds: APP_DOWN_SECONDS, killedAt };
}

/** One service process restarted: drained, SIGTERM, started again once it exited, back in rotation once ready. */
async function restart(host, svc) {
  const pid = rig.state(dir).pids[`${host}/${svc}`];
  // Out of HAProxy's rotation as it is told to stop (Kubernetes removes a terminating pod's endpoint the same way).
  await rig.rotation(dir, host, svc, 'drain');
  rig.killPids([pid], 'SIGTERM');
  await rig.until(`${svc} on ${host} to exit`, () => !rig.alive(pid), 60_000, 100);
  rig.startService(dir, host, svc);
  await rig.until(`${svc} on ${host} ready again`, () => rig.serviceReady(host, svc), 120_000, 250);
  await rig.rotation(dir, host, svc, 'ready');
}

/**
 * Every service restarted, one replica of each at a time, as `kubectl rollout restart` of every Deployment does: the
 * short version restarts a host's four services together (the other host serves meanwhile), the long one restarts
 * the eight processes one after another.
 */
async function rollingRestart() {
  const t0 = Date.now();
  for (const host of rig.APPS)
    if (LONG) for (const svc of Object.keys(rig.SERVICES)) await restart(host, svc);
    else await Promise.all(Object.keys(rig.SERVICES).map((svc) => restart(host, svc)));
  await rig.sleep(TRAIL * 1000);
  return { restarts: rig.APPS.length * Object.keys(rig.SERVICES).length, ms: since(t0) };
}

/** Delivery cut off from Postgres (packets dropped silently) for 30 s, on both hosts at once. */
async function cutDelivery() {
  const cutAt = Date.now();
  rig.cutDeliveryFromPostgres();
  try {
    await rig.sleep(DELIVERY_CUT_SECONDS * 1000);
  } finally {
    rig.reconnectDeliveryToPostgres();
  }
  const healedAt = Date.now();
  await rig.sleep(TRAIL * 1000);
  return { cutSeconds: DELIVERY_CUT_SECONDS, cutAt, healedAt };
}

const FAULTS = [
  ['postgres-primary-killed', 20, killPrimary],
  ['postgres-primary-cut-off', 32, partitionPrimary],
  ['nats-node-cut-off', LEAD + NATS_CUT_SECONDS + TRAIL, partitionNats],
  // A post in flight on the host that dies loses its connection (HAProxy cannot resend a request it has sent):
  // the client sees a reset or a 502 and sends it again, as it does on a 503.
  [
    'app-host-killed',
    LEAD + APP_DOWN_SECONDS + TRAIL,
    killAppHost,
    // A webhook its delivery process had sent but not recorded when killed is sent again by the other host (the same
    // delivery id, which receivers deduplicate by): allowed for one first received by then, no other.
    ({ killedAt }) => ({
      allowOtherRefusals: ['UND_ERR_SOCKET', 'ECONNRESET', '502'],
      allowDoubledBetween: [killedAt - WEBHOOK_TIMEOUT_MS, killedAt + 1000],
    }),
  ],
  ['rolling-restart', LONG ? 180 : 45, rollingRestart],
  // Delivery's record of an attempt sent as the cut began waits for Postgres (services/delivery recordMade): no
  // doubled delivery is allowed.
  ['delivery-cut-from-postgres', LEAD + DELIVERY_CUT_SECONDS + TRAIL, cutDelivery],
];
const only = process.env.CHAOS_ONLY?.split(',');

describe(`failover rig (${LONG ? 'long' : 'short'})`, { concurrency: 1 }, () => {
  before(async () => {
    // RIG_REUSE=1 (with RIG_KEEP=1 the run before): the rig that is up, for working on one fault.
    if (!process.env.RIG_REUSE) await rig.down();
    const s = process.env.RIG_REUSE ? rig.current() : await rig.up();
    dir = s.dir;
    fixtures = s.fixtures;
  });
  after(async () => {
    if (process.env.RIG_KEEP) return;
    await rig.down();
    const left = rig.leftovers();
    assert.deepEqual(left, { namespaces: [], links: [], netnsConfigs: [], dirs: [], pids: [] });
  });

  it('no fault: every post acknowledged, stored once and delivered once', async () => {
    await scenario('baseline', LONG ? 30 : 6, async () => {
      await rig.sleep((LONG ? 22 : 3) * 1000);
      return {};
    });
  });

  for (let round = 1; round <= ROUNDS; round += 1)
    for (const [name, seconds, fault, options] of FAULTS) {
      if (only && !only.includes(name)) continue;
      it(`${name}${ROUNDS > 1 ? ` (round ${round})` : ''}`, async () => {
        await scenario(name, LONG ? seconds + 10 : seconds, fault, options);
      });
    }
});
