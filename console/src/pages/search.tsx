import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ok } from '../api';
import type { ResponseBody } from '../api-types';
import { ErrorBox, Loading, Table, TextField, formatTime, useResource } from '../components/ui';
import { ProjectSelect, useProjects } from '../components/projects';
import { qs } from '../location';
import { useTitle } from '../title';
import { submissionSummary } from './trash/submissions';

type Found = ResponseBody<'listAccountSubmissions'>['data'][number];

/** A search box for every form the person sees (one client's, given `project`): it opens the search page. */
export function SearchAllForms({ q = '', project }: { q?: string; project?: string }) {
  const { route } = useLocation();
  const [text, setText] = useState(q);
  return (
    <form
      role="search"
      aria-label="Search every form"
      class="inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (text.trim()) route(`/console/search${qs({ q: text.trim(), project })}`);
      }}
    >
      <TextField id="search-all" label="Search every form" type="search" grow value={text} onValue={setText} />
      <div class="field">
        <button type="submit" class="secondary">
          Search
        </button>
      </div>
    </form>
  );
}

/**
 * What a search across forms finds (`?q=`, of one client's forms with `project=`): newest first, ignoring case and
 * accents, each submission named with its form and client and linked to its page.
 */
export function SearchPage() {
  useTitle('Search');
  const { query, route } = useLocation();
  const q = query['q'] ?? '';
  const project = query['project'] || undefined;
  const projects = useProjects();
  // The pages shown beyond the first, for this query only.
  const key = `${q}|${project ?? ''}`;
  const [paging, setPaging] = useState({ key, pages: [] as string[] });
  const pages = paging.key === key ? paging.pages : [];
  const found = useResource(async () => {
    if (!q) return { rows: [] as Found[], next: null };
    const filter = { q, project_id: project, limit: 50 };
    let page = await ok(api.GET('/v1/submissions', { params: { query: filter } }));
    let rows = page.data;
    for (const cursor of pages) {
      if (!page.next_cursor) break;
      page = await ok(api.GET('/v1/submissions', { params: { query: { ...filter, cursor } } }));
      rows = [...rows, ...page.data];
    }
    return { rows, next: page.next_cursor };
  }, [q, project, pages.length]);
  return (
    <>
      <h1>Search</h1>
      <SearchAllForms key={q} q={q} project={project} />
      <ProjectSelect
        id="search-project"
        label="Client"
        projects={projects.data}
        value={project ?? ''}
        all="All clients"
        onValue={(v) => route(`/console/search${qs({ q, project: v })}`)}
      />
      <ErrorBox error={found.error} />
      {found.loading && !found.data && <Loading what="submissions" />}
      {q && found.data && found.data.rows.length === 0 && <p class="empty">Nothing found for “{q}”.</p>}
      {found.data && found.data.rows.length > 0 && <FoundTable rows={found.data.rows} />}
      {found.data?.next && (
        <button
          type="button"
          class="secondary"
          onClick={() => setPaging({ key, pages: [...pages, found.data!.next!] })}
        >
          Show more
        </button>
      )}
    </>
  );
}

function FoundTable({ rows }: { rows: Found[] }) {
  const clients = rows.some((s) => s.project);
  return (
    <Table
      label="Submissions found"
      reflow
      columns={['Submission', 'Form', ...(clients ? ['Client'] : []), 'Received']}
    >
      {rows.map((s) => (
        <tr key={s.id}>
          <th scope="row">
            <a href={`/console/submissions/${encodeURIComponent(s.id)}`}>
              <bdi>{submissionSummary(s.payload)}</bdi>
            </a>
          </th>
          <td>{s.form.name}</td>
          {clients && <td>{s.project?.name ?? ''}</td>}
          <td class="nowrap">{formatTime(s.received_at)}</td>
        </tr>
      ))}
    </Table>
  );
}
