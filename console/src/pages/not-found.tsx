import { useTitle } from '../title';

/** A console URL that names no view, or a form or submission that does not exist (any more): said, with a way back. */
export function NotFound({ what = 'page' }: { what?: string }) {
  useTitle(`${what[0]?.toUpperCase()}${what.slice(1)} not found`);
  return (
    <section class="not-found" aria-labelledby="not-found-title">
      <h1 id="not-found-title">{`${what[0]?.toUpperCase()}${what.slice(1)} not found`}</h1>
      <p>It may have been deleted, or the address may be mistyped.</p>
      <p>
        <a class="button" href="/console/forms">
          Back to your forms
        </a>
      </p>
    </section>
  );
}
