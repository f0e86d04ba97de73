import { readdirSync } from 'node:fs';
import path from 'node:path';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { createDb, type Db } from '@intake/shared/base';
import { createHttpServer } from '@intake/shared/http';
import { buildServiceApp } from '@intake/shared/runtime';
import {
  changedParts,
  createTestPlatform,
  digestOf,
  eventually,
  factories,
  rowsOf,
  type TestPlatform,
} from '@intake/shared/testing';
import { createIngestService } from '@intake/ingest';
import { hostileString, pct, show } from './hostile';

/**
 * The property test of ingest's public post over its three body types (urlencoded, JSON,
 * multipart): hostile field names and values, multipart names, filenames and part headers, and
 * the headers ingest reads (Content-Type, Idempotency-Key, Authorization, Origin, Referer). It
 * asserts: never a 5xx; every 4xx is application/problem+json; a refused post stores nothing
 * (no submission, file row, stored file, idempotency key, usage count or event); an accepted one
 * stored only text Postgres and Unicode accept. Bounded: FUZZ_RUNS × 4 runs (default 25 × 4).
 */
const RUNS = Number(process.env['FUZZ_RUNS'] ?? 25) * 4;

/** A string as raw bytes: UTF-8, except that an unpaired surrogate becomes its 3 WTF-8 bytes (not UTF-8). */
function wtf8(value: string): Buffer {
  const out: Buffer[] = [];
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    const next = value.charCodeAt(i + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      out.push(Buffer.from(value.slice(i, i + 2), 'utf8'));
      i++;
    } else if (unit >= 0xd800 && unit <= 0xdfff)
      out.push(Buffer.from([0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]));
    else out.push(Buffer.from(value[i] as string, 'utf8'));
  }
  return Buffer.concat(out);
}

/** `arbitrary` once in `every` draws, else null. */
function sometimes<T>(arbitrary: fc.Arbitrary<T>, every: number): fc.Arbitrary<T | null> {
  return fc.oneof({ weight: every - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary });
}

const name = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('name', 'email', 'message', '_gotcha', 'bot-challenge-response', 'a[]') },
  { weight: 2, arbitrary: hostileString },
);
const value = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom('Ada', 'ada@example.com', '') },
  { weight: 2, arbitrary: hostileString },
);
const fields = fc.array(fc.tuple(name, value), { maxLength: 5 });
/** A latin-1 header value (what an HTTP client can send), hostile where it can be. */
const headerText = fc.constantFrom(
  '',
  'x',
  'ÿ\u0080\u00a0',
  'a'.repeat(300),
  '"; DROP',
  '\t',
  'https://evil.example',
  'null',
);

interface Post {
  kind: string;
  body: Buffer;
  headers: Record<string, string>;
  tried: Record<string, unknown>;
}

const urlencoded: fc.Arbitrary<Post> = fc.tuple(fields, fc.boolean()).map(([f, raw]) => ({
  kind: 'urlencoded',
  body: raw
    ? Buffer.concat(f.flatMap(([n, v], i) => [Buffer.from(i ? '&' : ''), wtf8(n), Buffer.from('='), wtf8(v)]))
    : Buffer.from(f.map(([n, v]) => `${pct(n)}=${pct(v)}`).join('&')),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  tried: { fields: f, raw },
}));

const jsonValue = fc.oneof(
  { weight: 4, arbitrary: value },
  { weight: 1, arbitrary: fc.constantFrom(null, 0, -1e308, true, [], {}) },
  { weight: 1, arbitrary: fc.dictionary(hostileString, hostileString, { maxKeys: 2 }) },
  { weight: 1, arbitrary: fc.array(hostileString, { maxLength: 2 }) },
);
const json: fc.Arbitrary<Post> = fc
  .tuple(
    fc.array(fc.tuple(name, jsonValue), { maxLength: 5 }),
    fc.constantFrom('', '; charset=utf-8', '; charset=latin1'),
  )
  .map(([f, charset]) => {
    const text = `{${f.map(([n, v]) => `${JSON.stringify(n)}:${JSON.stringify(v)}`).join(',')}}`;
    return {
      kind: 'json',
      body: Buffer.from(text, 'utf8'),
      headers: { 'content-type': `application/json${charset}` },
      tried: { json: text, charset },
    };
  });

const part = fc.record({
  name: fc.option(name, { freq: 8 }),
  value,
  filename: fc.option(fc.oneof(fc.constantFrom('cv.pdf', 'a"b.txt', '..\\..\\x', ''), hostileString), { freq: 2 }),
  extended: fc.boolean(),
  contentType: fc.option(fc.oneof(fc.constantFrom('text/plain', 'image/png; x="\u00ff"', 'garbage'), hostileString), {
    freq: 2,
  }),
  extraHeader: sometimes(
    fc.tuple(fc.constantFrom('x-weird', 'content-transfer-encoding', 'content-id'), hostileString),
    3,
  ),
});
const multipart: fc.Arbitrary<Post> = fc.array(part, { maxLength: 4 }).map((parts) => {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition: Buffer[] = [Buffer.from('content-disposition: form-data')];
    if (p.name !== null) disposition.push(Buffer.from('; name="'), wtf8(p.name), Buffer.from('"'));
    if (p.filename !== null)
      disposition.push(
        p.extended
          ? Buffer.from(`; filename*=UTF-8''${pct(p.filename)}`)
          : Buffer.concat([Buffer.from('; filename="'), wtf8(p.filename), Buffer.from('"')]),
      );
    chunks.push(Buffer.from('--bnd\r\n'), ...disposition, Buffer.from('\r\n'));
    if (p.contentType !== null) chunks.push(Buffer.from('content-type: '), wtf8(p.contentType), Buffer.from('\r\n'));
    if (p.extraHeader) chunks.push(Buffer.from(`${p.extraHeader[0]}: `), wtf8(p.extraHeader[1]), Buffer.from('\r\n'));
    chunks.push(Buffer.from('\r\n'), wtf8(p.value), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from('--bnd--\r\n'));
  return {
    kind: 'multipart',
    body: Buffer.concat(chunks),
    headers: { 'content-type': 'multipart/form-data; boundary=bnd' },
    tried: { parts },
  };
});

const post: fc.Arbitrary<Post> = fc
  .tuple(
    fc.oneof(urlencoded, json, multipart),
    sometimes(headerText, 2),
    sometimes(fc.constantFrom('Bearer svc_sub_nope', 'Bearer', 'Basic x', 'Bearer svc_mgmt_ÿ'), 6),
    sometimes(headerText, 4),
    sometimes(headerText, 4),
  )
  .map(([p, idempotencyKey, authorization, origin, referer]) => {
    const headers = { ...p.headers, accept: 'application/json' };
    if (idempotencyKey !== null) Object.assign(headers, { 'idempotency-key': idempotencyKey });
    if (authorization !== null) Object.assign(headers, { authorization });
    if (origin !== null) Object.assign(headers, { origin });
    if (referer !== null) Object.assign(headers, { referer });
    return { ...p, headers, tried: { ...p.tried, idempotencyKey, authorization, origin, referer } };
  });

/** What a post to the form can write: submissions, their files, idempotency keys, usage counts and events. */
function digest(db: Db, form: { id: string; accountId: string }): Promise<Record<string, string>> {
  return digestOf(
    db,
    {
      submissions: rowsOf('submissions', 'form_id = :form'),
      submission_files: rowsOf('submission_files', 'account_id = :account'),
      idempotency_keys: rowsOf('idempotency_keys', 'form_id = :form', 't', 't::text'),
      usage_counters: rowsOf('usage_counters', 'account_id = :account', 't', 't::text'),
      outbox: '(select count(*) from outbox)',
    },
    { form: form.id, account: form.accountId },
  );
}

function filesUnder(dir: string): number {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;
  } catch {
    return 0;
  }
}

describe('ingest’s public post under hostile input, over its three body types', () => {
  let platform: TestPlatform;
  let server: http.Server;
  let probe: Db;
  let url: string;
  let target: { id: string; accountId: string };
  const statuses = new Map<string, number>();
  const samples: string[] = [];

  beforeAll(async () => {
    platform = await createTestPlatform({ RATE_LIMIT_POINTS: 100_000 });
    // Events stay in the outbox (nothing publishes them), so the digest sees what each post wrote.
    const ingest = createIngestService({ publishAfterCommit: false });
    server = createHttpServer(buildServiceApp(ingest, platform).callback(), {
      problemsUrl: platform.config.PROBLEMS_URL,
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    probe = createDb(platform.config.DATABASE_URL, { poolMax: 1 });
    const account = await factories.account(platform.db, { plan: 'pro', quota: 1_000_000 });
    const form = await factories.form(platform.db, account.id);
    target = { id: form.id, accountId: account.id };
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/f/${form.slug}`;
  });

  afterAll(async () => {
    console.log(
      `What the ingest property test tried (${RUNS} posts): ${[...statuses].map(([s, n]) => `${s}×${n}`).join(' ')}` +
        `\n  e.g. ${samples.join('\n  e.g. ')}`,
    );
    await new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
    await probe.destroy();
    await platform.close();
  });

  it(
    'never answers 5xx, answers every 4xx with a problem document, and stores nothing it refuses',
    async () => {
      const filesDir = path.resolve(platform.config.FILES_DIR);
      await fc.assert(
        fc.asyncProperty(post, async (p) => {
          const before = await digest(probe, target);
          const filesBefore = filesUnder(filesDir);
          const res = await fetch(url, { method: 'POST', headers: p.headers, body: new Uint8Array(p.body) });
          const text = await res.text();
          const key = `${p.kind} ${res.status}`;
          statuses.set(key, (statuses.get(key) ?? 0) + 1);
          if (samples.length < 6 && res.status >= 400) samples.push(`${key} ← ${show(p.tried)}`);
          const context = `${show(p.tried)} → ${res.status} ${text.slice(0, 300)}`;
          if (res.status >= 500) throw new Error(`5xx: ${context}`);
          if (res.status >= 400) {
            if (!(res.headers.get('content-type') ?? '').startsWith('application/problem+json'))
              throw new Error(`not a problem document: ${context}`);
            const changed = changedParts(before, await digest(probe, target));
            if (changed.length > 0)
              throw new Error(`a refused post changed the database (${changed.join(', ')}): ${context}`);
            await eventually(() => filesUnder(filesDir) === filesBefore, {
              timeoutMs: 5_000,
              message: `the files of a refused post removed: ${context}`,
            });
          } else if (res.status === 201) {
            const { id } = JSON.parse(text) as { id: string };
            const row = await probe('submissions').where({ id }).first('payload');
            const stored = JSON.stringify(row?.payload ?? {});
            if (
              /\\u0000|\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])|(?<!\\ud[89ab][0-9a-f]{2})\\ud[c-f][0-9a-f]{2}/i.test(stored)
            )
              throw new Error(`stored text that is not storable: ${stored.slice(0, 200)}: ${context}`);
          }
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
    },
    60_000 + RUNS * 500,
  );
});
