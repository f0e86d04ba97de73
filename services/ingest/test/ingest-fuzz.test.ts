import fc from 'fast-check';
import { accountWithForm, startIngest, type IngestHarness } from './helpers';

const CONTENT_TYPES = [
  'application/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=b',
  'multipart/form-data',
  'text/plain',
  'application/json; charset=latin1',
  '',
];

describe('POST /v1/f/:slug — arbitrary bodies and headers never give a 5xx', () => {
  let h: IngestHarness;
  let slug: string;
  beforeAll(async () => {
    h = await startIngest({ RATE_LIMIT_POINTS: 100_000 });
    slug = (await accountWithForm(h, { quota: 100_000 })).form.slug;
  });
  afterAll(() => h.close());

  const jsonish = fc.oneof(
    fc.json(),
    fc.jsonValue().map((v) => JSON.stringify({ field: v })),
    fc
      .dictionary(
        fc.oneof(
          fc.string(),
          fc.constantFrom('__proto__', 'constructor', 'prototype', '_gotcha', 'bot-challenge-response'),
        ),
        fc.jsonValue(),
      )
      .map((d) => JSON.stringify(d)),
  );
  const formish = fc
    .array(fc.tuple(fc.string(), fc.string()), { maxLength: 8 })
    .map((pairs) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&'));
  const multipartish = fc
    .array(fc.tuple(fc.string(), fc.string(), fc.boolean()), { maxLength: 4 })
    .map(
      (parts) =>
        parts
          .map(
            ([name, value, file]) =>
              `--b\r\ncontent-disposition: form-data; name="${name}"${file ? '; filename="f.txt"' : ''}\r\n\r\n${value}\r\n`,
          )
          .join('') + '--b--\r\n',
    );
  const body = fc.oneof(
    jsonish,
    formish,
    multipartish,
    fc.string(),
    fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.from(b)),
  );

  it('answers every request with a non-5xx status and, for errors, a problem document', async () => {
    await fc.assert(
      fc.asyncProperty(
        body,
        fc.constantFrom(...CONTENT_TYPES),
        fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
        fc.option(fc.oneof(fc.string({ maxLength: 60 }), fc.constant('Bearer svc_sub_x'), fc.constant('Bearer')), {
          nil: undefined,
        }),
        fc.option(fc.constantFrom('*/*', 'text/html', 'application/json', 'text/html;q=0.1, application/json'), {
          nil: undefined,
        }),
        async (payload, contentType, idempotencyKey, authorization, accept) => {
          const headers: Record<string, string> = {};
          if (contentType) headers['content-type'] = contentType;
          const safe = (v: string) => v.replace(/[^\x20-\x7e]/g, '');
          if (idempotencyKey !== undefined) headers['idempotency-key'] = safe(idempotencyKey);
          if (authorization !== undefined) headers['authorization'] = safe(authorization);
          if (accept) headers['accept'] = accept;
          const res = await fetch(`${h.url}/v1/f/${slug}`, {
            method: 'POST',
            headers,
            body: payload,
            redirect: 'manual',
          });
          const text = await res.text();
          expect(res.status).toBeLessThan(500);
          if (res.status >= 400) expect(JSON.parse(text).type).toMatch(/\/problems\/[a-z-]+$/);
        },
      ),
      { numRuns: Number(process.env['FUZZ_RUNS'] ?? 150) },
    );
    expect(Object.prototype).not.toHaveProperty('field');
  });
});
