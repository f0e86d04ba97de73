import type { Form } from '../api-types';

/** What a snippet needs of a form; `bot_challenge` absent or null: the form has no challenge. */
export type SnippetForm = Pick<Form, 'ingest_url' | 'honeypot_field'> & Partial<Pick<Form, 'bot_challenge'>>;

type Provider = NonNullable<Form['bot_challenge']>['provider'];

/**
 * Each provider's widget: its script and the element it renders into. The widget adds its token to the form as its
 * own field (`cf-turnstile-response`, `h-captcha-response`, `g-recaptcha-response`), which ingest reads as the token.
 */
const WIDGETS: Record<Provider, { name: string; script: string; element: string; field: string }> = {
  turnstile: {
    name: 'Cloudflare Turnstile',
    script: 'https://challenges.cloudflare.com/turnstile/v0/api.js',
    element: 'cf-turnstile',
    field: 'cf-turnstile-response',
  },
  hcaptcha: {
    name: 'hCaptcha',
    script: 'https://js.hcaptcha.com/1/api.js',
    element: 'h-captcha',
    field: 'h-captcha-response',
  },
  recaptcha: {
    name: 'Google reCAPTCHA',
    script: 'https://www.google.com/recaptcha/api.js',
    element: 'g-recaptcha',
    field: 'g-recaptcha-response',
  },
};

/** The widget's lines of the HTML form (its script first), or none for a form without a challenge. */
function widgetHtml(provider: Provider | undefined): string {
  if (!provider) return '';
  const w = WIDGETS[provider];
  return `  <!-- ${w.name}: replace YOUR_SITE_KEY with the site key of the secret you gave Intake -->
  <script src="${w.script}" async defer></script>
  <div class="${w.element}" data-sitekey="YOUR_SITE_KEY"></div>
`;
}

/** Ready-to-paste code that posts to a form: an HTML form with the honeypot (and the challenge widget), fetch with JSON, fetch with a file. */
export function snippets(form: SnippetForm): { title: string; code: string }[] {
  const url = form.ingest_url;
  const provider = form.bot_challenge?.provider;
  const token = provider
    ? `\n  // the token the ${WIDGETS[provider].name} widget gave the page\n  'bot-challenge-response': token,`
    : '';
  return [
    {
      title: 'HTML form',
      code: `<form action="${url}" method="POST" enctype="multipart/form-data">
  <label>Email <input type="email" name="email" required></label>
  <label>Message <textarea name="message"></textarea></label>
  <!-- spam trap: people never see or fill it -->
  <input type="text" name="${form.honeypot_field}" tabindex="-1" autocomplete="off" style="display:none">
${widgetHtml(provider)}  <button type="submit">Send</button>
</form>`,
    },
    {
      title: 'fetch with JSON',
      code: `const res = await fetch('${url}', {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
  body: JSON.stringify({ email: 'ada@example.com', message: 'Hello',${token} }),
});
console.log(res.status, await res.json()); // 201 { id, received_at, status, files }`,
    },
    {
      title: 'fetch with a file',
      code: `const data = new FormData();
data.append('email', 'ada@example.com');
data.append('cv', fileInput.files[0]); // <input type="file" id="fileInput">${provider ? `\ndata.append('bot-challenge-response', token); // from the ${WIDGETS[provider].name} widget` : ''}
const res = await fetch('${url}', { method: 'POST', body: data, headers: { Accept: 'application/json' } });
console.log(res.status, await res.json());`,
    },
  ];
}
