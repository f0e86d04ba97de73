/** Helpers for suites that run the stack: a bench database and platform, a form with a webhook, a receiver, percentiles. */
const http = require('node:http');
const path = require('node:path');
const { randomBytes } = require('node:crypto');
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { ensureDatabase, loadConfig, createLogger } = require('../shared/dist/base');
const { newId } = require('../shared/dist/contracts');
const { migrate } = require('../shared/dist/schema');
const { createPlatform, closePlatform } = require('../shared/dist/runtime');
const { request } = require('undici');
const { freePort, startProcess, emptyBenchDatabase, inTurns } = require('./lib');

const ROOT = path.join(__dirname, '..');
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/intake_bench';
// Production refuses any key written in the repository: each run makes its own.
const SECRETS_KEY = randomBytes(32).toString('base64');

/** A platform on the bench database, emptied, with a fresh NATS prefix (its streams are deleted by close()). */
async function benchPlatform() {
  await ensureDatabase(DATABASE_URL);
  const filesDir = mkdtempSync(path.join(tmpdir(), 'intake-bench-files-'));
  const config = loadConfig(
    {},
    {
      DATABASE_URL,
      NATS_PREFIX: `bench${randomBytes(3).toString('hex')}`,
      SECRETS_KEY,
      FILES_DIR: filesDir,
      LOG_LEVEL: 'silent',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: true,
    },
  );
  const platform = await createPlatform(config, {
    service: 'bench',
    logger: createLogger({ level: 'silent', service: 'bench' }),
    poolMax: 10,
  });
  await migrate(platform.db);
  await emptyBenchDatabase(platform.db);
  const env = {
    DATABASE_URL,
    NATS_PREFIX: config.NATS_PREFIX,
    SECRETS_KEY,
    FILES_DIR: filesDir,
    RATE_LIMIT_POINTS: '1000000000',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
  };
  return {
    platform,
    env,
    async close() {
      for (const stream of [platform.nats.names.eventsStream, platform.nats.names.deliveriesStream])
        await platform.nats.jsm.streams.delete(stream).catch(() => undefined);
      await closePlatform(platform);
      rmSync(filesDir, { recursive: true, force: true });
    },
  };
}

/** An account (quota out of the way) with one form and, when `webhookUrl` is given, one webhook; `notifyEmails` for mail. */
async function formWithWebhook(platform, webhookUrl, notifyEmails = []) {
  const accountId = newId('account');
  await platform.db('accounts').insert({ id: accountId, name: 'bench', plan_id: 'team', quota_override: 100_000_000 });
  const formId = newId('form');
  const slug = `bench-${randomBytes(4).toString('hex')}`;
  await platform.db('forms').insert({
    id: formId,
    account_id: accountId,
    name: 'Bench form',
    slug,
    notify_emails: JSON.stringify(notifyEmails),
  });
  if (webhookUrl)
    await platform.db('webhooks').insert({
      id: newId('webhook'),
      account_id: accountId,
      form_id: formId,
      url: webhookUrl,
      enabled: true,
      secret: platform.secrets.seal(`whsec_${randomBytes(32).toString('base64')}`),
    });
  return { accountId, formId, slug };
}

/** A local webhook receiver: notes the arrival time of each submission id (first arrival only). */
async function receiver() {
  const arrivals = new Map();
  let requests = 0;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      requests++;
      const id = JSON.parse(Buffer.concat(chunks).toString('utf8')).data.submission_id;
      if (!arrivals.has(id)) arrivals.set(id, at);
      res.end('ok');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    arrivals,
    requests: () => requests,
    /** Forgets every arrival and request (between layouts). */
    reset: () => {
      arrivals.clear();
      requests = 0;
    },
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))),
  };
}

/** A local SMTP server that accepts every mail and counts them (`mails()`). */
async function mailSink() {
  const { SMTPServer } = require('smtp-server');
  let mails = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        mails++;
        callback();
      });
    },
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${server.server.address().port}`,
    mails: () => mails,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Starts `services/<name>/dist/main.js` on a free port with the bench env. */
async function service(name, env) {
  const port = await freePort();
  return startProcess(
    path.join(ROOT, 'services', name, 'dist', 'main.js'),
    { ...env, PORT: String(port) },
    `http://127.0.0.1:${port}/readyz`,
  ).then((p) => ({ ...p, url: `http://127.0.0.1:${port}` }));
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Waits (polling) until `probe()` is true or `timeoutMs` passes. */
async function until(probe, timeoutMs, message) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${message}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const round = (n, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/** GETs `url` with the key and reads the whole body; throws unless 200. */
async function get(url, key) {
  const res = await request(url, { headers: { authorization: `Bearer ${key}` } });
  const body = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${body.slice(0, 300)}`);
  return body;
}

/** The median of `repeats` timings of `fn`, in ms. */
async function median(fn, repeats) {
  const times = [];
  for (let i = 0; i < repeats; i++) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  return percentile(
    times.sort((a, b) => a - b),
    50,
  );
}

/**
 * The same requests at a small and a large scale: `urls.small` and `urls.large` name the same requests, each GET with
 * `keys[side]`. After one warm-up of each, in `rounds` turns (`inTurns`) the median of `repeats` of each; per request
 * the medians at each side, the ratio of the large side's sum to the small one's, and each round's ratio (the spread).
 * `what` names a side in the log.
 */
async function smallAgainstLarge({ urls, keys, rounds, repeats, log, what }) {
  const names = Object.keys(urls.small);
  for (const side of ['small', 'large']) for (const name of names) await get(urls[side][name], keys[side]); // warm
  const turns = await inTurns(rounds, async (turn, n) => {
    const side = turn === 'a' ? 'small' : 'large';
    log(`round ${n}: ${side} ${what}`);
    const out = {};
    for (const name of names) out[name] = await median(() => get(urls[side][name], keys[side]), repeats);
    return out;
  });
  const sum = (xs) => xs.reduce((a, b) => a + b, 0);
  return names.map((name) => {
    const small = turns.map((t) => t.a[name]);
    const large = turns.map((t) => t.b[name]);
    return {
      name,
      smallMs: small.map((x) => round(x, 2)),
      largeMs: large.map((x) => round(x, 2)),
      ratio: sum(large) / sum(small),
      rounds: large.map((l, i) => round(l / small[i], 2)),
    };
  });
}

module.exports = {
  benchPlatform,
  formWithWebhook,
  receiver,
  mailSink,
  service,
  percentile,
  until,
  round,
  median,
  smallAgainstLarge,
};
