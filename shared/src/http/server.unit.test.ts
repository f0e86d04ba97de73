import type http from 'node:http';
import net from 'node:net';
import Router from '@koa/router';
import { createHttpServer, type ServerLimits } from './server';
import { baseApp } from './app';
import { createLogger } from '../base/logger';
import { listen } from '../testing/support';

const PROBLEMS_URL = 'https://problems.test';

/** Short limits so that each case takes well under a second or two. */
const LIMITS: Partial<ServerLimits> = {
  headersTimeoutMs: 600,
  minBodyBytesPerSecond: 2_000,
  bodyWindowMs: 400,
  checkIntervalMs: 50,
};

/** Reads the whole body (after `delayMs`), answers with its size. */
function reader(delayMs = 0): http.RequestListener {
  return (req, res) => {
    setTimeout(() => {
      let size = 0;
      req.on('data', (c: Buffer) => (size += c.length));
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ size }));
      });
      req.on('error', () => undefined);
    }, delayMs);
  };
}

const start = (handler: http.RequestListener) =>
  listen(createHttpServer(handler, { problemsUrl: PROBLEMS_URL, limits: LIMITS }));

/** Runs `test` against a server with `handler` on a free port, and closes it afterwards whatever happens. */
async function withServer(handler: http.RequestListener, test: (port: number) => Promise<void>) {
  const srv = await start(handler);
  try {
    await test(srv.port);
  } finally {
    await srv.close();
  }
}

/** A raw connection: write what you like, read everything until the server closes (or `untilMs`). */
function raw(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (c) => (received += c.toString('latin1')));
  const closed = new Promise<string>((resolve) => {
    socket.on('close', () => resolve(received));
    socket.on('error', () => undefined);
  });
  return {
    socket,
    write: (data: string | Buffer) => new Promise<void>((resolve) => socket.write(data, () => resolve())),
    closed,
    received: () => received,
  };
}

function parse(response: string): { status: number; headers: string; body: string } {
  const [head = '', ...rest] = response.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body: rest.join('\r\n\r\n') };
}

/** Writes `text` a character every `everyMs` until `until()` or the socket closes; how many characters it wrote. */
async function trickle(c: ReturnType<typeof raw>, text: string, everyMs: number, until: () => boolean) {
  let written = 0;
  for (const ch of text) {
    if (until() || c.socket.destroyed) return written;
    await c.write(ch);
    written += 1;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return written;
}

describe('the HTTP server of every service: slow and half-closing clients', () => {
  it('answers 408 problem+json to a client sending its headers a byte at a time, within the headers timeout', async () => {
    await withServer(reader(), async (port) => {
      const c = raw(port);
      const headers = 'GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ' + 'a'.repeat(200);
      const sent = trickle(c, headers, 100, () => c.received() !== '');
      const res = parse(await c.closed);
      expect(res.status).toBe(408);
      expect(res.headers).toContain('content-type: application/problem+json');
      expect(JSON.parse(res.body)).toMatchObject({ type: `${PROBLEMS_URL}/request-timeout`, status: 408 });
      // Cut off while the headers were still coming (they would have taken 23 s), not after them.
      expect(await sent).toBeLessThan(headers.length);
    });
  });

  it('answers 408 to a request whose body never comes, after one window, not minutes', async () => {
    await withServer(reader(), async (port) => {
      const c = raw(port);
      await c.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nab');
      // Answered before a client giving up after 10 s would have (Node's own default waits five minutes).
      let gaveUp: NodeJS.Timeout | undefined;
      const res = await Promise.race([
        c.closed.then(parse),
        new Promise<'gave up'>((resolve) => (gaveUp = setTimeout(() => resolve('gave up'), 10_000))),
      ]).finally(() => clearTimeout(gaveUp));
      expect(res).not.toBe('gave up');
      if (res === 'gave up') return;
      expect(res.status).toBe(408);
      expect(JSON.parse(res.body)).toMatchObject({ type: `${PROBLEMS_URL}/request-timeout` });
    });
  });

  it('lets a slow upload above the minimum rate finish, however long it takes in total', async () => {
    await withServer(reader(), async (port) => {
      const c = raw(port);
      const total = 6_000; // 1.5 s at 4,000 B/s: several windows, each above the 2,000 B/s minimum
      await c.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${total}\r\nConnection: close\r\n\r\n`);
      for (let sent = 0; sent < total; sent += 200) {
        await c.write('x'.repeat(200));
        await new Promise((r) => setTimeout(r, 50));
      }
      const res = parse(await c.closed);
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ size: total });
    });
  });

  it('does not blame the client while the application is not reading', async () => {
    await withServer(reader(1_200), async (port) => {
      const body = Buffer.alloc(512 * 1024, 'y');
      const res = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ size: body.length });
    });
  });

  it('answers a client that half-closes after sending its whole request', async () => {
    await withServer(reader(100), async (port) => {
      const c = raw(port);
      await c.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello');
      c.socket.end();
      const res = parse(await c.closed);
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ size: 5 });
    });
  });
});

describe('the HTTP server of every service: malformed requests and methods', () => {
  it('answers 400 bad-body to a body shorter than its Content-Length', async () => {
    await withServer(reader(), async (port) => {
      const c = raw(port);
      await c.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\nshort');
      c.socket.end();
      const res = parse(await c.closed);
      expect(res.status).toBe(400);
      expect(res.headers).toContain('content-type: application/problem+json');
      expect(JSON.parse(res.body)).toMatchObject({ type: `${PROBLEMS_URL}/bad-body` });
    });
  });

  it.each([
    ['a malformed request line', 'GARBAGE\r\n\r\n', 400, 'bad-request'],
    ['a control character in a header', 'GET / HTTP/1.1\r\nHost: x\r\nX-A: a\u0001b\r\n\r\n', 400, 'bad-request'],
    ['an unknown method', 'FROB / HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'bad-request'],
    [
      'a head over 16 KiB',
      `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`,
      431,
      'headers-too-large',
    ],
  ])('answers %s with a problem document', async (_name, request, status, slug) => {
    await withServer(reader(), async (port) => {
      const c = raw(port);
      await c.write(request);
      const res = parse(await c.closed);
      expect(res.status).toBe(status);
      expect(res.headers).toContain('content-type: application/problem+json');
      expect(JSON.parse(res.body)).toMatchObject({ type: `${PROBLEMS_URL}/${slug}`, status });
    });
  });

  it('answers a method no route implements (TRACE) with 405 problem+json and Allow', async () => {
    const app = baseApp({
      config: { TRUST_PROXY: false, PROBLEMS_URL } as never,
      logger: createLogger({ level: 'silent', service: 'test' }),
    });
    const router = new Router();
    router.get('/thing', (ctx) => {
      ctx.body = { ok: true };
    });
    app.use(router.routes());
    app.use(router.allowedMethods());
    await withServer(app.callback(), async (port) => {
      const c = raw(port);
      await c.write('TRACE /thing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      const res = parse(await c.closed);
      expect(res.status).toBe(405);
      expect(res.headers).toContain('content-type: application/problem+json');
      expect(res.headers).toMatch(/allow: head, get/);
      expect(JSON.parse(res.body)).toMatchObject({ type: `${PROBLEMS_URL}/method-not-allowed` });
      const other = raw(port);
      await other.write('TRACE /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      const missing = parse(await other.closed);
      expect(missing.status).toBe(404);
      expect(missing.headers).toContain('content-type: application/problem+json');
    });
  });
});
