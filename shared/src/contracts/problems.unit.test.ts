import Koa from 'koa';
import { problemMiddleware } from '../http/problems';
import { PROBLEMS, problem, toProblem } from './problems';
import { createLogger } from '../base/logger';
import { listen } from '../testing';

describe('problems', () => {
  it('holds every slug of the spec section 7 with its status', () => {
    expect(Object.fromEntries(Object.entries(PROBLEMS).map(([slug, p]) => [slug, p.status]))).toMatchObject({
      'bad-body': 400,
      'quota-exceeded': 402,
      'form-not-live': 403,
      'invalid-key': 403,
      'challenge-failed': 403,
      'form-not-found': 404,
      'file-too-large': 413,
      'uploads-not-allowed': 413,
      'rate-limited': 429,
    });
  });

  it('maps library errors by their codes, never by message text alone', () => {
    expect(toProblem(Object.assign(new Error('x'), { status: 413, type: 'entity.too.large' }))?.slug).toBe(
      'body-too-large',
    );
    expect(toProblem(Object.assign(new Error('x'), { status: 400, type: 'entity.parse.failed' }))?.slug).toBe(
      'bad-body',
    );
    expect(toProblem(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))?.slug).toBe(
      'service-unavailable',
    );
    expect(toProblem(new Error('boom'))).toBeUndefined();
  });

  describe('middleware', () => {
    let server: Awaited<ReturnType<typeof listen>>;
    beforeAll(async () => {
      const app = new Koa();
      app.use(problemMiddleware('https://intake.test/problems', createLogger({ level: 'silent', service: 'test' })));
      app.use(async (ctx) => {
        if (ctx.path === '/quota') throw problem('quota-exceeded', 'Used up', { limit: 100 }, { 'Retry-After': '60' });
        if (ctx.path === '/bug') throw new Error('secret internals');
        if (ctx.path === '/ok') ctx.body = { ok: true };
      });
      server = await listen(app.callback());
    });
    afterAll(() => server.close());

    it('renders a problem document with type, title, status, detail and extras', async () => {
      const res = await fetch(`${server.url}/quota`);
      expect(res.status).toBe(402);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.headers.get('retry-after')).toBe('60');
      expect(await res.json()).toEqual({
        type: 'https://intake.test/problems/quota-exceeded',
        title: PROBLEMS['quota-exceeded'].title,
        status: 402,
        detail: 'Used up',
        limit: 100,
      });
    });

    it('turns unknown errors into a 500 problem with no internals', async () => {
      const res = await fetch(`${server.url}/bug`);
      expect(res.status).toBe(500);
      const body = await res.text();
      expect(JSON.parse(body).type).toBe('https://intake.test/problems/internal-error');
      expect(body).not.toContain('secret internals');
    });

    it('answers unknown paths with a not-found problem', async () => {
      const res = await fetch(`${server.url}/nothing-here`);
      expect(res.status).toBe(404);
      expect(((await res.json()) as { type: string }).type).toBe('https://intake.test/problems/not-found');
    });
  });
});
