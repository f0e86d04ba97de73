import pg from 'pg';
import { connect } from 'nats';
import { Redis } from 'ioredis';
import { startNatsServer, startPostgres, startRedisServer } from './processes';

describe('own servers for fault tests', () => {
  it('starts, stops and restarts Postgres, NATS and Redis on free ports', async () => {
    const [postgres, nats, redis] = await Promise.all([startPostgres(), startNatsServer(), startRedisServer()]);
    try {
      const client = new pg.Client({ connectionString: postgres.url.replace(/\/intake$/, '/postgres') });
      await client.connect();
      expect((await client.query('SELECT 1 AS one')).rows[0].one).toBe(1);
      await client.end();

      const nc = await connect({ servers: nats.url });
      expect((await (await nc.jetstreamManager()).getAccountInfo()).limits).toBeDefined();
      await nc.close();

      await redis.stop();
      await redis.start();
      const r = new Redis(redis.url);
      expect(await r.ping()).toBe('PONG');
      r.disconnect();
    } finally {
      await Promise.all([postgres.destroy(), nats.destroy(), redis.destroy()]);
    }
  });
});
