import { snippets, type SnippetForm } from './snippet-code';
import { CopyButton } from './ui';

export function Snippets({ form }: { form: SnippetForm }) {
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
