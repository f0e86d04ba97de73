/**
 * Ingest: accepted posts per second and p50/p99 at 32 connections for urlencoded, JSON and
 * multipart bodies, against a bare Koa server doing one durable Postgres insert per request
 * (same run, same database server; urlencoded and the floor measured in turns, three rounds);
 * then the ingest process's peak memory growth while a 50 MB file is uploaded. Targets: ≥ 60 % of the bare server's throughput,
 * p99 < 50 ms, growth < 64 MB.
 */
const http = require('node:http');
const path = require('node:path');
const { randomBytes } = require('node:crypto');
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { ensureDatabase, createDb } = require('../../shared/dist/base');
const { newId } = require('../../shared/dist/contracts');
const { migrate } = require('../../shared/dist/schema');
const { connectNats } = require('../../shared/dist/messaging');
const { freePort, startProcess, peakGrowth, load, settle, emptyBenchDatabase, inTurns, WARM_UP_S } = require('../lib');
const { until } = require('../stack');

const ROOT = path.join(__dirname, '..', '..');
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/intake_bench';
const URLENCODED = 'application/x-www-form-urlencoded';
/** Turns of floor and ingest (see the ratio below). */
const ROUNDS = 3;
/** The spam filter's examples: the corpus slice the tests train on (SpamAssassin, as form posts). */
const SPAM_CORPUS = require('../../test/fixtures/spam-corpus.json');
/**
 * The rules of the form with its spam filter `on`: each kind, with lists of a realistic length, none
 * matching the benchmark's post (the duplicate rule aside: the benchmark posts one body over and over).
 */
const SPAM_RULES = {
  blocked_domains: Array.from({ length: 50 }, (_, i) => `blocked-${i}.example`),
  blocked_addresses: Array.from({ length: 20 }, (_, i) => `spammer-${i}@example.net`),
  block_disposable: true,
  blocked_words: ['viagra', 'casino', 'crypto giveaway', 'seo services', 'bitcoin doubler', 'cheap pills'],
  max_links: 3,
  required_fields: ['email'],
};

/** Removes the JetStream streams the ingest process created for this run's prefix. */
async function deleteStreams(prefix) {
  const nats = await connectNats(process.env.NATS_URL ?? 'nats://127.0.0.1:4222', prefix, 'intake-bench-cleanup');
  for (const stream of [nats.names.eventsStream, nats.names.deliveriesStream])
    await nats.jsm.streams.delete(stream).catch(() => undefined);
  await nats.nc.close();
}

async function setUp() {
  await ensureDatabase(DATABASE_URL);
  const db = createDb(DATABASE_URL, { poolMax: 2 });
  await migrate(db);
  await emptyBenchDatabase(db); // and no leftover of an aborted run's outbox for this run's relay to publish
  const accountId = newId('account');
  await db('accounts').insert({ id: accountId, name: 'bench', plan_id: 'team', quota_override: 100_000_000 });
  const slug = `bench-${randomBytes(4).toString('hex')}`;
  await db('forms').insert({ id: newId('form'), account_id: accountId, name: 'Bench form', slug, spam_filter: 'off' });
  return { db, slug, spamSlug: await spamFilteredForm(db) };
}

/**
 * A second account whose form has its spam filter `on`, every kind of rule, and a classifier trained
 * on 240 marks (the corpus slice, 120 of each kind): what ingest does for it on every post is what
 * the "spam filter on" rows measure against the "off" ones.
 */
async function spamFilteredForm(db) {
  const accountId = newId('account');
  await db('accounts').insert({ id: accountId, name: 'bench spam', plan_id: 'team', quota_override: 100_000_000 });
  const slug = `bench-spam-${randomBytes(4).toString('hex')}`;
  const formId = newId('form');
  await db('forms').insert({
    id: formId,
    account_id: accountId,
    name: 'Bench form, spam filter on',
    slug,
    spam_filter: 'on',
    spam_rules: JSON.stringify(SPAM_RULES),
  });
  const marks = [
    ...SPAM_CORPUS.spam.map((payload) => ({ payload, is_spam: true })),
    ...SPAM_CORPUS.ham.map((payload) => ({ payload, is_spam: false })),
  ];
  // Each mark is of a stored submission (an example goes with its submission).
  const rows = marks.map((m) => ({ ...m, id: newId('submission'), payload: JSON.stringify(m.payload) }));
  await db('submissions').insert(
    rows.map((r) => ({
      id: r.id,
      account_id: accountId,
      form_id: formId,
      status: r.is_spam ? 'spam' : 'received',
      payload: r.payload,
    })),
  );
  await db('spam_examples').insert(
    rows.map((r) => ({ submission_id: r.id, account_id: accountId, is_spam: r.is_spam, payload: r.payload })),
  );
  return slug;
}

function upload(url, bytes) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'multipart/form-data; boundary=benchboundary', 'transfer-encoding': 'chunked' },
      },
      (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode, body }));
      },
    );
    req.on('error', reject);
    const chunk = randomBytes(64 * 1024);
    let sent = 0;
    req.write(
      '--benchboundary\r\ncontent-disposition: form-data; name="name"\r\n\r\nbench\r\n' +
        '--benchboundary\r\ncontent-disposition: form-data; name="file"; filename="big.bin"\r\n' +
        'content-type: application/octet-stream\r\n\r\n',
    );
    const pump = () => {
      while (sent < bytes) {
        const piece = chunk.subarray(0, Math.min(chunk.length, bytes - sent));
        sent += piece.length;
        if (!req.write(piece)) return void req.once('drain', pump);
      }
      req.end('\r\n--benchboundary--\r\n');
    };
    pump();
  });
}

/** The ingest process and the bare server, each on a free port, and the environment ingest runs with. */
async function startServers(filesDir) {
  const ingestPort = await freePort();
  const barePort = await freePort();
  const env = {
    DATABASE_URL,
    PORT: String(ingestPort),
    NATS_PREFIX: `bench${randomBytes(3).toString('hex')}`,
    RATE_LIMIT_POINTS: '1000000000',
    FILES_DIR: filesDir,
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    SECRETS_KEY: randomBytes(32).toString('base64'), // production refuses a key written in the repository
  };
  const ingest = await startProcess(
    path.join(ROOT, 'services/ingest/dist/main.js'),
    env,
    `http://127.0.0.1:${ingestPort}/readyz`,
  );
  const bare = await startProcess(
    path.join(__dirname, '..', 'bare-server.js'),
    { DATABASE_URL, PORT: String(barePort) },
    `http://127.0.0.1:${barePort}/`,
  );
  return { env, ingest, bare, ingestPort, barePort };
}

/** Both servers warmed for WARM_UP_S each, so what is measured next is not a JIT still compiling. */
async function warmUp(url, bareUrl, log) {
  log(`warming up (${WARM_UP_S} s each)`);
  const headers = { 'content-type': 'application/x-www-form-urlencoded' };
  await load({ url, duration: WARM_UP_S, headers, body: 'name=warm&email=w%40example.com' });
  await load({ url: bareUrl, duration: WARM_UP_S, headers, body: 'name=warm' });
}

const BODIES = {
  urlencoded: 'name=Ada+Lovelace&email=ada%40example.com&message=Hello+from+the+benchmark&topic=a&topic=b',
  json: JSON.stringify({
    name: 'Ada Lovelace',
    email: 'ada@example.com',
    message: 'Hello from the benchmark',
    count: 3,
  }),
  multipart:
    '--b\r\ncontent-disposition: form-data; name="name"\r\n\r\nAda\r\n' +
    '--b\r\ncontent-disposition: form-data; name="file"; filename="note.txt"\r\ncontent-type: text/plain\r\n\r\n' +
    'x'.repeat(1024) +
    '\r\n--b--\r\n',
};

/**
 * The floor and ingest's urlencoded posts in turns, ROUNDS times (`inTurns`), then JSON and multipart. The ratio is
 * of the summed rates; each round's own ratio shows the spread.
 */
async function measureBodies({ db, url, spamUrl, bareUrl, duration, log }) {
  const rows = [];
  const measure = async (name, target, type, body) => {
    // What the last measurement left to the relay is published first: it would compete with this one.
    await until(async () => Number((await db('outbox').count({ n: '*' }).first()).n) === 0, 60_000, 'outbox drained');
    await settle(db);
    log(`measuring ${name} for ${duration} s`);
    rows.push({ name, ...(await load({ url: target, duration, headers: { 'content-type': type }, body })) });
  };
  const rounds = (
    await inTurns(ROUNDS, async (side, round) => {
      if (side === 'a') {
        await measure(`bare koa + 1 insert (urlencoded), round ${round}`, bareUrl, URLENCODED, BODIES.urlencoded);
        return { bare: rows[rows.length - 1] };
      }
      // Filter off and on in turns too, the order swapped every round.
      const sides = { off: ['ingest urlencoded', url], on: ['ingest urlencoded, spam filter on', spamUrl] };
      const measured = {};
      for (const which of round % 2 === 1 ? ['off', 'on'] : ['on', 'off']) {
        const [name, target] = sides[which];
        await measure(`${name}, round ${round}`, target, URLENCODED, BODIES.urlencoded);
        measured[which] = rows[rows.length - 1];
      }
      return measured;
    })
  ).map(({ a, b }) => ({ bare: a.bare, ingest: b.off, filtered: b.on }));
  await measure('ingest json', url, 'application/json', BODIES.json);
  await measure('ingest multipart (1 KiB file)', url, 'multipart/form-data; boundary=b', BODIES.multipart);
  return { rows, rounds };
}

/**
 * The spam filter's cost: ingest ÷ floor with the filter on (rules and a trained classifier) against
 * the same with it off, from the same rounds (target: within 10 %).
 */
function spamFilterFigures(rounds, total) {
  const on = total('filtered') / total('bare');
  const off = total('ingest') / total('bare');
  const perRound = rounds.map((r) => (r.filtered.rps / r.ingest.rps).toFixed(3)).join(', ');
  return {
    'ingest urlencoded, spam filter on / bare throughput': `${on.toFixed(2)} (off: ${off.toFixed(2)})`,
    'spam filter on / off (ingest ÷ floor)': `${(on / off).toFixed(3)} (rounds ${perRound}; target ≥ 0.90)`,
    'ingest urlencoded, spam filter on p99': `${Math.max(...rounds.map((r) => r.filtered.p99))} ms`,
  };
}

/** The suite's figures: the ratio of the summed rates, the worst p99, the upload's memory growth. */
function figuresOf(rounds, mem) {
  const total = (side) => rounds.reduce((sum, r) => sum + r[side].rps, 0);
  const ratio = total('ingest') / total('bare');
  const perRound = rounds.map((r) => (r.ingest.rps / r.bare.rps).toFixed(2)).join(', ');
  const p99s = rounds.map((r) => r.ingest.p99);
  const figures = {
    'ingest urlencoded / bare throughput': `${ratio.toFixed(2)} (rounds ${perRound}; target ≥ 0.60)`,
    'ingest urlencoded p99': `${Math.max(...p99s)} ms, worst of ${ROUNDS} rounds (target < 50 ms)`,
    ...spamFilterFigures(rounds, total),
    '50 MB upload: ingest RSS before': `${(mem.before / 1048576).toFixed(1)} MiB`,
    '50 MB upload: ingest peak RSS growth': `${(mem.growth / 1048576).toFixed(1)} MiB (target < 64 MB)`,
  };
  return { figures, ratio };
}

exports.SPAM_RULES = SPAM_RULES;

exports.run = async function run({ duration, log }) {
  const { db, slug, spamSlug } = await setUp();
  const filesDir = mkdtempSync(path.join(tmpdir(), 'intake-bench-files-'));
  const { env, ingest, bare, ingestPort, barePort } = await startServers(filesDir);
  const url = `http://127.0.0.1:${ingestPort}/v1/f/${slug}`;
  const spamUrl = `http://127.0.0.1:${ingestPort}/v1/f/${spamSlug}`;
  const bareUrl = `http://127.0.0.1:${barePort}/`;
  try {
    await warmUp(url, bareUrl, log);
    await warmUp(spamUrl, bareUrl, log);
    log('uploading a 50 MB file');
    const mem = await peakGrowth(ingest.pid, () => upload(url, 50 * 1000 * 1000));
    if (mem.result.status !== 201) throw new Error(`50 MB upload answered ${mem.result.status}: ${mem.result.body}`);
    const { rows, rounds } = await measureBodies({ db, url, spamUrl, bareUrl, duration, log });
    const { figures, ratio } = figuresOf(rounds, mem);
    return { rows, figures, ratio, memoryGrowthBytes: mem.growth };
  } finally {
    await ingest.stop();
    await bare.stop();
    await db.destroy();
    await deleteStreams(env.NATS_PREFIX);
    rmSync(filesDir, { recursive: true, force: true });
  }
};
