import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { nkeys } from 'nats';
import { eventually, startNatsServer, startupBudgetMs, testCertificates } from '@intake/shared/testing';
import {
  faultSuiteWithServer,
  formWithReceiver,
  pool,
  post,
  processEnv,
  startService,
  tempDir,
  type ServiceName,
} from './harness';

/**
 * NATS with authentication and TLS: the services connect, publish and consume with the credentials given (a user and
 * password, an nkey seed, a client certificate under a private CA), and a wrong one stops a process at start with a
 * message naming the setting. Before, a URL's user and password were ignored (AUTHORIZATION_VIOLATION) and a private
 * CA could not be given, so NATS ran open to every pod.
 */
const ROOT = path.resolve(__dirname, '../..');

/** Posts `n` submissions through separate ingest and delivery processes and waits for each one's webhook. */
async function deliversThrough(suite: ReturnType<typeof faultSuiteWithServer>, n = 10): Promise<number> {
  const { platform, processes } = suite;
  const { target, slug, env } = await formWithReceiver(platform);
  try {
    const ingest = await startService('ingest', env, { ready: true });
    processes.push(ingest, await startService('delivery', env, { ready: true }));
    const posts = await pool(n, 2, (i) => post(ingest.url, slug, { name: 'secure', n: String(i) }));
    const ids = posts.map((p) => p.id);
    await eventually(() => ids.every((id) => target.submissionIds().has(id!)), { message: 'every webhook' });
    return target.distinctIds().size;
  } finally {
    await target.close();
  }
}

/** Starts a service process that must refuse to run; resolves with its exit code and what it wrote to stderr. */
function refusedStart(
  name: ServiceName,
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'services', name, 'dist', 'main.js')], {
    env: { ...process.env, OTEL_SDK_DISABLED: 'true', ...env, PORT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // A refused start exits at once; a loaded machine may take its start-up budget to get there.
  const timer = setTimeout(() => child.kill('SIGKILL'), startupBudgetMs());
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    }),
  );
}

describe('NATS with a user and password', () => {
  const suite = faultSuiteWithServer(
    () => startNatsServer({ conf: 'authorization { users: [ { user: intake, password: "s3cret pass" } ] }' }),
    (url) => ({ NATS_URL: url, NATS_USER: 'intake', NATS_PASSWORD: 's3cret pass' }),
  );

  it('connects, publishes and consumes with them, and a wrong password stops a service naming the setting', async () => {
    const delivered = await deliversThrough(suite);
    const wrong = await refusedStart('delivery', processEnv(suite.platform.config, { NATS_PASSWORD: 'guess' }));
    console.log(`nats users: ${delivered} webhooks through ingest and delivery; a wrong password: exit ${wrong.code}`);
    expect(delivered).toBe(10);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/NATS refused this process's credentials .*NATS_USER and NATS_PASSWORD/);
  });
});

describe('NATS with an nkey', () => {
  const user = nkeys.createUser();
  const seeds = tempDir('intake-nkey-');
  const seedFile = path.join(seeds.dir, 'user.nk');
  writeFileSync(seedFile, new TextDecoder().decode(user.getSeed()));
  const suite = faultSuiteWithServer(
    () => startNatsServer({ conf: `authorization { users: [ { nkey: ${user.getPublicKey()} } ] }` }),
    (url) => ({ NATS_URL: url, NATS_NKEY_SEED_FILE: seedFile }),
  );
  afterAll(() => seeds.remove());

  it('connects with the seed file and delivers', async () => {
    expect(await deliversThrough(suite, 5)).toBe(5);
  });
});

describe('NATS over TLS with a private CA and client certificates', () => {
  const certs = tempDir('intake-certs-');
  let files: Awaited<ReturnType<typeof testCertificates>>;
  const suite = faultSuiteWithServer(
    async () => {
      files = await testCertificates(certs.dir);
      return startNatsServer({
        conf: `tls { cert_file: "${files.server.cert}", key_file: "${files.server.key}", ca_file: "${files.ca}", verify: true }`,
      });
    },
    (url) => ({
      NATS_URL: url,
      NATS_TLS_CA_FILE: files.ca,
      NATS_TLS_CERT_FILE: files.client.cert,
      NATS_TLS_KEY_FILE: files.client.key,
    }),
  );
  afterAll(() => certs.remove());

  it('connects verifying the server against the CA, with its own certificate, and delivers; without the CA it stops', async () => {
    const delivered = await deliversThrough(suite, 5);
    const { NATS_TLS_CA_FILE: _ca, ...withoutCa } = processEnv(suite.platform.config);
    const untrusting = await refusedStart('ingest', withoutCa);
    console.log(`nats tls: ${delivered} webhooks; without NATS_TLS_CA_FILE: exit ${untrusting.code}`);
    expect(delivered).toBe(5);
    expect(untrusting.code).toBe(1);
    expect(untrusting.stderr).toMatch(/TLS handshake with NATS failed .*NATS_TLS_CA_FILE/);
  });
});
