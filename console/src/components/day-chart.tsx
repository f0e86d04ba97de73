import { useId } from 'preact/hooks';
import { Table } from './ui';
import { formatDay } from '../time';

type Days = { date: string; received: number; spam: number }[];

/**
 * Received and spam per day, as stacked bars, under `title` (the usage page's month, a dashboard's window); the same
 * figures are in a table for screen readers.
 */
export function DayChart({
  days,
  title = 'Per day',
  period = 'this month',
}: {
  days: Days;
  title?: string;
  period?: string;
}) {
  const id = useId();
  const max = Math.max(1, ...days.map((d) => d.received + d.spam));
  const total = days.reduce((n, d) => n + d.received, 0);
  const spam = days.reduce((n, d) => n + d.spam, 0);
  const share = total + spam > 0 ? Math.round((spam / (total + spam)) * 100) : 0;
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <figure class="chart">
        <DayBars days={days} max={max} label={`Submissions per day ${period}: ${total} received, ${share} % spam`} />
        <div class="chart-axis" aria-hidden="true" style={{ gridTemplateColumns: `repeat(${days.length}, 1fr)` }}>
          {days
            .map((_d, i) => i)
            .filter((i) => i % Math.max(7, Math.ceil(days.length / 5)) === 0)
            .map((i) =>
              days[i] ? (
                <span key={i} style={{ gridColumn: `${i + 1}`, gridRow: '1' }}>
                  {formatDay(days[i].date, { short: true })}
                </span>
              ) : null,
            )}
        </div>
        <figcaption class="legend">
          <span class="key received" aria-hidden="true" /> received <span class="key spam" aria-hidden="true" /> spam ·
          tallest bar {max} a day · {share} % spam
        </figcaption>
      </figure>
      <details>
        <summary>Per-day figures</summary>
        <Table
          label="Submissions per day"
          columns={[{ label: 'Day' }, { label: 'Received', num: true }, { label: 'Spam', num: true }]}
        >
          {days.map((d) => (
            <tr key={d.date}>
              <th scope="row">{formatDay(d.date)}</th>
              <td class="num">{d.received}</td>
              <td class="num">{d.spam}</td>
            </tr>
          ))}
        </Table>
      </details>
    </section>
  );
}

function DayBars({ days, max, label }: { days: Days; max: number; label: string }) {
  const width = 100 / Math.max(1, days.length);
  return (
    <svg viewBox="0 0 100 40" preserveAspectRatio="none" role="img" aria-label={label}>
      {days.map((d, i) => {
        const h = (d.received / max) * 38;
        const hs = (d.spam / max) * 38;
        return (
          <g key={d.date}>
            <title>{`${formatDay(d.date)}: ${d.received} received, ${d.spam} spam`}</title>
            <rect class="received" x={i * width + width * 0.15} y={40 - h} width={width * 0.7} height={h} />
            <rect class="spam" x={i * width + width * 0.15} y={40 - h - hs} width={width * 0.7} height={hs} />
          </g>
        );
      })}
    </svg>
  );
}
