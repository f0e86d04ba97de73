import { useStarted } from '@intake/shared/testing';
import { api, startManagement } from './helpers';

describe('GET /v1/health, public', () => {
  const ctx = useStarted(() => startManagement());

  it('answers a burst of requests from one check, and names nothing of the install', async () => {
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 20 }, () => api(ctx.url)('GET', '/v1/health')));
    const seconds = Math.ceil((Date.now() - started) / 1000);
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([200]));
    // One check a second served them all: as many distinct answers (each with the time it was made) at most.
    expect(new Set(answers.map((a) => JSON.stringify(a.body))).size).toBeLessThanOrEqual(seconds);
    const [first] = answers;
    expect(first?.body).toMatchObject({ status: 'ok', checks: { postgres: 'ok', nats: 'ok', streams: 'ok' } });
    // The status of each dependency and when it was checked; no stream, replica count or NATS server (the metrics port
    // has each stream's replicas, `nats stream info` its leader).
    expect(Object.keys(first?.body as object).sort()).toEqual(['checks', 'status', 'time']);
    const { nats } = ctx.platform;
    const text = JSON.stringify(first?.body);
    const names = [nats.names.eventsStream, nats.names.deliveriesStream, nats.nc.info?.server_name];
    for (const name of names.filter((n): n is string => Boolean(n)))
      expect({ name, shown: text.includes(name) }).toEqual({ name, shown: false });
  });
});
