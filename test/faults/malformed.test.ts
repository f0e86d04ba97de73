import net from 'node:net';
import { factories } from '@intake/shared/testing';
import { filesUnder, pool, processEnv, startService, tally, faultSuite } from './harness';

const TOTAL = 1000;

/**
 * One malformed request: raw bytes sent over a socket, so nothing is tidied up by a client library;
 * `halfClose` shuts the client's sending side right after (FIN), as a client that is done would.
 */
type Kind = { name: string; request: (path: string, n: number) => Buffer; halfClose?: boolean };

const http1 = (
  path: string,
  headers: Record<string, string>,
  body: Buffer | string = '',
  options: { method?: string; length?: boolean } = {},
) => {
  const data = Buffer.isBuffer(body) ? body : Buffer.from(body);
  const lines = [
    `${options.method ?? 'POST'} ${path} HTTP/1.1`,
    'host: 127.0.0.1',
    'connection: close',
    'accept: application/json',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  if (options.length !== false) lines.push(`content-length: ${data.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), data]);
};
const json = (path: string, body: Buffer | string, extra: Record<string, string> = {}) =>
  http1(path, { 'content-type': 'application/json', ...extra }, body);
const form = (path: string, body: Buffer | string, extra: Record<string, string> = {}) =>
  http1(path, { 'content-type': 'application/x-www-form-urlencoded', ...extra }, body);
const multipart = (path: string, body: string, boundary = 'b') =>
  http1(path, { 'content-type': `multipart/form-data; boundary=${boundary}` }, body);
const part = (name: string, value: string, filename?: string) =>
  `--b\r\ncontent-disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n\r\n${value}\r\n`;

// Names such as __proto__ and constructor are not malformed: they are stored as data (test/field-names.test.ts).
const KINDS: Kind[] = [
  { name: 'json cut', request: (p, n) => json(p, `{"name":"Ada","n":${n}`) },
  { name: 'json garbage', request: (p) => json(p, `{name: 'Ada',}`) },
  { name: 'json array', request: (p, n) => json(p, `[${n},"a"]`) },
  { name: 'json number', request: (p, n) => json(p, String(n)) },
  { name: 'json string', request: (p) => json(p, '"hello"') },
  { name: 'json null', request: (p) => json(p, 'null') },
  { name: 'json empty', request: (p) => json(p, '') },
  { name: 'json too deep', request: (p) => json(p, `${'{"a":'.repeat(40)}1${'}'.repeat(40)}`) },
  {
    name: 'json invalid utf-8',
    request: (p) =>
      json(p, Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28, 0xff, 0xfe]), Buffer.from('"}')])),
  },
  {
    name: 'json utf-16 charset',
    request: (p) =>
      json(p, Buffer.from('{"name":"Ada"}', 'utf16le'), { 'content-type': 'application/json; charset=utf-16le' }),
  },
  {
    name: 'json latin-1 charset',
    request: (p) => json(p, '{"name":"Ada"}', { 'content-type': 'application/json; charset=iso-8859-1' }),
  },
  { name: 'json gzip claimed', request: (p) => json(p, 'not gzip at all', { 'content-encoding': 'gzip' }) },
  { name: 'json overlong name', request: (p) => json(p, JSON.stringify({ ['n'.repeat(300)]: 'x' })) },
  { name: 'json too large', request: (p) => json(p, JSON.stringify({ big: 'x'.repeat(1_100_000) })) },
  {
    name: 'urlencoded invalid utf-8',
    request: (p) => form(p, Buffer.concat([Buffer.from('name='), Buffer.from([0xff, 0xfe, 0xc0])])),
  },
  {
    name: 'urlencoded too many fields',
    request: (p) => form(p, Array.from({ length: 1100 }, (_, i) => `f${i}=1`).join('&')),
  },
  {
    name: 'multipart cut',
    request: (p, n) =>
      multipart(
        p,
        `${part('name', `Ada ${n}`)}--b\r\ncontent-disposition: form-data; name="f"; filename="a.txt"\r\n\r\nhalf a fi`,
      ),
  },
  {
    name: 'multipart no boundary',
    request: (p) => http1(p, { 'content-type': 'multipart/form-data' }, part('name', 'Ada')),
  },
  { name: 'multipart wrong boundary', request: (p) => multipart(p, `${part('name', 'Ada')}--b--\r\n`, 'other') },
  { name: 'multipart garbage', request: (p) => multipart(p, 'this is not multipart at all') },
  { name: 'multipart header cut', request: (p) => multipart(p, '--b\r\ncontent-disposition: form-da') },
  { name: 'unsupported type', request: (p) => http1(p, { 'content-type': 'text/xml' }, '<name>Ada</name>') },
  { name: 'no content type', request: (p) => http1(p, {}, 'name=Ada') },
  {
    name: 'bad content length',
    request: (p) =>
      http1(p, { 'content-type': 'application/json', 'content-length': 'twelve' }, '{"a":"b"}', { length: false }),
  },
  {
    name: 'bad chunked',
    request: (p) =>
      http1(p, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, 'zz\r\n{"a":1}\r\n0\r\n\r\n', {
        length: false,
      }),
  },
  {
    name: 'chunked cut',
    request: (p) =>
      http1(p, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, '5\r\n{"a":\r\n0\r\n\r\n', {
        length: false,
      }),
  },
  { name: 'huge header', request: (p) => json(p, '{"a":"b"}', { 'x-filler': 'y'.repeat(20_000) }) },
  {
    name: 'many headers',
    request: (p) => json(p, '{"a":"b"}', Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`x-h${i}`, 'v']))),
  },
  { name: 'bad idempotency key', request: (p) => json(p, '{"a":"b"}', { 'idempotency-key': 'k'.repeat(300) }) },
  { name: 'bad bearer key', request: (p) => json(p, '{"a":"b"}', { authorization: 'Bearer svc_sub_not-a-real-key' }) },
  {
    name: 'header injection',
    request: (p) => Buffer.from(`POST ${p} HTTP/1.1\r\nhost: x\r\nx-bad: a\rb\r\ncontent-length: 0\r\n\r\n`),
  },
  { name: 'not http', request: () => Buffer.from('\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03hello tls\r\n\r\n') },
  { name: 'odd path encoding', request: (p) => json(`${p}%00%ff/..%2f`, '{"a":"b"}') },
  {
    name: 'wrong method',
    request: (p) => http1(p, { 'content-type': 'application/json' }, '{"a":"b"}', { method: 'PUT' }),
  },
  // Text Postgres cannot store or that is not Unicode, in every place a post carries text.
  { name: 'json NUL value', request: (p) => json(p, '{"name":"Ada\\u0000Lovelace"}') },
  { name: 'json NUL name', request: (p) => json(p, '{"na\\u0000me":"Ada"}') },
  { name: 'json lone surrogate value', request: (p) => json(p, '{"name":"Ada \\ud800"}') },
  { name: 'json lone surrogate name', request: (p) => json(p, '{"\\udc00name":"Ada"}') },
  { name: 'json NUL nested', request: (p) => json(p, '{"tags":["a","\\u0000"]}') },
  { name: 'urlencoded NUL value', request: (p) => form(p, 'name=Ada%00Lovelace') },
  { name: 'urlencoded NUL name', request: (p) => form(p, 'na%00me=Ada') },
  { name: 'urlencoded surrogate bytes', request: (p) => form(p, 'name=%ED%A0%80') },
  { name: 'multipart NUL value', request: (p) => multipart(p, `${part('name', 'Ada\u0000')}--b--\r\n`) },
  { name: 'multipart NUL name', request: (p) => multipart(p, `${part('na\u0000me', 'Ada')}--b--\r\n`) },
  {
    name: 'multipart invalid utf-8 filename',
    request: (p) =>
      http1(
        p,
        { 'content-type': 'multipart/form-data; boundary=b' },
        Buffer.concat([
          Buffer.from(`${part('name', 'Ada')}--b\r\ncontent-disposition: form-data; name="cv"; filename="`),
          Buffer.from([0xed, 0xa0, 0x80, 0xff]),
          Buffer.from('"\r\ncontent-type: text/plain\r\n\r\nhello\r\n--b--\r\n'),
        ]),
      ),
  },
  {
    name: 'multipart surrogate filename*',
    request: (p) =>
      multipart(
        p,
        `${part('name', 'Ada')}--b\r\ncontent-disposition: form-data; name="cv"; filename*=UTF-8''%ED%A0%80.txt\r\n\r\nhello\r\n--b--\r\n`,
      ),
  },
  {
    name: 'multipart NUL part header',
    request: (p) =>
      multipart(
        p,
        `${part('name', 'Ada')}--b\r\ncontent-disposition: form-data; name="cv"; filename="a.txt"\r\n` +
          `content-type: text/pl\u0000ain\r\n\r\nhello\r\n--b--\r\n`,
      ),
  },
  // HTTP-level classes: what Node's parser or the router refuse, answered as problem documents.
  { name: 'short body half-closed', request: (p) => json(p, '{"name":"Ada"}').subarray(0, -5), halfClose: true },
  { name: 'trace method', request: (p) => http1(p, {}, '', { method: 'TRACE' }) },
  { name: 'control character header', request: (p) => json(p, '{"a":"b"}', { 'x-note': 'a\u0001b' }) },
  { name: 'malformed slug', request: (p) => json(`${p.replace(/[^/]+$/, '')}NOT_A%00slug`, '{"name":"Ada"}') },
];

/** Sends raw bytes and reads the status line of the answer (0 when the socket closed without one). */
function send(port: number, bytes: Buffer, halfClose = false): Promise<number> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let head = '';
    socket.setTimeout(10_000, () => socket.destroy());
    socket.on('data', (d: Buffer) => {
      head += d.toString('latin1');
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head);
      if (status) {
        socket.destroy();
        resolve(Number(status[1]));
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(0));
    if (halfClose) socket.end(bytes);
    else socket.write(bytes);
  });
}

describe('fault: a thousand malformed requests', () => {
  const suite = faultSuite();
  const { processes } = suite;

  it('answers every one with a 4xx, never a 5xx, and stores nothing', async () => {
    const { platform } = suite;
    const account = await factories.account(platform.db, { plan: 'team' });
    const target = await factories.form(platform.db, account.id);
    const ingest = await startService('ingest', processEnv(platform.config), { ready: true });
    processes.push(ingest);
    const port = Number(new URL(ingest.url).port);
    const path = `/v1/f/${target.slug}`;

    const results = await pool(TOTAL, 16, async (i) => {
      const kind = KINDS[i % KINDS.length]!;
      return { kind: kind.name, status: await send(port, kind.request(path, i), kind.halfClose) };
    });
    const byKind: Record<string, Record<string, number>> = {};
    for (const r of results) (byKind[r.kind] ??= {})[r.status] = (byKind[r.kind]![r.status] ?? 0) + 1;
    const stored = await platform.db('submissions').where({ form_id: target.id }).count({ n: '*' }).first();
    const events = await platform
      .db('outbox')
      .whereRaw("payload->>'form_id' = ?", [target.id])
      .count({ n: '*' })
      .first();
    const files = filesUnder(platform.config.FILES_DIR);
    console.log(
      `malformed: ${TOTAL} requests of ${KINDS.length} kinds ` +
        `${JSON.stringify(tally(results.map((r) => r.status)))}; stored ${stored?.n} submissions, ` +
        `${events?.n} events, ${files.length} files`,
    );

    const wrong = results.filter((r) => r.status < 400 || r.status >= 500);
    expect(wrong.map((r) => `${r.kind}: ${r.status}`)).toEqual([]);
    expect(Object.keys(byKind)).toHaveLength(KINDS.length);
    expect(Number(stored?.n)).toBe(0);
    expect(Number(events?.n)).toBe(0);
    expect(files).toEqual([]);
    // Still healthy after all that.
    expect((await fetch(`${ingest.url}/readyz`)).status).toBe(200);
  });
});
