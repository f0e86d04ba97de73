import { rmSync } from 'node:fs';
import { Writable } from 'node:stream';
import pino from 'pino';
import { eventually, startRedisServer, testConfig, type OwnServer } from '../testing';
import { closePlatform, createPlatform, type Platform } from './platform';

/** A Redis of our own with a password; the process is given another one, as after a rotation it missed. */
describe('a Redis that refuses the credentials in REDIS_URL', () => {
  const PASSWORD = 'REDISPASS_RIGHT_4412';
  const WRONG = 'REDISPASS_STALE_9917';
  const lines: Array<{ level: number; msg: string }> = [];
  let text = '';
  let redis: OwnServer;
  let platform: Platform;

  beforeAll(async () => {
    redis = await startRedisServer({ password: PASSWORD });
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        text += chunk.toString();
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const config = testConfig({ REDIS_URL: redis.url.replace(PASSWORD, WRONG), LOG_LEVEL: 'debug' });
    platform = await createPlatform(config, {
      service: 'test',
      logger: pino({ level: 'debug' }, sink),
      natsInBackground: true,
    });
  });

  afterAll(async () => {
    await closePlatform(platform);
    rmSync(platform.config.FILES_DIR, { recursive: true, force: true });
    await redis.destroy();
  });

  it('says so once at warn, and never writes the password it sent, at any level', async () => {
    await eventually(() => lines.filter((l) => l.msg === 'redis connection error').length >= 3, {
      timeoutMs: 15_000,
      message: 'three refused connections logged at debug',
    });
    const warnings = lines.filter((l) => l.level === 40 && l.msg.startsWith('Redis refuses the credentials'));
    expect(warnings).toHaveLength(1);
    expect(text).toContain('WRONGPASS');
    expect(text).not.toContain(WRONG);
    expect(text).not.toContain(PASSWORD);
  });
});
