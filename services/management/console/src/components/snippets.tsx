import type { Form } from '../api-types';
import { CopyButton } from './ui';

/** Ready-to-paste code that posts to a form: an HTML form with the honeypot, fetch with JSON, fetch with a file. */
export function snippets(form: Pick<Form, 'ingest_url' | 'honeypot_field'>): { title: string; code: string }[] {
  const url = form.ingest_url;
  return [
    {
      title: 'HTML form',
      code: `<form action="${url}" method="POST" enctype="multipart/form-data">
  <label>Email <input type="email" name="email" required></label>
  <label>Message <textarea name="message"></textarea></label>
  <!-- spam trap: people never see or fill it -->
  <input type="text" name="${form.honeypot_field}" tabindex="-1" autocomplete="off" style="display:none">
  <button type="submit">Send</button>
</form>`,
    },
    {
      title: 'fetch with JSON',
      code: `const res = await fetch('${url}', {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
  body: JSON.stringify({ email: 'ada@example.com', message: 'Hello' }),
});
console.log(res.status, await res.json()); // 201 { id, received_at, status, files }`,
    },
    {
      title: 'fetch with a file',
      code: `const data = new FormData();
data.append('email', 'ada@example.com');
data.append('cv', fileInput.files[0]); // <input type="file" id="fileInput">
const res = await fetch('${url}', { method: 'POST', body: data, headers: { Accept: 'application/json' } });
console.log(res.status, await res.json());`,
    },
  ];
}

export function Snippets({ form }: { form: Pick<Form, 'ingest_url' | 'honeypot_field'> }) {
  return (
    <section aria-labelledby="snippets-title">
      <h2 id="snippets-title">Snippets</h2>
      <p>
        Ingest URL: <code>{form.ingest_url}</code> <CopyButton text={form.ingest_url} label="Copy URL" />
      </p>
      {snippets(form).map((s) => (
        <div class="snippet" key={s.title}>
          <div class="snippet-head">
            <h3>{s.title}</h3>
            <CopyButton text={s.code} label={`Copy ${s.title}`} />
          </div>
          <pre tabIndex={0} aria-label={s.title}>
            <code>{s.code}</code>
          </pre>
        </div>
      ))}
    </section>
  );
}
