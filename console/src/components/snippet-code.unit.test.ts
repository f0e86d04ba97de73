import { snippets } from './snippet-code';

const form = { ingest_url: 'https://intake.example/v1/f/contact', honeypot_field: '_gotcha' };

/** The snippets the console offers for a form, with and without a bot challenge. */
describe('console snippets', () => {
  it.each([
    ['turnstile', 'https://challenges.cloudflare.com/turnstile/v0/api.js', 'cf-turnstile'],
    ['hcaptcha', 'https://js.hcaptcha.com/1/api.js', 'h-captcha'],
    ['recaptcha', 'https://www.google.com/recaptcha/api.js', 'g-recaptcha'],
  ] as const)(
    'a form with %s gets its widget with a site-key placeholder, and the token in fetch',
    (provider, script, element) => {
      const [html, json, file] = snippets({ ...form, bot_challenge: { provider } }).map((s) => s.code);
      expect(html).toContain(`<script src="${script}" async defer></script>`);
      expect(html).toContain(`<div class="${element}" data-sitekey="YOUR_SITE_KEY"></div>`);
      // The widget renders inside the form, before its button, so its own field is posted with the form.
      expect(html?.indexOf(element)).toBeLessThan(html?.indexOf('<button') ?? 0);
      expect(html?.indexOf(element)).toBeGreaterThan(html?.indexOf('<form') ?? 0);
      expect(json).toContain("'bot-challenge-response': token");
      expect(file).toContain("data.append('bot-challenge-response', token)");
    },
  );

  it('a form without a challenge gets no widget and no token', () => {
    for (const bot_challenge of [undefined, null]) {
      const code = snippets({ ...form, bot_challenge })
        .map((s) => s.code)
        .join('\n');
      expect(code).not.toMatch(/sitekey|challenge|token/);
      expect(code).toContain('name="_gotcha"');
    }
  });
});
