import http from 'node:http';
import { expectMatchesOpenApi, useStarted } from '@intake/shared/testing';
import {
  accountWithForm as accountWithFormOf,
  slugOf,
  startIngest,
  submissionsOf,
  type IngestHarness,
} from './helpers';

/** What a browser sends when a visitor submits an HTML form on https://site.example/contact. */
const NAVIGATION = {
  'content-type': 'application/x-www-form-urlencoded',
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
  'sec-fetch-mode': 'navigate',
  referer: 'https://site.example/contact',
};

/** Each refusal a visitor can meet, set up on a fresh form: its slug, status and a post that meets it. */
const REFUSALS: [
  string,
  number,
  (h: IngestHarness) => Promise<(headers: Record<string, string>) => Promise<Answer>>,
][] = [
  [
    'form-not-live',
    403,
    async (h) => {
      const { post } = await accountWithForm(h, { form: { status: 'paused' } });
      return (headers) => post('message=hi', headers);
    },
  ],
  [
    'origin-not-allowed',
    403,
    async (h) => {
      const { form, post } = await accountWithForm(h);
      await h.platform
        .db('forms')
        .where({ id: form.id })
        .update({ allowed_origins: JSON.stringify(['https://good.example']) });
      return (headers) => post('message=hi', { ...headers, origin: 'https://site.example' });
    },
  ],
  [
    'quota-exceeded',
    402,
    async (h) => {
      const { post } = await accountWithForm(h, { quota: 0 });
      return (headers) => post('message=hi', headers);
    },
  ],
  [
    'challenge-failed',
    403,
    async (h) => {
      const secret = h.platform.secrets.seal('site-secret');
      const { post } = await accountWithForm(h, {
        form: { bot_challenge_provider: 'turnstile', bot_challenge_secret: secret },
      });
      return (headers) => post('message=hi', headers);
    },
  ],
];

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

/**
 * POSTs as a browser does, over node:http: fetch() would replace `Sec-Fetch-Mode` with its own `cors`. Every answer
 * is checked against the OpenAPI document, as the other ingest tests' are.
 */
function browserPoster(url: string, slug: string) {
  return (body: string, headers: Record<string, string>) =>
    new Promise<Answer>((resolve, reject) => {
      const req = http.request(`${url}/v1/f/${slug}`, { method: 'POST', headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          const contentType = res.headers['content-type'] ?? null;
          const json = /json/.test(contentType ?? '');
          const answer = {
            status: res.statusCode ?? 0,
            headers: new Headers(res.headers as Record<string, string>),
            body: json ? (JSON.parse(text) as Record<string, unknown>) : {},
            text,
          };
          const path = `/v1/f/${slug}`;
          expectMatchesOpenApi(url, {
            method: 'POST',
            path,
            status: answer.status,
            contentType,
            body: json ? answer.body : text,
          }).then(() => resolve(answer), reject);
        });
      });
      req.on('error', reject);
      req.end(body);
    });
}

/** A fresh account and form (as `accountWithForm` makes them) whose `post` is a browser's. */
async function accountWithForm(h: IngestHarness, props: Parameters<typeof accountWithFormOf>[1] = {}) {
  const made = await accountWithFormOf(h, props);
  return { ...made, post: browserPoster(h.url, made.form.slug) };
}

describe('a refused post from an HTML form, seen by the visitor', () => {
  const h = useStarted(() => startIngest({ RATE_LIMIT_POINTS: 3 }));

  it.each(REFUSALS)('%s: a readable page in status %i with the reason and a link back', async (slug, status, make) => {
    const post = await make(h);
    const res = await post(NAVIGATION);
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('<h1>Your submission was not sent</h1>');
    expect(res.text).toContain(
      '<a href="https://site.example/contact" onclick="history.back(); return false">Go back</a>',
    );
    expect(res.text).not.toContain('"type"');
    // The same refusal to a script's fetch() and to an API client: the problem document.
    for (const headers of [
      { ...NAVIGATION, 'sec-fetch-mode': 'cors' },
      { ...NAVIGATION, accept: 'application/json' },
    ]) {
      const api = await post(headers);
      expect([api.status, slugOf(api)]).toEqual([status, slug]);
    }
  });

  it('rate-limited: the page keeps 429 and Retry-After', async () => {
    const { form, post } = await accountWithForm(h);
    for (const n of [1, 2, 3]) expect((await post(`message=${n}`, NAVIGATION)).status).toBe(201);
    const res = await post('message=4', NAVIGATION);
    expect([res.status, res.headers.get('content-type')]).toEqual([429, 'text/html; charset=utf-8']);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(res.text).toMatch(/Too many posts to this form from your address; try again in \d+ s/);
    expect(await submissionsOf(h, form.id)).toHaveLength(3);
  });

  it('goes back to the owner’s redirect_url with error=<slug> when the form has one', async () => {
    const { post } = await accountWithForm(h, {
      form: { status: 'paused', redirect_url: 'https://site.example/thanks?from=intake' },
    });
    const res = await post('message=hi', NAVIGATION);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('https://site.example/thanks?from=intake&error=form-not-live');
  });

  it('escapes what the page repeats from the request', async () => {
    const { post } = await accountWithForm(h, { form: { status: 'paused' } });
    const res = await post('message=hi', { ...NAVIGATION, referer: 'https://site.example/"><script>x()</script>' });
    expect(res.text).not.toContain('<script>');
    expect(res.text).toContain('&quot;&gt;&lt;script&gt;');
  });
});

describe('the pages a visitor’s browser is shown, in the owner’s words or the visitor’s language', () => {
  const h = useStarted(() => startIngest());

  it('shows the owner’s thank-you and refusal pages (escaped), else Intake’s own in the visitor’s language', async () => {
    const german = { ...NAVIGATION, 'accept-language': 'de-CH, de;q=0.9, en;q=0.5' };
    const plain = await accountWithForm(h);
    const built = await plain.post('message=hi', german);
    expect(built.status).toBe(201);
    expect(built.text).toContain('<html lang="de">');
    expect(built.text).toContain('<h1>Vielen Dank</h1><p>Ihre Nachricht ist angekommen.</p>');
    const japanese = await plain.post('message=hi', { ...NAVIGATION, 'accept-language': 'ja' });
    expect(japanese.text).toContain('<h1>Thank you</h1>');

    // Set before the form's first post, so no process has a copy of it cached.
    const pages = JSON.stringify({
      thank_you: { title: 'Merci <3', message: 'We answer within a day.\nOr call us.' },
      refused: { title: 'Not this time', message: 'Write to help@shop.example instead.' },
    });
    const owned = await accountWithForm(h);
    await h.platform.db('forms').where({ id: owned.form.id }).update({ pages });
    const own = await owned.post('message=hi', german);
    expect(own.text).toContain('<h1>Merci &lt;3</h1><p>We answer within a day.<br>Or call us.</p>');
    const closed = await accountWithForm(h, { form: { status: 'paused' } });
    await h.platform.db('forms').where({ id: closed.form.id }).update({ pages });
    const refused = await closed.post('message=hi', german);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('<h1>Not this time</h1><p>Write to help@shop.example instead.</p>');
    expect(refused.text).toContain('does not accept submissions');
    expect(refused.text).toContain('>Zurück</a>');
  });
});
