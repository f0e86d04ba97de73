import { randomBytes } from 'node:crypto';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { useTestPlatform } from '@intake/shared/testing';
import { takeTogether } from '../src/rules/rate-limit';

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
