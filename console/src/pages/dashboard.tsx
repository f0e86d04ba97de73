import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ok } from '../api';
import type { AccountDashboard } from '../api-types';
import { DayChart } from '../components/day-chart';
import {
  ErrorBox,
  Figures,
  Loading,
  SelectField,
  SubmitRow,
  Table,
  TextField,
  useAction,
  useResource,
  type Resource,
} from '../components/ui';
import { fieldErrors } from '../components/field-errors';
import { useProjects } from '../components/projects';
import { confirmAfterNavigation } from '../flash';
import { may } from '../people';
import { useTitle } from '../title';
import { formatDay } from '../time';

/** The windows a dashboard offers, in days. */
export const WINDOWS = [30, 90] as const;
export type Window = (typeof WINDOWS)[number];

/** The window in the URL (`?days=90`), 30 by default. */
export function useWindow(): Window {
  const { query } = useLocation();
  return query['days'] === '90' ? 90 : 30;
}

/** Links to the other windows; the one shown is marked as current. */
export function WindowLinks({ base, days }: { base: string; days: Window }) {
  return (
    <nav aria-label="Period" class="tabs">
      <ul>
        {WINDOWS.map((n) => (
          <li key={n}>
            <a href={n === 30 ? base : `${base}?days=${n}`} aria-current={n === days ? 'page' : undefined}>
              Last {n} days
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** Spam as a share of everything that came: “4 %”, or “–” when nothing came. */
export const spamShare = (received: number, spam: number) =>
  received + spam === 0 ? '–' : `${Math.round((spam / (received + spam)) * 100)} %`;

/**
 * A board (the account's, a project's): its title with the window links, then once loaded its figures, its
 * submissions per day over the window, and `children` (what else the board shows).
 */
export function Board<Data extends { days: AccountDashboard['days'] }>(props: {
  title: string;
  base: string;
  days: Window;
  board: Resource<Data>;
  /** What is loading, as “Loading …” says it. */
  what: string;
  figures(data: Data): [string, string][];
  children(data: Data): ComponentChildren;
}) {
  const { board, days } = props;
  const b = board.data;
  return (
    <>
      <div class="page-head">
        <h1>{props.title}</h1>
        <WindowLinks base={props.base} days={days} />
      </div>
      <ErrorBox error={board.error} />
      {!b && !board.error && <Loading what={props.what} />}
      {b && (
        <>
          <Figures figures={props.figures(b)} />
          <DayChart days={b.days} title="Submissions per day" period={`in the last ${days} days`} />
          {props.children(b)}
        </>
      )}
    </>
  );
}

/** The account at a glance: submissions per day, and each project the person sees with its figures. */
export function DashboardPage() {
  useTitle('Dashboard');
  const days = useWindow();
  const board = useResource(() => ok(api.GET('/v1/dashboard', { params: { query: { days } } })), [days]);
  return (
    <Board
      title="Dashboard"
      base="/console/dashboard"
      days={days}
      board={board}
      what="the dashboard"
      figures={(b) => [
        ['Received', b.totals.received.toLocaleString()],
        ['Spam', `${b.totals.spam.toLocaleString()} (${spamShare(b.totals.received, b.totals.spam)})`],
        ['Spam this week', b.totals.spam_week.toLocaleString()],
        ['Failing webhooks', b.totals.failing_webhooks.toLocaleString()],
      ]}
    >
      {(b) => (
        <>
          <ProjectsTable projects={b.projects} days={days} />
          {may('createProject') && <NewProject />}
        </>
      )}
    </Board>
  );
}

function ProjectsTable({ projects, days }: { projects: AccountDashboard['projects']; days: Window }) {
  return (
    <section aria-labelledby="projects-title">
      <h2 id="projects-title">Projects</h2>
      <Table
        label="Projects at a glance"
        reflow
        class="compact"
        columns={[
          { label: 'Project' },
          { label: 'Unread', num: true },
          { label: 'Forms', num: true },
          { label: `Received (${days} days)`, num: true },
          { label: 'Spam share', num: true },
          { label: 'Spam this week', num: true },
          { label: 'Failing webhooks', num: true },
          { label: 'Last submission' },
        ]}
      >
        {projects.map((p) => (
          <tr key={p.id}>
            <th scope="row">
              <a href={`/console/projects/${p.id}${days === 30 ? '' : `?days=${days}`}`}>{p.name}</a>
            </th>
            <td class="num">{p.unread_capped ? `${p.unread.toLocaleString()}+` : p.unread.toLocaleString()}</td>
            <td class="num">{p.form_count}</td>
            <td class="num">{p.received.toLocaleString()}</td>
            <td class="num">{spamShare(p.received, p.spam)}</td>
            <td class="num">{p.spam_week.toLocaleString()}</td>
            <td class={`num${p.failing_webhooks > 0 ? ' failing' : ''}`}>{p.failing_webhooks}</td>
            <td>{p.last_day ? formatDay(p.last_day) : `none in ${days} days`}</td>
          </tr>
        ))}
      </Table>
    </section>
  );
}

/** Creates a project, empty or with another's form defaults and a copy of its forms (then opens it). */
function NewProject() {
  const { route } = useLocation();
  const projects = useProjects();
  const [name, setName] = useState('');
  const [from, setFrom] = useState('');
  const action = useAction();
  const create = async (e: Event) => {
    e.preventDefault();
    const body = { name: name.trim(), ...(from ? { forms_from: from } : {}) };
    const made = await action.run(() => ok(api.POST('/v1/projects', { body })));
    if (!made) return;
    const copied = from ? ` with ${made.form_count} form${made.form_count === 1 ? '' : 's'} copied` : '';
    confirmAfterNavigation(`Project “${made.name}” created${copied}.`, `/console/projects/${made.id}`);
    route(`/console/projects/${made.id}`);
  };
  return (
    <form class="stack" aria-labelledby="new-project-title" onSubmit={(e) => void create(e)}>
      <h2 id="new-project-title">New project</h2>
      <TextField
        id="p-name"
        label="Name"
        help="A client’s or a site’s forms together; people and keys can be limited to it."
        required
        maxLength={100}
        value={name}
        onValue={setName}
        error={fieldErrors(action.error)['name']}
      />
      <SelectField
        id="p-from"
        label="Start from another client’s forms"
        help="Its form defaults and a copy of each of its forms (settings only: no webhooks, integrations or submissions)."
        options={[
          ['', 'No: an empty project'],
          ...(projects.data ?? []).map((p): [string, string] => [
            p.id,
            `${p.name} (${p.form_count} form${p.form_count === 1 ? '' : 's'})`,
          ]),
        ]}
        value={from}
        onValue={setFrom}
        error={fieldErrors(action.error)['forms_from']}
      />
      <ErrorBox error={action.error} atFields={['name', 'forms_from']} />
      <SubmitRow pending={action.pending}>Create project</SubmitRow>
    </form>
  );
}
