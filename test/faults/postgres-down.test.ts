import { rmSync } from 'node:fs';
import { createLogger, ensureDatabase } from '@intake/shared/base';
import { migrate } from '@intake/shared/schema';
import { createPlatform, closePlatform, type Platform } from '@intake/shared/runtime';
import { eventually, factories, startPostgres, testConfig, type OwnServer } from '@intake/shared/testing';
import { filesUnder, pool, post, processEnv, startService, stopAll, tally, type ServiceProcess } from './harness';

const MULTIPART = (n: number) =>
  `--b\r\ncontent-disposition: form-data; name="name"\r\n\r\nfile ${n}\r\n` +
  `--b\r\ncontent-disposition: form-data; name="doc"; filename="doc-${n}.txt"\r\ncontent-type: text/plain\r\n\r\n` +
  `${'x'.repeat(4096)}\r\n--b--\r\n`;

/** A multipart post with a file, answered as status, problem type and content type (status 0 if the connection failed). */
const upload = (url: string, slug: string, n: number) =>
  fetch(`${url}/v1/f/${slug}`, {
    method: 'POST',
    headers: { 'content-type': 'multipart/form-data; boundary=b', accept: 'application/json' },
    body: MULTIPART(n),
  })
    .then(async (res) => ({
      status: res.status,
      type: ((await res.json()) as { type?: string }).type,
      contentType: res.headers.get('content-type') ?? '',
    }))
    .catch(() => ({ status: 0, type: undefined, contentType: '' }));

/** A migrated platform on a Postgres of the test's own (so it can be stopped), and the service processes to stop after. */
function usePlatformOnOwnPostgres() {
  const ctx = { postgres: undefined as unknown as OwnServer, platform: undefined as unknown as Platform };
  const processes: ServiceProcess[] = [];
  beforeAll(async () => {
    ctx.postgres = await startPostgres();
    const config = testConfig({ DATABASE_URL: ctx.postgres.url });
    await ensureDatabase(config.DATABASE_URL);
    ctx.platform = await createPlatform(config, {
      service: 'test',
      logger: createLogger({ level: 'silent', service: 'test' }),
    });
    await migrate(ctx.platform.db);
  });
  afterAll(async () => {
    const { platform } = ctx;
    await stopAll(processes);
    for (const stream of [platform.nats.names.eventsStream, platform.nats.names.deliveriesStream])
      await platform.nats.jsm.streams.delete(stream).catch(() => undefined);
    await closePlatform(platform).catch(() => undefined);
    rmSync(platform.config.FILES_DIR, { recursive: true, force: true });
    await ctx.postgres.destroy();
  });
  return { ctx, processes };
}

/** The form's stored submissions, its file rows, and the files on disk. */
async function storedFor(platform: Platform, formId: string) {
  const submissions = await platform.db('submissions').where({ form_id: formId }).select('id', 'file_count');
  const fileRows = await platform
    .db('submission_files')
    .whereIn(
      'submission_id',
      submissions.map((s) => s.id),
    )
    .count({ n: '*' })
    .first();
  const files = filesUnder(platform.config.FILES_DIR);
  return { submissions, fileRows, files };
}

/** Waits until the stream holds at least `accepted` events and none of the form's rows are left in the outbox. */
function eventsPublished(platform: Platform, formId: string, accepted: number) {
  return eventually(
    async () => {
      const { state } = await platform.nats.jsm.streams.info(platform.nats.names.eventsStream);
      const left = await platform.db('outbox').whereRaw("payload->>'form_id' = ?", [formId]).count({ n: '*' }).first();
      return state.messages >= accepted && Number(left?.n) === 0 ? { n: state.messages } : undefined;
    },
    { timeoutMs: 20_000, message: 'every event published' },
  );
}

/** Our own Postgres is stopped under an ingest process: 503 problems, nothing half stored, and it recovers by itself. */
describe('fault: Postgres unreachable', () => {
  const { ctx, processes } = usePlatformOnOwnPostgres();

  it('answers 503 service-unavailable while it is down, stores nothing half, and accepts again once it is back', async () => {
    const { platform, postgres } = ctx;
    const account = await factories.account(platform.db, { plan: 'team' });
    const form = await factories.form(platform.db, account.id);
    const ingest = await startService('ingest', processEnv(platform.config), { ready: true });
    processes.push(ingest);
    const either = (i: number) => (i % 2 ? post(ingest.url, form.slug) : upload(ingest.url, form.slug, i));

    const before = await pool(20, 4, either);
    expect(tally(before.map((a) => a.status))).toEqual({ 201: 20 });

    await postgres.stop();
    const down = await pool(60, 6, either);
    const readyWhileDown = (await fetch(`${ingest.url}/readyz`)).status;

    await postgres.start();
    const started = Date.now();
    await eventually(async () => (await post(ingest.url, form.slug)).status === 201, {
      timeoutMs: 20_000,
      message: 'ingest accepting again without a restart',
    });
    const recoveryMs = Date.now() - started;
    const after = await pool(20, 4, either);

    const { submissions, fileRows, files } = await storedFor(platform, form.id);
    const accepted = [...before, ...after].filter((a) => a.status === 201).length + 1;
    // Every stored submission's event reaches the stream exactly once (the relay removes published rows from the outbox).
    const events = await eventsPublished(platform, form.id, accepted);
    console.log(
      `postgres-down: before ${JSON.stringify(tally(before.map((a) => a.status)))}, while down ` +
        `${JSON.stringify(tally(down.map((a) => a.status)))} (readyz ${readyWhileDown}), back in ` +
        `${recoveryMs} ms, after ${JSON.stringify(tally(after.map((a) => a.status)))}; stored ` +
        `${submissions.length} submissions, ${events?.n} events, ${fileRows?.n} file rows, ` +
        `${files.length} files on disk`,
    );

    expect(tally(down.map((a) => a.status))).toEqual({ 503: 60 });
    expect(
      down.every(
        (a) => a.contentType.startsWith('application/problem+json') && a.type?.endsWith('/service-unavailable'),
      ),
    ).toBe(true);
    expect(readyWhileDown).toBe(503);
    expect(tally(after.map((a) => a.status))).toEqual({ 201: 20 });
    expect(submissions).toHaveLength(accepted);
    expect(Number(events?.n)).toBe(accepted);
    const withFiles = submissions.reduce((sum, s) => sum + Number(s.file_count), 0);
    expect(Number(fileRows?.n)).toBe(withFiles);
    expect(files).toHaveLength(withFiles);
  });
});
