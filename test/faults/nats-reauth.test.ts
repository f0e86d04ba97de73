import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { nkeys } from 'nats';
import { eventually, freePort, ownProcess, type OwnServer } from '@intake/shared/testing';
import { faultSuiteWithServer, formWithReceiver, post, startService, tempDir, type ServiceProcess } from './harness';

/**
 * NATS refuses a service's credentials on a reconnect, for a while: the service keeps trying (with backoff), reads its
 * credential files again at each attempt, fails `/livez` once the refusal has lasted NATS_REFUSED_LIVENESS_SECONDS,
 * and consumes and publishes again by itself once NATS takes it back. Before, nats.js gave up after the same refusal
 * twice and closed the connection for good, the files were read once at start, and the pod stayed live and Ready and
 * never consumed again.
 */

/** A nats-server of our own whose configuration file a test rewrites; `restart()` makes it read it again. */
function natsServerWithConf(conf: () => string): { start(): Promise<OwnServer>; write(): void } {
  let file = '';
  let port = 0;
  const write = (): void =>
    writeFileSync(
      file,
      `listen: "127.0.0.1:${port}"\njetstream { store_dir: ${JSON.stringify(path.dirname(file))} }\n${conf()}\n`,
    );
  return {
    async start() {
      port = await freePort();
      const dir = mkdtempSync(path.join(tmpdir(), 'intake-nats-'));
      file = path.join(dir, 'nats.conf');
      write();
      const server = ownProcess({
        port,
        url: `nats://127.0.0.1:${port}`,
        dir,
        command: 'nats-server',
        args: ['-c', file],
      });
      await server.start();
      return server;
    },
    write,
  };
}

/** Rewrites the server's configuration and restarts it on the same port and store (clients reconnect). */
async function restartWith(server: OwnServer, nats: { write(): void }): Promise<void> {
  await server.stop();
  nats.write();
  await server.start();
}

async function livez(service: ServiceProcess): Promise<number> {
  return (await fetch(`${service.url}/livez`)).status;
}

/** Starts ingest and delivery for a form with a webhook to a receiver, and checks one post goes through. */
async function running(suite: ReturnType<typeof faultSuiteWithServer>, env: Record<string, string> = {}) {
  const { target, slug, env: base } = await formWithReceiver(suite.platform);
  const ingest = await startService('ingest', { ...base, ...env }, { ready: true });
  suite.processes.push(ingest);
  const delivery = await startService('delivery', { ...base, ...env }, { ready: true });
  suite.processes.push(delivery);
  const delivered = async (fields: Record<string, string>, message: string): Promise<void> => {
    const answer = await post(ingest.url, slug, fields);
    expect(answer.status).toBe(201);
    await eventually(() => target.submissionIds().has(answer.id!), { timeoutMs: 60_000, message });
  };
  await delivered({ name: 'before' }, 'the webhook of a post before the change');
  return { target, slug, ingest, delivery, delivered };
}

describe('NATS refuses the password on a reconnect, then takes it again', () => {
  let password = 'first pass';
  const nats = natsServerWithConf(
    () => `authorization { users: [ { user: intake, password: ${JSON.stringify(password)} } ] }`,
  );
  const suite = faultSuiteWithServer(
    () => nats.start(),
    (url) => ({ NATS_URL: url, NATS_USER: 'intake', NATS_PASSWORD: 'first pass' }),
  );

  it('keeps retrying, fails /livez while refused, and consumes again by itself once the password is restored', async () => {
    const { target, slug, ingest, delivery, delivered } = await running(suite, { NATS_REFUSED_LIVENESS_SECONDS: '2' });
    try {
      password = 'rotated out of order';
      await restartWith(suite.server, nats);
      // Refused for longer than NATS_REFUSED_LIVENESS_SECONDS: both processes say so on /livez (Kubernetes restarts them).
      await eventually(async () => (await livez(delivery)) === 503 && (await livez(ingest)) === 503, {
        timeoutMs: 30_000,
        message: '/livez 503 while NATS refuses the password',
      });
      // Accepted meanwhile into the outbox (readiness is Postgres's alone).
      const during = await post(ingest.url, slug, { name: 'during' });
      expect(during.status).toBe(201);
      password = 'first pass';
      const restoredAt = Date.now();
      await restartWith(suite.server, nats);
      await delivered({ name: 'after' }, 'the webhook of a post after the password is restored');
      await eventually(() => target.submissionIds().has(during.id!), {
        message: 'the webhook of the post while refused',
      });
      const resumedMs = Date.now() - restoredAt;
      await eventually(async () => (await livez(delivery)) === 200 && (await livez(ingest)) === 200, {
        message: '/livez 200 again',
      });
      console.log(`nats reauth (password): consuming resumed ${resumedMs} ms after the password was restored`);
    } finally {
      await target.close();
    }
  }, 150_000);
});

describe('NATS with an nkey seed file rotated', () => {
  const first = nkeys.createUser();
  const second = nkeys.createUser();
  let allowed = first;
  const seeds = tempDir('intake-nkey-');
  const seedFile = path.join(seeds.dir, 'user.nk');
  writeFileSync(seedFile, new TextDecoder().decode(first.getSeed()));
  const nats = natsServerWithConf(() => `authorization { users: [ { nkey: ${allowed.getPublicKey()} } ] }`);
  const suite = faultSuiteWithServer(
    () => nats.start(),
    (url) => ({ NATS_URL: url, NATS_NKEY_SEED_FILE: seedFile }),
  );
  afterAll(() => seeds.remove());

  it('connects again with the new seed once the file is rewritten', async () => {
    const { target, delivery, delivered } = await running(suite, { NATS_REFUSED_LIVENESS_SECONDS: '1' });
    try {
      // The server takes the new key first (refusing the old one), then the Secret's file is updated.
      allowed = second;
      await restartWith(suite.server, nats);
      await eventually(async () => (await livez(delivery)) === 503, {
        timeoutMs: 30_000,
        message: '/livez 503 while NATS refuses the old key',
      });
      writeFileSync(seedFile, new TextDecoder().decode(second.getSeed()));
      const rotatedAt = Date.now();
      await delivered({ name: 'after rotation' }, 'the webhook of a post after the seed file is rotated');
      console.log(
        `nats reauth (nkey): consuming resumed ${Date.now() - rotatedAt} ms after the seed file was rewritten`,
      );
    } finally {
      await target.close();
    }
  }, 150_000);
});

type KeyPair = ReturnType<typeof nkeys.createUser>;
const base64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

/**
 * A NATS JWT (`ed25519-nkey`) for `subject`, signed by `issuer`: what `nsc` mints, and what nats-server verifies
 * (signature, issuer chain, revocations) when a client presents it.
 */
function natsJwt(issuer: KeyPair, subject: KeyPair, name: string, nats: Record<string, unknown>): string {
  const claims = {
    jti: base64url(randomBytes(16)),
    iat: Math.floor(Date.now() / 1000),
    iss: issuer.getPublicKey(),
    sub: subject.getPublicKey(),
    name,
    nats: { ...nats, version: 2 },
  };
  const text = (o: unknown) => base64url(new TextEncoder().encode(JSON.stringify(o)));
  const signed = `${text({ typ: 'JWT', alg: 'ed25519-nkey' })}.${text(claims)}`;
  return `${signed}.${base64url(issuer.sign(new TextEncoder().encode(signed)))}`;
}

/** A creds file's text (as `nsc generate creds` writes it): the user's JWT and its seed. */
const credsOf = (jwt: string, user: KeyPair) =>
  `-----BEGIN NATS USER JWT-----\n${jwt}\n------END NATS USER JWT------\n\n` +
  `-----BEGIN USER NKEY SEED-----\n${new TextDecoder().decode(user.getSeed())}\n------END USER NKEY SEED------\n`;

describe('NATS in operator mode with a creds file (user JWT) rotated', () => {
  const operator = nkeys.createOperator();
  const system = nkeys.createAccount();
  const account = nkeys.createAccount();
  const [first, second] = [nkeys.createUser(), nkeys.createUser()];
  const unlimited = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 };
  const jetstream = { mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 };
  const userJwt = (user: KeyPair) =>
    natsJwt(account, user, 'intake', { type: 'user', pub: {}, sub: {}, subs: -1, data: -1, payload: -1 });
  // Users whose JWTs issued until then the account refuses (the JWT way to retire a credential).
  let revocations: Record<string, number> = {};
  const nats = natsServerWithConf(() => {
    const accounts = {
      [system.getPublicKey()]: natsJwt(operator, system, 'SYS', { type: 'account', limits: unlimited }),
      [account.getPublicKey()]: natsJwt(operator, account, 'intake', {
        type: 'account',
        limits: { ...unlimited, ...jetstream },
        revocations,
      }),
    };
    return [
      `operator: ${JSON.stringify(natsJwt(operator, operator, 'intake-test', { type: 'operator' }))}`,
      `system_account: ${system.getPublicKey()}`,
      'resolver: MEMORY',
      `resolver_preload: ${JSON.stringify(accounts)}`,
    ].join('\n');
  });
  const files = tempDir('intake-creds-');
  const credsFile = path.join(files.dir, 'user.creds');
  writeFileSync(credsFile, credsOf(userJwt(first), first));
  const suite = faultSuiteWithServer(
    () => nats.start(),
    (url) => ({ NATS_URL: url, NATS_CREDS_FILE: credsFile }),
  );
  afterAll(() => files.remove());

  it('connects again with the new JWT once the creds file is rewritten', async () => {
    const { target, delivery, delivered } = await running(suite, { NATS_REFUSED_LIVENESS_SECONDS: '1' });
    try {
      // The account revokes the first user's JWTs (the server refuses them), then the Secret's file gets a new one.
      revocations = { [first.getPublicKey()]: Math.floor(Date.now() / 1000) };
      await restartWith(suite.server, nats);
      await eventually(async () => (await livez(delivery)) === 503, {
        timeoutMs: 30_000,
        message: '/livez 503 while NATS refuses the revoked JWT',
      });
      writeFileSync(credsFile, credsOf(userJwt(second), second));
      const rotatedAt = Date.now();
      await delivered({ name: 'after rotation' }, 'the webhook of a post after the creds file is rotated');
      console.log(
        `nats reauth (creds): consuming resumed ${Date.now() - rotatedAt} ms after the creds file was rewritten`,
      );
    } finally {
      await target.close();
    }
  }, 150_000);
});
