import { buildServiceApp } from '@intake/shared/runtime';
import { factories, listen } from '@intake/shared/testing';
import { managementService } from '@intake/management';
import { faultSuite, post, processEnv, startService, type PostAnswer } from './harness';

/** Far longer than any wait below: only the announcement can explain a change seen in time. */
const CACHE_MS = 60_000;
/** How soon every ingest process must act on a change (it is usually a few milliseconds). */
const AT_ONCE_MS = 3_000;

describe('form changes take effect at once in every ingest process', () => {
  const suite = faultSuite();

  it('two ingest processes with a one-minute form cache follow status, honeypot, origins, slug and deletion at once', async () => {
    const { platform, processes } = suite;
    const env = processEnv(platform.config, { FORM_CACHE_MS: String(CACHE_MS) });
    const ingest = [
      await startService('ingest', env, { ready: true }),
      await startService('ingest', env, { ready: true }),
    ];
    processes.push(...ingest);
    const management = await listen(buildServiceApp(managementService, platform).callback());
    try {
      const account = await factories.account(platform.db, { plan: 'pro', quota: 100_000 });
      const call = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(`${management.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${account.managementKey}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json().catch(() => undefined)) as Record<string, string> };
      };
      const form = (await call('POST', '/v1/forms', { name: 'Followed' })).body as { id: string; slug: string };

      /** Posts to both processes until both answer as `expected` says, within AT_ONCE_MS. */
      const bothSoon = async (
        what: string,
        expected: (a: PostAnswer) => boolean,
        fields?: Record<string, string>,
        headers?: Record<string, string>,
        slug = form.slug,
      ) => {
        const started = Date.now();
        for (const p of ingest) {
          for (;;) {
            const answer = await post(p.url, slug, fields, headers);
            if (expected(answer)) break;
            if (Date.now() - started > AT_ONCE_MS)
              throw new Error(`${what}: ${p.url} still answers ${answer.status} ${answer.type ?? ''}`);
            await new Promise((r) => setTimeout(r, 20));
          }
        }
      };
      const slugOf = (a: PostAnswer) => a.type?.split('/').pop();

      // Both processes have the form cached (live).
      await bothSoon('warm', (a) => a.status === 201);

      expect((await call('PATCH', `/v1/forms/${form.id}`, { status: 'paused' })).status).toBe(200);
      await bothSoon('paused', (a) => a.status === 403 && slugOf(a) === 'form-not-live');

      expect((await call('PATCH', `/v1/forms/${form.id}`, { status: 'live' })).status).toBe(200);
      await bothSoon('live again', (a) => a.status === 201);

      expect((await call('PATCH', `/v1/forms/${form.id}`, { honeypot_field: 'website' })).status).toBe(200);
      await bothSoon('new honeypot', (a) => a.status === 200, { name: 'Bot', website: 'http://spam.example' });

      expect((await call('PATCH', `/v1/forms/${form.id}`, { allowed_origins: ['https://ok.example'] })).status).toBe(
        200,
      );
      await bothSoon('allowed origins', (a) => a.status === 403 && slugOf(a) === 'origin-not-allowed', undefined, {
        origin: 'https://evil.example',
      });

      // A new slug: the old one stops working at once (the copies are dropped by form id).
      const renamed = `followed-${Date.now()}`;
      expect((await call('PATCH', `/v1/forms/${form.id}`, { slug: renamed, allowed_origins: [] })).status).toBe(200);
      await bothSoon('old slug', (a) => a.status === 404 && slugOf(a) === 'form-not-found');
      await bothSoon('new slug', (a) => a.status === 201, undefined, undefined, renamed);

      expect((await call('DELETE', `/v1/forms/${form.id}`)).status).toBe(204);
      await bothSoon(
        'deleted',
        (a) => a.status === 404 && slugOf(a) === 'form-not-found',
        undefined,
        undefined,
        renamed,
      );
    } finally {
      await management.close();
    }
  });
});
