/**
 * The failover rig (issue 67): hosts are network namespaces on one bridge, each with its own address in the
 * benchmarking range (RFC 2544) and a name under rig.invalid (per-namespace hosts files); three etcd members, two
 * Postgres nodes under Patroni (synchronous_mode), three NATS nodes (R3 streams), two application hosts each running
 * ingest, management, delivery and usage as separate processes (and a webhook receiver on its own loopback), HAProxy in
 * front (HTTP to the apps, and Postgres to whichever node Patroni's REST API calls the primary, as CloudNativePG's -rw
 * Service does), and a client host for the load and the checker.
 *
 * Everything it makes carries the prefix `intk-` (namespaces, links, /etc/netns entries, /tmp/intk-rig-* directories),
 * so `down()` removes exactly what a rig made, whatever state a run left it in.
 *
 *   node test/cluster/rig.js up | down | status
 *
 * Root only (ip netns). Plain Node: it imports nothing of Intake's; the services run from their built dist/.
 */
'use strict';
/* global AbortSignal */
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '../..');
const PREFIX = 'intk-';
const BRIDGE = 'intk-br';
const NET = '198.18.0';
const DOMAIN = 'rig.invalid';
const TMP = '/tmp';
const PG_BIN = '/usr/lib/postgresql/15/bin';
const PG_PASSWORD = 'intk-rig';
const SERVICES = { ingest: 8081, management: 8082, delivery: 8083, usage: 8084 };
const RECEIVER_PORT = 9000;

/** Host name → last octet of its address. */
const HOSTS = {
  etcd1: 11,
  etcd2: 12,
  etcd3: 13,
  pg1: 21,
  pg2: 22,
  nats1: 31,
  nats2: 32,
  nats3: 33,
  app1: 41,
  app2: 42,
  lb: 50,
  client: 60,
};
const ETCD = ['etcd1', 'etcd2', 'etcd3'];
const PG = ['pg1', 'pg2'];
const NATS = ['nats1', 'nats2', 'nats3'];
const APPS = ['app1', 'app2'];
/** A second address of the lb host: delivery's way to Postgres, which a fault removes to cut delivery alone off. */
const DELIVERY_DB = { name: 'pg-delivery', address: `${NET}.51` };

const ns = (host) => `${PREFIX}${host}`;
const fqdn = (host) => `${host}.${DOMAIN}`;
const address = (host) => `${NET}.${HOSTS[host]}`;

const log = (...args) => console.error(`[rig ${new Date().toISOString().slice(11, 23)}]`, ...args);

function sh(cmd, args, options = {}) {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options });
}
function shQuiet(cmd, args) {
  try {
    return sh(cmd, args);
  } catch {
    return '';
  }
}
const inNs = (host, cmd, args) => sh('ip', ['netns', 'exec', ns(host), cmd, ...args]);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Waits until `probe` returns a truthy value (its value), or fails naming `what` after `timeoutMs`. */
async function until(what, probe, timeoutMs = 60_000, intervalMs = 250) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last.message}` : ''}`);
    await sleep(intervalMs);
  }
}

async function httpGet(url, timeoutMs = 1000) {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  const text = await res.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body };
}

// ---------------------------------------------------------------------------------------------------------------
// Teardown: by prefix, so it removes whatever any run (finished, failed or killed) left.

function rigNamespaces() {
  return shQuiet('ip', ['netns', 'list'])
    .split('\n')
    .map((l) => l.split(' ')[0])
    .filter((n) => n.startsWith(PREFIX));
}
function rigLinks() {
  return shQuiet('ip', ['-o', 'link', 'show'])
    .split('\n')
    .map((l) => l.split(': ')[1]?.split('@')[0])
    .filter((n) => n && n.startsWith(PREFIX));
}
function rigDirs() {
  return fs
    .readdirSync(TMP)
    .filter((d) => d.startsWith('intk-rig-'))
    .map((d) => path.join(TMP, d));
}
function rigNetnsConfigs() {
  return fs.existsSync('/etc/netns')
    ? fs
        .readdirSync('/etc/netns')
        .filter((d) => d.startsWith(PREFIX))
        .map((d) => path.join('/etc/netns', d))
    : [];
}
/** Processes whose network namespace is one of the rig's. */
function rigPids() {
  return rigNamespaces().flatMap((n) => shQuiet('ip', ['netns', 'pids', n]).split('\n').filter(Boolean).map(Number));
}
function killPids(pids, signal = 'SIGKILL') {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      /* gone already */
    }
  }
}
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Processes anywhere whose command line names a rig directory (one that escaped its namespace would show here). */
function rigCommandLines() {
  return fs
    .readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid)
    .filter((p) => {
      try {
        return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('/intk-rig-');
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** What is left of any rig: empty when none. */
function leftovers() {
  return {
    namespaces: rigNamespaces(),
    links: rigLinks(),
    netnsConfigs: rigNetnsConfigs(),
    dirs: rigDirs(),
    pids: [...new Set([...rigPids(), ...rigCommandLines()])],
  };
}

async function down() {
  const pids = [...new Set([...rigPids(), ...rigCommandLines()])];
  killPids(pids);
  await until('the rig processes to exit', () => pids.every((p) => !alive(p)), 10_000, 50);
  for (const n of rigNamespaces()) shQuiet('ip', ['netns', 'delete', n]);
  for (const l of rigLinks()) shQuiet('ip', ['link', 'delete', l]);
  for (const d of rigNetnsConfigs()) fs.rmSync(d, { recursive: true, force: true });
  if (fs.existsSync('/etc/netns') && fs.readdirSync('/etc/netns').length === 0) fs.rmdirSync('/etc/netns');
  for (const d of rigDirs()) fs.rmSync(d, { recursive: true, force: true });
  const left = leftovers();
  const any = Object.values(left).some((v) => v.length > 0);
  if (any) throw new Error(`rig teardown left ${JSON.stringify(left)}`);
}

// ---------------------------------------------------------------------------------------------------------------
// The network.

function network() {
  sh('ip', ['link', 'add', BRIDGE, 'type', 'bridge']);
  sh('ip', ['addr', 'add', `${NET}.1/24`, 'dev', BRIDGE]);
  sh('ip', ['link', 'set', BRIDGE, 'up']);
  const hostsFile =
    '127.0.0.1 localhost\n' +
    Object.keys(HOSTS)
      .map((h) => `${address(h)} ${fqdn(h)} ${h}`)
      .join('\n') +
    `\n${DELIVERY_DB.address} ${fqdn(DELIVERY_DB.name)}\n`;
  for (const host of Object.keys(HOSTS)) {
    fs.mkdirSync(`/etc/netns/${ns(host)}`, { recursive: true });
    fs.writeFileSync(`/etc/netns/${ns(host)}/hosts`, hostsFile);
    sh('ip', ['netns', 'add', ns(host)]);
    sh('ip', ['link', 'add', ns(host), 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns(host)]);
    sh('ip', ['link', 'set', ns(host), 'master', BRIDGE, 'up']);
    inNs(host, 'ip', ['addr', 'add', `${address(host)}/24`, 'dev', 'eth0']);
    inNs(host, 'ip', ['link', 'set', 'eth0', 'up']);
    inNs(host, 'ip', ['link', 'set', 'lo', 'up']);
  }
  inNs('lb', 'ip', ['addr', 'add', `${DELIVERY_DB.address}/24`, 'dev', 'eth0']);
}

/** Cuts delivery off from Postgres (its address on the lb host is removed: packets to it are dropped silently). */
function cutDeliveryFromPostgres() {
  inNs('lb', 'ip', ['addr', 'del', `${DELIVERY_DB.address}/24`, 'dev', 'eth0']);
}
function reconnectDeliveryToPostgres() {
  inNs('lb', 'ip', ['addr', 'add', `${DELIVERY_DB.address}/24`, 'dev', 'eth0']);
}

// ---------------------------------------------------------------------------------------------------------------
// Processes: each started in its host's namespace (ip netns exec execs, so the pid is the program's), detached, its
// output to a file of its own under the rig's directory.

function state(dir) {
  return JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8'));
}
function saveState(dir, s) {
  fs.writeFileSync(path.join(dir, 'state.json'), JSON.stringify(s, null, 2));
}

function startIn(dir, host, name, argv, { env = {}, asPostgres = false, cwd = dir } = {}) {
  const out = fs.openSync(path.join(dir, 'logs', `${host}-${name}.log`), 'a');
  const user = asPostgres ? ['setpriv', '--reuid=postgres', '--regid=postgres', '--init-groups', '--'] : [];
  const child = spawn('ip', ['netns', 'exec', ns(host), ...user, ...argv], {
    cwd,
    env: { PATH: process.env.PATH, HOME: asPostgres ? '/var/lib/postgresql' : process.env.HOME, ...env },
    stdio: ['ignore', out, out],
    detached: true,
  });
  child.unref();
  fs.closeSync(out);
  const s = state(dir);
  s.pids[`${host}/${name}`] = child.pid;
  saveState(dir, s);
  return child.pid;
}

function etcd(dir) {
  const cluster = ETCD.map((h) => `${h}=http://${fqdn(h)}:2380`).join(',');
  for (const h of ETCD) {
    startIn(dir, h, 'etcd', [
      'etcd',
      ...['--name', h, '--data-dir', path.join(dir, h, 'etcd')],
      ...['--listen-peer-urls', `http://${address(h)}:2380`],
      ...['--listen-client-urls', `http://${address(h)}:2379,http://127.0.0.1:2379`],
      ...['--advertise-client-urls', `http://${fqdn(h)}:2379`],
      ...['--initial-advertise-peer-urls', `http://${fqdn(h)}:2380`],
      ...['--initial-cluster', cluster, '--initial-cluster-state', 'new', '--initial-cluster-token', 'intk-rig'],
      ...['--heartbeat-interval', '100', '--election-timeout', '1000', '--quota-backend-bytes', String(64 << 20)],
      '--logger=zap',
      '--log-level=warn',
    ]);
  }
}

/**
 * Patroni's timing (the DCS section, shared by both nodes): the leader key lives `ttl` s unless renewed; the HA loop
 * runs every `loop_wait` s; a DCS or Postgres call is retried for `retry_timeout` s before the leader demotes itself.
 * Patroni wants loop_wait + 2 × retry_timeout ≤ ttl. Defaults are 30/10/10.
 */
const PATRONI_TIMING = { ttl: 10, loop_wait: 1, retry_timeout: 4 };

function patroniConfig(dir, h) {
  const home = path.join(dir, h);
  return {
    scope: 'intk',
    name: h,
    log: { level: 'WARNING' },
    restapi: { listen: `0.0.0.0:8008`, connect_address: `${fqdn(h)}:8008` },
    etcd3: { hosts: ETCD.map((e) => `${fqdn(e)}:2379`) },
    bootstrap: {
      dcs: {
        ...PATRONI_TIMING,
        maximum_lag_on_failover: 1048576,
        synchronous_mode: true,
        postgresql: {
          use_pg_rewind: true,
          parameters: {
            max_connections: 60,
            shared_buffers: '16MB',
            wal_log_hints: 'on',
            max_wal_senders: 5,
            max_replication_slots: 5,
            wal_keep_size: '64MB',
          },
        },
      },
      initdb: [{ encoding: 'UTF8' }, { 'auth-local': 'trust' }],
    },
    postgresql: {
      listen: '0.0.0.0:5432',
      connect_address: `${fqdn(h)}:5432`,
      data_dir: path.join(home, 'data'),
      bin_dir: PG_BIN,
      pgpass: path.join(home, 'pgpass'),
      use_unix_socket: true,
      remove_data_directory_on_rewind_failure: true,
      remove_data_directory_on_diverged_timelines: true,
      authentication: {
        superuser: { username: 'postgres', password: PG_PASSWORD },
        replication: { username: 'replicator', password: PG_PASSWORD },
        rewind: { username: 'postgres', password: PG_PASSWORD },
      },
      parameters: {
        unix_socket_directories: home,
        shared_buffers: '16MB',
        work_mem: '2MB',
        maintenance_work_mem: '16MB',
        effective_cache_size: '64MB',
      },
      pg_hba: [
        'local all all trust',
        'host all all 127.0.0.1/32 trust',
        `host replication replicator ${NET}.0/24 md5`,
        `host all all ${NET}.0/24 md5`,
      ],
    },
    tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
  };
}

function startPatroni(dir, h) {
  return startIn(dir, h, 'patroni', ['patroni', path.join(dir, h, 'patroni.yml')], { asPostgres: true });
}

function patroni(dir) {
  for (const h of PG) {
    const home = path.join(dir, h);
    fs.mkdirSync(home, { recursive: true });
    // JSON is YAML.
    fs.writeFileSync(path.join(home, 'patroni.yml'), JSON.stringify(patroniConfig(dir, h), null, 2));
    sh('chown', ['-R', 'postgres:postgres', home]);
    fs.chmodSync(home, 0o700);
  }
}

/** Patroni's view of the cluster (GET /cluster on any node that answers). */
async function patroniCluster() {
  for (const h of PG) {
    try {
      const { status, body } = await httpGet(`http://${address(h)}:8008/cluster`);
      if (status === 200) return body;
    } catch {
      /* next */
    }
  }
  return undefined;
}
/** The leader and the synchronous standby when both are streaming, else undefined. */
async function healthyPair() {
  const c = await patroniCluster();
  const leader = c?.members?.find((m) => m.role === 'leader' && m.state === 'running');
  const sync = c?.members?.find(
    (m) => m.role === 'sync_standby' && ['streaming', 'running'].includes(m.state) && m.lag === 0,
  );
  return leader && sync ? { leader: leader.name, sync: sync.name } : undefined;
}

function natsConfig(dir, h) {
  return [
    `server_name: ${h}`,
    `listen: 0.0.0.0:4222`,
    `http: 0.0.0.0:8222`,
    `jetstream { store_dir: ${JSON.stringify(path.join(dir, h, 'js'))}, max_memory_store: 64MB, max_file_store: 1GB }`,
    `cluster { name: intk, listen: 0.0.0.0:6222, routes: [${NATS.map((n) => `nats://${fqdn(n)}:6222`).join(', ')}] }`,
    '',
  ].join('\n');
}
function startNats(dir, h) {
  return startIn(dir, h, 'nats', ['nats-server', '-c', path.join(dir, h, 'nats.conf')]);
}
function nats(dir) {
  for (const h of NATS) {
    fs.mkdirSync(path.join(dir, h, 'js'), { recursive: true });
    fs.writeFileSync(path.join(dir, h, 'nats.conf'), natsConfig(dir, h));
    startNats(dir, h);
  }
}

function haproxyConfig(dir) {
  const apps = (svc, port) =>
    [
      `backend ${svc}`,
      '  mode http',
      '  balance roundrobin',
      // Liveness, not readiness: requests reach Intake while Postgres fails over, so what Intake answers then is
      // what the client sees (a readiness check would have HAProxy answer for it).
      '  option httpchk GET /livez',
      '  http-check expect status 200',
      '  retries 2',
      '  option redispatch 1',
      '  default-server inter 1s fall 2 rise 1',
      ...APPS.map((a) => `  server ${a} ${fqdn(a)}:${port} check`),
    ].join('\n');
  const pg = (name, port) =>
    [
      `listen ${name}`,
      `  bind 0.0.0.0:${port}`,
      '  mode tcp',
      '  option tcpka',
      '  timeout client 30m',
      '  timeout server 30m',
      // Patroni's REST API answers 200 on /primary only on the node holding the leader key and running as primary.
      '  option httpchk GET /primary',
      '  http-check expect status 200',
      '  default-server inter 1s fall 2 rise 1 on-marked-down shutdown-sessions',
      ...PG.map((h) => `  server ${h} ${fqdn(h)}:5432 check port 8008`),
    ].join('\n');
  return `global
  maxconn 1000
  stats socket ${path.join(dir, 'haproxy.sock')} mode 600 level admin

defaults
  log global
  timeout connect 2s
  timeout client 30s
  timeout server 30s
  timeout check 2s

frontend web
  bind 0.0.0.0:80
  mode http
  acl ingest path_beg /v1/f/
  acl usage path_beg /v1/usage
  use_backend ingest if ingest
  use_backend usage if usage
  default_backend management
  # No application host answering: refused the way Intake refuses, so a client retries.
  http-error status 503 content-type application/problem+json hdr Retry-After 1 string '{"type":"about:blank","title":"Service Unavailable","status":503}'

${Object.entries(SERVICES)
  .filter(([svc]) => svc !== 'delivery')
  .map(([svc, port]) => apps(svc, port))
  .join('\n\n')}

${pg('pg_rw', 5432)}

# Delivery's own way to the primary (the same backends), so a fault can cut delivery alone off from Postgres.
${pg('pg_rw_delivery', 5433)}
`;
}
function startHaproxy(dir) {
  fs.writeFileSync(path.join(dir, 'haproxy.cfg'), haproxyConfig(dir));
  return startIn(dir, 'lb', 'haproxy', ['haproxy', '-W', '-db', '-f', path.join(dir, 'haproxy.cfg')]);
}

const WORKSPACES = ['shared', 'services/ingest', 'services/management', 'services/delivery', 'services/usage'];

/**
 * A copy of the built services (each workspace's top-level files, dist/ and own node_modules) under the rig's directory,
 * with a node_modules of links to the checkout's packages but @intake/* pointing at the copy: the checkout is shared
 * and rebuilt by others while a rig runs, and a service restarted by a fault must run the code the rig migrated with.
 */
function snapshot(dir) {
  const app = path.join(dir, 'app');
  for (const ws of WORKSPACES) {
    const to = path.join(app, ws);
    fs.mkdirSync(to, { recursive: true });
    // Its top-level files (package.json, an entry like shared/register.js), dist/ and its own node_modules.
    for (const entry of fs.readdirSync(path.join(ROOT, ws), { withFileTypes: true }))
      if (entry.isFile()) fs.copyFileSync(path.join(ROOT, ws, entry.name), path.join(to, entry.name));
    for (const sub of ['dist', 'node_modules'])
      if (fs.existsSync(path.join(ROOT, ws, sub)))
        fs.cpSync(path.join(ROOT, ws, sub), path.join(to, sub), { recursive: true, verbatimSymlinks: true });
  }
  const modules = path.join(app, 'node_modules');
  fs.mkdirSync(path.join(modules, '@intake'), { recursive: true });
  for (const entry of fs.readdirSync(path.join(ROOT, 'node_modules')))
    if (entry !== '@intake') fs.symlinkSync(path.join(ROOT, 'node_modules', entry), path.join(modules, entry));
  for (const entry of fs.readdirSync(path.join(ROOT, 'node_modules', '@intake'))) {
    const ws = WORKSPACES.find((w) => w.split('/').pop() === entry);
    fs.symlinkSync(
      ws ? path.join(app, ws) : fs.realpathSync(path.join(ROOT, 'node_modules', '@intake', entry)),
      path.join(modules, '@intake', entry),
    );
  }
  return app;
}

/** Sends one command to HAProxy's admin socket and resolves with its answer. */
function haproxyCommand(dir, command) {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(path.join(dir, 'haproxy.sock'));
    let answer = '';
    socket.on('data', (c) => (answer += c));
    socket.on('error', reject);
    socket.on('end', () => resolve(answer.trim()));
    socket.end(`${command}\n`);
  });
}

/**
 * Takes an application host's service out of HAProxy's rotation (`drain`: no new requests, those in flight finish) or
 * puts it back, as Kubernetes removes a terminating pod from its Service's endpoints. Delivery has no HTTP backend.
 */
async function rotation(dir, host, svc, state) {
  if (svc === 'delivery') return;
  const answer = await haproxyCommand(dir, `set server ${svc}/${host} state ${state}`);
  if (answer) throw new Error(`HAProxy refused ${svc}/${host} ${state}: ${answer}`);
}

/** What every service process gets, beside PORT. */
function serviceEnv(dir, svc) {
  return {
    NODE_ENV: 'development',
    OTEL_SDK_DISABLED: 'true',
    LOG_LEVEL: 'warn',
    PUBLIC_BASE_URL: `http://${fqdn('lb')}`,
    DATABASE_URL:
      svc === 'delivery'
        ? `postgres://postgres:${PG_PASSWORD}@${fqdn(DELIVERY_DB.name)}:5433/intake`
        : `postgres://postgres:${PG_PASSWORD}@${fqdn('lb')}:5432/intake`,
    NATS_URL: NATS.map((n) => `nats://${fqdn(n)}:4222`).join(','),
    NATS_STREAM_REPLICAS: '3',
    REDIS_URL: '',
    PG_POOL_MAX: '3',
    SECRETS_KEY: 'intk-rig-secrets-key-0123456789abcdef',
    FILES_DIR: path.join(dir, 'files'),
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '1s,2s,5s,10s,20s',
    WEBHOOK_TIMEOUT_MS: '5000',
    RATE_LIMIT_POINTS: '100000000',
    SHUTDOWN_DELAY_SECONDS: '2',
    NODE_OPTIONS: '--max-old-space-size=192',
  };
}
function startService(dir, host, svc) {
  return startIn(dir, host, svc, ['node', path.join(dir, 'app', 'services', svc, 'dist', 'main.js')], {
    env: { ...serviceEnv(dir, svc), PORT: String(SERVICES[svc]) },
  });
}
function startReceiver(dir, host) {
  return startIn(dir, host, 'receiver', [
    'node',
    path.join(__dirname, 'receiver.js'),
    String(RECEIVER_PORT),
    path.join(dir, 'logs', `deliveries-${host}.jsonl`),
  ]);
}
async function serviceReady(host, svc) {
  const { status, body } = await httpGet(`http://${address(host)}:${SERVICES[svc]}/readyz`);
  return status === 200 && (body.workers === undefined || body.workers === 'started');
}
function startAppHost(dir, host) {
  startReceiver(dir, host);
  for (const svc of Object.keys(SERVICES)) startService(dir, host, svc);
}
async function appHost(dir, host) {
  startAppHost(dir, host);
  for (const svc of Object.keys(SERVICES)) await until(`${svc} on ${host}`, () => serviceReady(host, svc), 120_000);
}

/** Runs a built Intake command (migrate, admin) on app1 and returns its standard output. */
function intakeCommand(dir, script, args = []) {
  return sh('ip', ['netns', 'exec', ns('app1'), 'node', path.join(dir, 'app', script), ...args], {
    cwd: path.join(dir, 'app'),
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...serviceEnv(dir, 'management'), LOG_LEVEL: 'error' },
    timeout: 180_000,
  });
}

async function postJson(url, body, key) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${url} answered ${res.status}: ${JSON.stringify(json)}`);
  return json;
}

/** An account, a form and its webhook (each app host's receiver on its own loopback, the same URL). */
async function fixtures(dir) {
  const account = JSON.parse(
    intakeCommand(dir, 'services/management/dist/cli/admin.js', [
      ...['accounts', 'create', '--plan', 'team', '--name', 'rig', '--quota', '100000000'],
    ]),
  );
  const lb = `http://${address('lb')}`;
  const key = account.management_key;
  const form = await postJson(`${lb}/v1/forms`, { name: 'rig', slug: 'rig' }, key);
  const webhook = await postJson(
    `${lb}/v1/forms/${form.id}/webhooks`,
    { url: `http://127.0.0.1:${RECEIVER_PORT}/hook` },
    key,
  );
  return { accountId: account.account_id, managementKey: key, formId: form.id, slug: form.slug, webhookId: webhook.id };
}

async function up() {
  if (rigNamespaces().length > 0) throw new Error('a rig is up already: node test/cluster/rig.js down');
  const started = Date.now();
  const dir = fs.mkdtempSync(path.join(TMP, 'intk-rig-'));
  fs.chmodSync(dir, 0o755);
  fs.mkdirSync(path.join(dir, 'logs'));
  fs.mkdirSync(path.join(dir, 'files'));
  saveState(dir, { dir, pids: {} });
  snapshot(dir);
  network();
  log(`network up (${Object.keys(HOSTS).length} hosts on ${BRIDGE}, ${NET}.0/24)`);
  etcd(dir);
  patroni(dir);
  nats(dir);
  await until(
    'etcd quorum',
    async () => (await httpGet(`http://${address('etcd1')}:2379/health`)).body?.health === 'true',
  );
  startPatroni(dir, 'pg1');
  await until(
    'pg1 to lead',
    async () => (await httpGet(`http://${address('pg1')}:8008/primary`)).status === 200,
    90_000,
  );
  startPatroni(dir, 'pg2');
  startHaproxy(dir);
  await until('a synchronous standby', healthyPair, 120_000);
  log('Postgres up: leader and synchronous standby streaming');
  await until('NATS cluster', async () => {
    for (const h of NATS) {
      const { body } = await httpGet(`http://${address(h)}:8222/jsz`);
      if (!body.meta_cluster?.leader) return false;
    }
    return true;
  });
  intakeCommand(dir, 'services/management/dist/cli/migrate.js');
  log('migrated');
  await Promise.all(APPS.map((h) => appHost(dir, h)));
  log('application hosts up');
  const s = state(dir);
  s.fixtures = await fixtures(dir);
  saveState(dir, s);
  log(`rig up in ${((Date.now() - started) / 1000).toFixed(0)} s (${dir})`);
  return state(dir);
}

/** The directory of the rig that is up. */
function current() {
  const dirs = rigDirs();
  if (dirs.length !== 1) throw new Error(`expected one rig directory, found ${dirs.length}`);
  return state(dirs[0]);
}

module.exports = {
  ROOT,
  HOSTS,
  APPS,
  PG,
  NATS,
  ETCD,
  SERVICES,
  RECEIVER_PORT,
  PATRONI_TIMING,
  PG_PASSWORD,
  ns,
  fqdn,
  address,
  sh,
  shQuiet,
  inNs,
  log,
  sleep,
  until,
  httpGet,
  up,
  down,
  current,
  leftovers,
  rigPids,
  killPids,
  alive,
  state,
  saveState,
  startPatroni,
  startNats,
  startService,
  startReceiver,
  serviceReady,
  appHost,
  startAppHost,
  rotation,
  patroniCluster,
  healthyPair,
  cutDeliveryFromPostgres,
  reconnectDeliveryToPostgres,
};

if (require.main === module) {
  const command = process.argv[2];
  const run = {
    up: async () => console.log(JSON.stringify((await up()).fixtures)),
    down,
    status: async () =>
      console.log(JSON.stringify({ leftovers: leftovers(), patroni: await patroniCluster() }, null, 2)),
  }[command];
  if (!run) {
    console.error('usage: node test/cluster/rig.js up|down|status');
    process.exit(2);
  }
  run().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
