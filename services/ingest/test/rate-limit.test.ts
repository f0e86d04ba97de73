import { randomBytes } from 'node:crypto';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { useTestPlatform } from '@intake/shared/testing';
import { clientKey } from '@intake/shared/http';
import { createRateLimiter, takeTogether } from '../src/judge/gate';

/** The rate limit's shared calls (`takeTogether`) against Redis: one call per key, answers as if sent one by one. */
describe('takeTogether', () => {
  const t = useTestPlatform();
  const limiter = () =>
    new RateLimiterRedis({
      storeClient: t.redis,
      keyPrefix: `rl-test-${randomBytes(4).toString('hex')}`,
      points: 3,
      duration: 60,
    });

  it('takes the points of each key in one call and answers each post by its place', async () => {
    const real = limiter();
    const consume = jest.spyOn(real, 'consume');
    const answers = await takeTogether(real, ['a', 'b', 'a', 'a', 'a', 'b']);
    expect(consume.mock.calls.map(([key, n]) => [key, n]).sort()).toEqual([
      ['a', 4],
      ['b', 2],
    ]);
    // a: places 1, 2, 3 pass, the fourth is refused; b: both pass.
    expect(answers.map((a) => (a === undefined ? 'ok' : typeof a === 'number' ? 'refused' : 'failed'))).toEqual([
      'ok',
      'ok',
      'ok',
      'ok',
      'refused',
      'ok',
    ]);
    expect(answers[4]).toBeGreaterThan(0);
    expect(answers[4]).toBeLessThanOrEqual(60_000);
    // The next post of b is its third (allowed), the next of a its sixth (refused): the count went on.
    expect(await takeTogether(real, ['b', 'a'])).toEqual([undefined, expect.any(Number)]);
  });

  it('fails only the posts of a key whose call fails', async () => {
    const real = limiter();
    const failure = new Error('this key’s call failed');
    const flaky = {
      points: real.points,
      consume: (key: string, n: number) => (key === 'bad' ? Promise.reject(failure) : real.consume(key, n)),
    };
    const answers = await takeTogether(flaky, ['good', 'bad', 'good', 'bad']);
    expect(answers).toEqual([undefined, { failed: failure }, undefined, { failed: failure }]);
  });
});

/** What one event-loop turn's posts cost the Redis connection. */
describe('createRateLimiter', () => {
  const t = useTestPlatform();

  it('sends the posts of one turn to Redis in that turn, in one write', async () => {
    const limiter = createRateLimiter(t);
    const form = `form_${randomBytes(4).toString('hex')}`;
    await limiter.consume(form, '192.0.2.1', 60, new Date()); // connected, and Redis has the limiter's script
    const socket = t.redis!.stream;
    const write = jest.spyOn(socket, 'write');
    const writev = jest.spyOn(socket, '_writev');
    const posts = ['192.0.2.1', '192.0.2.2', '192.0.2.3'].map((ip) => limiter.consume(form, ip, 60, new Date()));
    // Runs right after the limiter's own setImmediate, in the same turn: its commands must be out by then.
    const handedOver = await new Promise<number>((resolve) => setImmediate(() => resolve(write.mock.calls.length)));
    await Promise.all(posts);
    expect(handedOver).toBe(3);
    expect(writev).toHaveBeenCalledTimes(1);
    expect(writev.mock.calls[0]?.[0]).toHaveLength(3);
  });
});

/** Who a post is counted against. */
describe('clientKey', () => {
  it.each([
    ['192.0.2.1', '192.0.2.1'],
    ['::ffff:192.0.2.1', '192.0.2.1'],
    ['2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:db8:1:2::ffff:1.2.3.4', '2001:db8:1:2::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
  ])('%s is counted as %s', (ip, key) => {
    expect(clientKey(ip)).toBe(key);
  });
});

/** The limit over IPv6: the addresses of one /64 share one budget, another /64 has its own. */
describe('createRateLimiter over IPv6', () => {
  const t = useTestPlatform();

  it('refuses a client rotating addresses inside its /64 once the /64’s budget is spent', async () => {
    const limiter = createRateLimiter({ ...t, config: { ...t.config, RATE_LIMIT_POINTS: 3 } });
    const form = `form_${randomBytes(4).toString('hex')}`;
    for (const host of ['1', '2', 'a:b:c']) await limiter.consume(form, `2001:db8:5:6::${host}`, 3, new Date());
    await expect(limiter.consume(form, '2001:db8:5:6:ffff::9', 3, new Date())).rejects.toMatchObject({
      slug: 'rate-limited',
    });
    await expect(limiter.consume(form, '2001:db8:5:7::1', 3, new Date())).resolves.toBeUndefined();
  });
});
