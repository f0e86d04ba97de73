import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/** One metric family as parse-prometheus-text-format gives it. */
export interface Family {
  name: string;
  type: string;
  metrics: { labels?: Record<string, string>; value?: string; buckets?: Record<string, string> }[];
}

/** Scrapes a process's /metrics on `port` as Prometheus would: the text, its content type, the families by name. */
export async function scrape(port: number) {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  const text = await res.text();
  const families = new Map((parsePrometheusTextFormat(text) as Family[]).map((f) => [f.name, f]));
  return { text, contentType: res.headers.get('content-type'), families };
}

/** The sum of a family's series whose labels include `labels`. */
export function sumOf(f: Family | undefined, labels: Record<string, string> = {}): number {
  return (f?.metrics ?? [])
    .filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
    .reduce((n, m) => n + Number(m.value ?? 0), 0);
}
