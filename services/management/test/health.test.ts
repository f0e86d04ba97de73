import { useStarted } from '@intake/shared/testing';
import { api, startManagement } from './helpers';

describe('GET /v1/health, public', () => {
  const ctx = useStarted(() => startManagement());

  it('answers a burst of requests from one check, and names no NATS node', async () => {
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 20 }, () => api(ctx.url)('GET', '/v1/health')));
    const seconds = Math.ceil((Date.now() - started) / 1000);
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([200]));
    // One check a second served them all: as many distinct answers (each with the time it was made) at most.
    expect(new Set(answers.map((a) => JSON.stringify(a.body))).size).toBeLessThanOrEqual(seconds);
    const [first] = answers;
    expect(first?.body).toMatchObject({ status: 'ok', checks: { postgres: 'ok', nats: 'ok', streams: 'ok' } });
    for (const stream of first?.body.streams as Record<string, unknown>[])
      expect(Object.keys(stream).sort()).toEqual(['current', 'quorum', 'replicas', 'stream']);
  });
});
