import { buildServiceApp } from '@intake/shared/runtime';
import { factories, listen, useStarted, createTestPlatform, eventually } from '@intake/shared/testing';
import { createIngestService } from '@intake/ingest';
import { managementService } from '@intake/management';

/**
 * A project's default reaches the post: ingest reads the form's own columns, into which the project's change was
 * written, and drops its cached copy on the change's notice (its cache holds a form for a minute here, so only the
 * notice can explain a refusal seen sooner).
 */
const ctx = useStarted(async () => {
  const platform = await createTestPlatform({ FORM_CACHE_MS: 60_000 });
  const ingest = await listen(buildServiceApp(createIngestService({ publishAfterCommit: true }), platform).callback());
  const management = await listen(buildServiceApp(managementService, platform).callback());
  return {
    platform,
    ingestUrl: ingest.url,
    managementUrl: management.url,
    async close() {
      await Promise.all([ingest.close(), management.close()]);
      await platform.close();
    },
  };
});

describe('a project’s form defaults at ingest', () => {
  it('a post from a site the client’s allowed origins leave out is refused once the project sets them', async () => {
    const account = await factories.account(ctx.platform.db);
    const call = async (method: string, path: string, body: unknown) => {
      const res = await fetch(`${ctx.managementUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${account.managementKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return (await res.json()) as { id: string; slug: string; allowed_origins: string[]; inherited: string[] };
    };
    const post = (slug: string, origin: string) =>
      fetch(`${ctx.ingestUrl}/v1/f/${slug}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin },
        body: JSON.stringify({ email: 'visitor@example.com' }),
      });
    const client = await call('POST', '/v1/projects', { name: 'Acme Dental' });
    const form = await call('POST', '/v1/forms', { name: 'Contact', project_id: client.id });
    const own = await call('POST', '/v1/forms', {
      name: 'Careers',
      project_id: client.id,
      allowed_origins: ['https://careers.example'],
    });
    // Both cached by ingest, each taking posts from its own sites.
    expect((await post(form.slug, 'https://elsewhere.example')).status).toBe(201);
    expect((await post(own.slug, 'https://careers.example')).status).toBe(201);

    await call('PATCH', `/v1/projects/${client.id}`, { form_defaults: { allowed_origins: ['https://acme.example'] } });
    await eventually(async () => (await post(form.slug, 'https://elsewhere.example')).status === 403, {
      timeoutMs: 5000,
      message: 'the inherited origins refuse the post',
    });
    expect((await post(form.slug, 'https://acme.example')).status).toBe(201);
    // The form that set its own origins keeps them.
    expect((await post(own.slug, 'https://careers.example')).status).toBe(201);
    expect((await post(own.slug, 'https://acme.example')).status).toBe(403);
  });
});
