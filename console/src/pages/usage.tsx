import { api, ok } from '../api';
import type { Usage } from '../api-types';
import { ErrorBox, Figures, Loading, Table, formatBytes, formatTime, useResource } from '../components/ui';
import { DayChart } from '../components/day-chart';
import { useTitle } from '../title';
import { useLocation } from 'preact-iso';
import { qs } from '../location';
import { ProjectSelect, useProjects } from '../components/projects';

/** The month's usage, of the whole account or (`?project=`) one client's forms. */
export function UsagePage() {
  useTitle('Usage');
  const { query, route } = useLocation();
  const projectId = query['project'] || undefined;
  const projects = useProjects();
  const usage = useResource(
    () => ok(api.GET('/v1/usage', { params: { query: { project_id: projectId } } })),
    [projectId],
  );
  const client = (
    <ProjectSelect
      id="usage-project"
      label="Client"
      projects={projects.data}
      value={projectId ?? ''}
      all="All clients"
      onValue={(v) => route(`/console/usage${qs({ project: v })}`)}
    />
  );
  if (usage.error) return <ErrorBox error={usage.error} />;
  if (!usage.data)
    return (
      <>
        <h1>Usage</h1>
        {client}
        <Loading what="usage" />
      </>
    );
  const u = usage.data;
  // The quota is the account's: its share used is what ingest goes by, whatever projects the report is limited to.
  const share = u.limit > 0 ? (u.limit - u.remaining) / u.limit : 1;
  return (
    <>
      <h1>Usage</h1>
      <p class="muted">
        {u.plan.name} plan · {u.period.month} (UTC) · resets {formatTime(u.period.end)}
      </p>
      {client}
      <QuotaAlert share={share} />
      <Quota usage={u} share={share} />
      <DayChart days={u.days} />
      <PerForm forms={u.forms} />
    </>
  );
}

const percentOf = (share: number) => Math.min(100, Math.round(share * 100));

/** Says so when the month's submissions are at 80 % of the limit, and when new ones are refused. */
function QuotaAlert({ share }: { share: number }) {
  if (share >= 1)
    return (
      <div class="error" role="alert">
        <strong>Monthly limit reached.</strong>
        <p>New submissions are refused (402) until the month ends or the plan changes.</p>
      </div>
    );
  if (share < 0.8) return null;
  return (
    <div class="warning" role="alert">
      <strong>{percentOf(share)} % of this month’s submissions used.</strong>
      <p>At 100 % new submissions are refused until the month ends.</p>
    </div>
  );
}

function Quota({ usage: u, share }: { usage: Usage; share: number }) {
  const percent = percentOf(share);
  const shown = share > 0 && share < 0.01 ? 'under 1' : String(percent);
  const figures: [string, string][] = [
    [u.project_ids ? 'Used by these projects' : 'Used', u.used.toLocaleString()],
    ['Limit', u.limit.toLocaleString()],
    ['Remaining', u.remaining.toLocaleString()],
    ['Spam caught', u.spam.toLocaleString()],
    ['Files this month', formatBytes(u.file_bytes)],
  ];
  return (
    <section aria-labelledby="quota-title" class="quota">
      <h2 id="quota-title">Submissions this month</h2>
      <Figures figures={figures} />
      <div
        class={`bar ${share >= 1 ? 'full' : share >= 0.8 ? 'high' : ''}`}
        role="meter"
        aria-label="Share of the monthly limit used"
        aria-valuemin={0}
        aria-valuemax={u.limit}
        aria-valuenow={u.limit - u.remaining}
        aria-valuetext={`${shown} % used, ${u.remaining} remaining`}
      >
        <svg viewBox="0 0 100 4" preserveAspectRatio="none" aria-hidden="true" focusable="false">
          <rect class="track" x="0" y="0" width="100" height="4" />
          <rect class="fill" x="0" y="0" width={percent} height="4" />
        </svg>
      </div>
      <p class="muted small">{shown} % used</p>
    </section>
  );
}

/** Each form's month, named with its client in a column of its own when any form is a client's. */
function PerForm({ forms }: { forms: Usage['forms'] }) {
  const clients = forms.some((f) => f.project);
  return (
    <section aria-labelledby="per-form-title">
      <h2 id="per-form-title">Per form</h2>
      {forms.length === 0 ? (
        <p class="muted">No submissions this month yet.</p>
      ) : (
        <Table
          label="Usage per form"
          columns={[
            'Form',
            ...(clients ? ['Project'] : []),
            { label: 'Received', num: true },
            { label: 'Spam', num: true },
            { label: 'Files', num: true },
          ]}
        >
          {forms.map((f) => (
            <tr key={f.form_id}>
              <th scope="row">{f.name ?? `(deleted form ${f.form_id})`}</th>
              {clients && <td>{f.project?.name ?? ''}</td>}
              <td class="num">{f.received}</td>
              <td class="num">{f.spam}</td>
              <td class="num">{formatBytes(f.file_bytes)}</td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}
