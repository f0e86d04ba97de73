import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import Koa from 'koa';
import { listen } from '@intake/shared/testing';
import type { KoaRouter } from '@intake/shared/http';
import type { Platform } from '@intake/shared/runtime';
import { mountConsole } from '../src/platform/console-page';

/** About 60 KB of script, as the console's bundle is. */
const BIG_JS = Array.from({ length: 1500 }, (_, i) => `export const value${i} = 'item ${i}';\n`).join('');

/** A GET over plain node:http (fetch would decode the body itself): the status, headers and raw bytes. */
function rawGet(url: string, headers: Record<string, string>) {
  return new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

const platform = { config: { PUBLIC_BASE_URL: 'https://intake.example.com' } } as unknown as Platform;

/** Serves the console from `from` as the management app mounts it, with a fallback that answers 404. */
function serve(from: string) {
  const app = new Koa();
  mountConsole(app, undefined as unknown as KoaRouter, platform, from); // it mounts a middleware, no routes
  app.use((ctx) => {
    ctx.status = 404;
    ctx.body = 'fell through';
  });
  return listen(app.callback());
}

/** A directory laid out as `npm run build` lays out the console (assets/ and the given files, by path). */
function consoleDir(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'intake-console-'));
  mkdirSync(path.join(dir, 'assets'));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

/** The console's static serving, over a directory laid out as `npm run build` lays it out. */
describe('console page serving', () => {
  let dir: string;
  let server: Awaited<ReturnType<typeof listen>>;
  let missing: Awaited<ReturnType<typeof listen>>;

  beforeAll(async () => {
    dir = consoleDir({
      'index.html': '<!doctype html><script type="module" src="/console/assets/main-AB.js">',
      'assets/main-AB.js': 'export {};',
      'secret.txt': 'not an asset',
    });
    server = await serve(dir);
    missing = await serve(path.join(dir, 'nowhere'));
  });
  afterAll(async () => {
    await server.close();
    await missing.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the page at /console and every path under it, uncached, with the safety headers', async () => {
    for (const p of ['/console', '/console/forms', '/console/forms/frm_1/submissions?status=spam']) {
      const res = await fetch(`${server.url}${p}`);
      expect([p, res.status, res.headers.get('cache-control')]).toEqual([p, 200, 'no-cache']);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const csp = res.headers.get('content-security-policy');
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("img-src 'self' https://intake.example.com");
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    }
  });

  it('serves hashed assets cached for a year; / redirects to /console', async () => {
    const js = await fetch(`${server.url}/console/assets/main-AB.js`);
    expect([js.status, js.headers.get('cache-control')]).toEqual([200, 'public, max-age=31536000, immutable']);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const root = await fetch(`${server.url}/`, { redirect: 'manual' });
    expect([root.status, root.headers.get('location')]).toEqual([302, '/console']);
  });

  it('never serves anything outside assets/, unknown types, or other methods', async () => {
    for (const p of [
      '/console/assets/..%2fsecret.txt',
      '/console/assets/../secret.txt',
      '/console/assets/%2e%2e%2fsecret.txt',
      '/console/assets/missing-XY.js',
      '/console/assets/.hidden.js',
      '/console/assets/secret.txt',
    ]) {
      const res = await fetch(`${server.url}${p}`);
      const body = await res.text();
      expect({ p, body: body.includes('not an asset') }).toEqual({ p, body: false });
    }
    const post = await fetch(`${server.url}/console`, { method: 'POST' });
    expect(post.status).toBe(404);
  });

  it('answers 503 with a hint when the console is not built', async () => {
    const res = await fetch(`${missing.url}/console`);
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('npm run build');
  });
});

/** Compression of the console's files, by what the client accepts. */
describe('console page compression', () => {
  let dir: string;
  let server: Awaited<ReturnType<typeof listen>>;

  beforeAll(async () => {
    dir = consoleDir({
      'index.html': '<!doctype html>',
      'assets/main-AB.js': 'export {};',
      'assets/app-CD.js': BIG_JS,
    });
    server = await serve(dir);
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['br, gzip, deflate', 'br', zlib.brotliDecompressSync],
    ['gzip', 'gzip', zlib.gunzipSync],
    ['gzip;q=1, br;q=0.5', 'gzip', zlib.gunzipSync],
  ])('serves assets compressed when the client accepts it (Accept-Encoding: %s)', async (accepts, encoding, decode) => {
    for (let i = 0; i < 2; i++) {
      const res = await rawGet(`${server.url}/console/assets/app-CD.js`, { 'accept-encoding': accepts });
      expect(res.headers['content-encoding']).toBe(encoding);
      expect(res.headers['vary']).toMatch(/accept-encoding/i);
      expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(res.body.length).toBeLessThan(BIG_JS.length / 3);
      expect(decode(res.body).toString()).toBe(BIG_JS);
    }
  });

  it('serves assets as they are to a client that accepts no compression, and small ones always', async () => {
    const plain = await rawGet(`${server.url}/console/assets/app-CD.js`, { 'accept-encoding': 'identity' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers['vary']).toMatch(/accept-encoding/i);
    expect(plain.body.toString()).toBe(BIG_JS);
    const small = await rawGet(`${server.url}/console/assets/main-AB.js`, { 'accept-encoding': 'br' });
    expect([small.headers['content-encoding'], small.body.toString()]).toEqual([undefined, 'export {};']);
  });
});
