#!/usr/bin/env node
/**
 * `node bench/walk.js` (after `npx tsc -b`): the files whose code one submission runs, from its post to its webhook
 * attempt and its usage count (docs/architecture.md#the-path-of-one-submission). Ingest, delivery and usage run as
 * their own processes, each counting its functions' calls (bench/walk-probe.js). After a warm-up, the calls of
 * IDLE_MS without a post are taken (longer than the longest periodic task, the reconciler's 30 s), then those of a
 * window in which one submission is posted and arrives at its webhook and in `usage_daily`; a function counts when it
 * was called in that window and never while idle (pollers and timers), and a file when one of its functions does.
 * Barrels (`index.ts`, whose only functions are the getters of what they re-export) are not counted.
 */
const path = require('node:path');
const fs = require('node:fs');
const { mkdtempSync, rmSync } = fs;
const { tmpdir } = require('node:os');

const WINDOW_MS = 3000;
const IDLE_MS = 33_000;
const ROOT = path.join(__dirname, '..');
process.env.BENCH_NODE_ARGS = `--require ${path.join(__dirname, 'walk-probe.js')}`;
const { benchPlatform, formWithWebhook, receiver, service, until } = require('./stack');

/** Where a compiled file's source is: `<package>/dist/x.js` → `<package>/src/x.ts`. */
const sourceOf = (url) => path.relative(ROOT, new URL(url).pathname).replace('/dist/', '/src/').replace(/\.js$/, '.ts');

/** Asks every process for the calls since the last take, and reads what each wrote. */
async function take(dir, processes, n) {
  for (const p of processes) process.kill(p.pid, 'SIGUSR2');
  const files = processes.map((p) => path.join(dir, `${p.pid}-${n}.json`));
  await until(async () => files.every((f) => fs.existsSync(f)), 10_000, 'the coverage of every process');
  return new Set(files.flatMap((f) => JSON.parse(fs.readFileSync(f, 'utf8'))));
}

async function post(ingestUrl, slug, n) {
  const res = await fetch(`${ingestUrl}/v1/f/${slug}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `name=Walker&email=walker%40example.com&message=step+${n}`,
  });
  return ((await res.json()) ?? {}).id;
}

/** Posts one submission and waits until its webhook came and usage counted it. */
async function walkOne(stack, n) {
  const id = await post(stack.ingest.url, stack.form.slug, n);
  await until(async () => stack.hook.arrivals.has(id), 10_000, 'the webhook');
  const counted = async () =>
    Number((await stack.platform.db('usage_daily').where({ form_id: stack.form.formId }).sum('received as n'))[0]?.n);
  await until(async () => (await counted()) >= n, 10_000, 'the usage count');
}

/** The files of the functions called in `walked` and not in `idle`, each with its package. */
function filesOf(walked, idle) {
  const files = new Set();
  for (const fn of walked) if (!idle.has(fn)) files.add(sourceOf(fn.split('#')[0]));
  return [...files].sort();
}

async function main() {
  const dir = mkdtempSync(path.join(tmpdir(), 'intake-walk-'));
  const { platform, env, close } = await benchPlatform();
  const hook = await receiver();
  const form = await formWithWebhook(platform, hook.url);
  const processes = [];
  try {
    const withDir = { ...env, WALK_DIR: dir, LOG_LEVEL: 'silent' };
    for (const name of ['ingest', 'delivery', 'usage']) processes.push(await service(name, withDir));
    const stack = { platform, hook, form, ingest: processes[0] };
    for (let n = 1; n <= 3; n++) await walkOne(stack, n); // every lazy path taken once before
    await take(dir, processes, 1);
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idle = await take(dir, processes, 2);
    const started = Date.now();
    await walkOne(stack, 4);
    await new Promise((r) => setTimeout(r, Math.max(0, WINDOW_MS - (Date.now() - started))));
    const files = filesOf(await take(dir, processes, 3), idle).filter((f) => !f.endsWith('/index.ts'));
    const generic = /^shared\/src\/(base|contracts|schema|telemetry|auth|audit|messaging|http|runtime)\//;
    const specific = files.filter((f) => !generic.test(f));
    console.log(files.map((f) => `${generic.test(f) ? ' ' : '*'} ${f}`).join('\n'));
    console.log(
      `the walk of one submission: ${files.length} files, ${specific.length} of them specific to submissions (*: ` +
        `the services' and shared's submissions and webhooks; the rest is shared's generic layers)`,
    );
  } finally {
    for (const p of processes) await p.stop();
    await hook.close();
    await close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
