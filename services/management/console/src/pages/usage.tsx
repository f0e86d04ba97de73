import { api } from '../api';
import type { Usage } from '../types';
import { ErrorBox, Loading, TableWrap, formatBytes, useResource } from '../components/ui';

export function UsagePage() {
  const usage = useResource(() => api<Usage>('GET', '/v1/usage'), []);
  if (usage.error) return <ErrorBox error={usage.error} />;
  if (!usage.data) return <Loading what="usage" />;
  const u = usage.data;
  const share = u.limit > 0 ? u.used / u.limit : 1;
  const percent = Math.min(100, Math.round(share * 100));
  const shown = share > 0 && share < 0.01 ? 'under 1' : String(percent);
  return (
    <>
      <h1>Usage</h1>
      <p class="muted">
        {u.plan.name} plan · {u.period.month} (UTC) · resets {new Date(u.period.end).toLocaleDateString()}
      </p>
      {share >= 1 ? (
        <div class="error" role="alert">
          <strong>Monthly limit reached.</strong>
          <p>New submissions are refused (402) until the month ends or the plan changes.</p>
        </div>
      ) : share >= 0.8 ? (
        <div class="warning" role="alert">
          <strong>{percent} % of this month’s submissions used.</strong>
          <p>At 100 % new submissions are refused until the month ends.</p>
        </div>
      ) : null}
      <section aria-labelledby="quota-title" class="quota">
        <h2 id="quota-title">Submissions this month</h2>
        <dl class="figures">
          <div>
            <dt>Used</dt>
            <dd>{u.used.toLocaleString()}</dd>
          </div>
          <div>
            <dt>Limit</dt>
            <dd>{u.limit.toLocaleString()}</dd>
          </div>
          <div>
            <dt>Remaining</dt>
            <dd>{u.remaining.toLocaleString()}</dd>
          </div>
          <div>
            <dt>Spam caught</dt>
            <dd>{u.spam.toLocaleString()}</dd>
          </div>
          <div>
            <dt>Files this month</dt>
            <dd>{formatBytes(u.file_bytes)}</dd>
          </div>
        </dl>
        <div
          class={`bar ${share >= 1 ? 'full' : share >= 0.8 ? 'high' : ''}`}
          role="meter"
          aria-label="Share of the monthly limit used"
          aria-valuemin={0}
          aria-valuemax={u.limit}
          aria-valuenow={Math.min(u.used, u.limit)}
          aria-valuetext={`${shown} % used, ${u.remaining} remaining`}
        >
          <svg viewBox="0 0 100 4" preserveAspectRatio="none" aria-hidden="true" focusable="false">
            <rect class="track" x="0" y="0" width="100" height="4" />
            <rect class="fill" x="0" y="0" width={percent} height="4" />
          </svg>
        </div>
        <p class="muted small">{shown} % used</p>
      </section>
      <DayChart days={u.days} />
      <section aria-labelledby="per-form-title">
        <h2 id="per-form-title">Per form</h2>
        {u.forms.length === 0 ? (
          <p class="muted">No submissions this month yet.</p>
        ) : (
          <TableWrap label="Usage per form">
            <table>
              <thead>
                <tr>
                  <th scope="col">Form</th>
                  <th scope="col" class="num">
                    Received
                  </th>
                  <th scope="col" class="num">
                    Spam
                  </th>
                  <th scope="col" class="num">
                    Files
                  </th>
                </tr>
              </thead>
              <tbody>
                {u.forms.map((f) => (
                  <tr key={f.form_id}>
                    <th scope="row">{f.name ?? `(deleted form ${f.form_id})`}</th>
                    <td class="num">{f.received}</td>
                    <td class="num">{f.spam}</td>
                    <td class="num">{formatBytes(f.file_bytes)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
      </section>
    </>
  );
}

/** Received and spam per day of the month, as stacked bars; the same figures are in a table for screen readers. */
function DayChart({ days }: { days: Usage['days'] }) {
  const max = Math.max(1, ...days.map((d) => d.received + d.spam));
  const width = 100 / Math.max(1, days.length);
  const total = days.reduce((n, d) => n + d.received, 0);
  return (
    <section aria-labelledby="chart-title">
      <h2 id="chart-title">Per day</h2>
      <figure class="chart">
        <svg
          viewBox="0 0 100 40"
          preserveAspectRatio="none"
          role="img"
          aria-label={`Submissions per day this month: ${total} received in total`}
        >
          {days.map((d, i) => {
            const h = (d.received / max) * 38;
            const hs = (d.spam / max) * 38;
            return (
              <g key={d.date}>
                <title>{`${d.date}: ${d.received} received, ${d.spam} spam`}</title>
                <rect class="received" x={i * width + width * 0.15} y={40 - h} width={width * 0.7} height={h} />
                <rect class="spam" x={i * width + width * 0.15} y={40 - h - hs} width={width * 0.7} height={hs} />
              </g>
            );
          })}
        </svg>
        <div class="chart-axis" aria-hidden="true" style={{ gridTemplateColumns: `repeat(${days.length}, 1fr)` }}>
          {[0, 7, 14, 21, 28].map((i) =>
            days[i] ? (
              <span key={i} style={{ gridColumn: `${i + 1}`, gridRow: '1' }}>
                {days[i].date.slice(5)}
              </span>
            ) : null,
          )}
        </div>
        <figcaption class="legend">
          <span class="key received" aria-hidden="true" /> received <span class="key spam" aria-hidden="true" /> spam ·
          tallest bar {max} a day
        </figcaption>
      </figure>
      <details>
        <summary>Per-day figures</summary>
        <TableWrap label="Submissions per day">
          <table>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col" class="num">
                  Received
                </th>
                <th scope="col" class="num">
                  Spam
                </th>
              </tr>
            </thead>
            <tbody>
              {days.map((d) => (
                <tr key={d.date}>
                  <th scope="row">{d.date}</th>
                  <td class="num">{d.received}</td>
                  <td class="num">{d.spam}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      </details>
    </section>
  );
}
