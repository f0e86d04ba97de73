import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { useHelm, type K8sObject } from './helm';

/**
 * The chart's alerting rules evaluated by Prometheus's own rule engine (`promtool test rules`, Debian's `prometheus`
 * package, which .ci/run installs) over made-up series: which alerts fire, when, with what labels. The release is
 * `rel` in namespace `forms`; a second Intake (`staging`) shares the Prometheus.
 */
type Rule = { alert: string; expr: string; for?: string; labels?: Record<string, string> };
type AlertTest = { eval_time: string; alertname: string; exp_alerts: { exp_labels: Record<string, string> }[] };
/** One promtool test: its series sampled (and the rules evaluated) every `step` minutes (1 unless said). */
type Case = { name: string; step?: number; series: { series: string; values: string }[]; alerts: AlertTest[] };

const week = 7 * 24 * 60;
/** The cases that need a week of history sample it every 5 minutes (promtool evaluates every rule at every step). */
const weekStep = 5;
const weekSteps = week / weekStep;
const forms = 'namespace="forms"';
const staging = 'namespace="staging"';

const cases: Case[] = [
  {
    name: 'a fan-out behind by over half of what the events stream keeps pages; the same lag on a longer window does not',
    series: [
      // The fan-out's oldest pending event ages a minute a minute; the stream keeps an hour (bounded and full).
      {
        series: `intake_consumer_oldest_pending_age_seconds{${forms},service="rel-delivery",stream="INTAKE_EVENTS",consumer="fan-out"}`,
        values: '0+60x60',
      },
      {
        series: `intake_stream_oldest_age_seconds{${forms},service="rel-delivery",stream="INTAKE_EVENTS"}`,
        values: '3600x60',
      },
      // Staging keeps a day: the same lag is far from its window.
      {
        series: `intake_consumer_oldest_pending_age_seconds{${staging},service="rel-delivery",stream="INTAKE_EVENTS",consumer="fan-out"}`,
        values: '0+60x60',
      },
      {
        series: `intake_stream_oldest_age_seconds{${staging},service="rel-delivery",stream="INTAKE_EVENTS"}`,
        values: '86400x60',
      },
    ],
    alerts: [
      { eval_time: '25m', alertname: 'IntakeFanOutNearWindow', exp_alerts: [] },
      {
        eval_time: '40m',
        alertname: 'IntakeFanOutNearWindow',
        exp_alerts: [
          {
            exp_labels: { severity: 'critical', namespace: 'forms', stream: 'INTAKE_EVENTS', consumer: 'fan-out' },
          },
        ],
      },
    ],
  },
  {
    name: 'a migrate Job whose pod failed and was retried does not page; one failed for good does, then stops',
    series: [
      // Revision 3: one pod failed at 2m, the retry succeeded (the Job never got the Failed condition).
      { series: `kube_job_status_failed{${forms},job_name="rel-migrate-3"}`, values: '0 0 1x30' },
      { series: `kube_job_failed{${forms},job_name="rel-migrate-3",condition="true"}`, values: '0x32' },
      { series: `kube_job_status_start_time{${forms},job_name="rel-migrate-3"}`, values: '0x32' },
      // Revision 4: started at 40m, failed for good at 45m, never deleted.
      { series: `kube_job_status_failed{${forms},job_name="rel-migrate-4"}`, values: '_x40 0x4 4x200' },
      { series: `kube_job_failed{${forms},job_name="rel-migrate-4",condition="true"}`, values: '_x40 0x4 1x200' },
      { series: `kube_job_status_start_time{${forms},job_name="rel-migrate-4"}`, values: '_x40 2400x204' },
      // Another release's failed Job is not this release's alert.
      { series: `kube_job_failed{${staging},job_name="rel-migrate-9",condition="true"}`, values: '1x240' },
      { series: `kube_job_status_start_time{${staging},job_name="rel-migrate-9"}`, values: '0x240' },
    ],
    alerts: [
      { eval_time: '20m', alertname: 'IntakeMigrationsFailed', exp_alerts: [] },
      {
        eval_time: '50m',
        alertname: 'IntakeMigrationsFailed',
        exp_alerts: [{ exp_labels: { severity: 'critical', namespace: 'forms', job_name: 'rel-migrate-4' } }],
      },
      // activeDeadlineSeconds (1 h) + 1 h after it started: resolved, although the Job is still there.
      { eval_time: '165m', alertname: 'IntakeMigrationsFailed', exp_alerts: [] },
    ],
  },
  {
    name: 'a release whose ingest has no available replica pages; one scaled to zero on purpose does not',
    series: [
      { series: `kube_deployment_status_replicas_available{${forms},deployment="rel-ingest"}`, values: '2 2 0x20' },
      { series: `kube_deployment_spec_replicas{${forms},deployment="rel-ingest"}`, values: '2x22' },
      { series: `kube_deployment_status_replicas_available{${forms},deployment="rel-management"}`, values: '2x22' },
      { series: `kube_deployment_spec_replicas{${forms},deployment="rel-management"}`, values: '2x22' },
      { series: `kube_deployment_status_replicas_available{${forms},deployment="rel-usage"}`, values: '0x22' },
      { series: `kube_deployment_spec_replicas{${forms},deployment="rel-usage"}`, values: '1x22' },
      { series: `kube_deployment_status_replicas_available{${staging},deployment="rel-management"}`, values: '0x22' },
      { series: `kube_deployment_spec_replicas{${staging},deployment="rel-management"}`, values: '0x22' },
    ],
    alerts: [
      { eval_time: '3m', alertname: 'IntakeNoAvailableReplicas', exp_alerts: [] },
      {
        eval_time: '10m',
        alertname: 'IntakeNoAvailableReplicas',
        exp_alerts: [{ exp_labels: { severity: 'critical', namespace: 'forms', deployment: 'rel-ingest' } }],
      },
    ],
  },
  {
    name: 'no posts received for half an hour against a post a second a week ago pages',
    step: weekStep,
    series: [
      // Posts at 1/s for a week and 10 minutes, then none (the counter stays), in forms.
      {
        series: `intake_submissions_total{${forms},service="rel-ingest",outcome="received"}`,
        values: `0+300x${weekSteps + 2} ${(weekSteps + 2) * 300}x12`,
      },
      // Staging keeps receiving: its posts say nothing of forms.
      {
        series: `intake_submissions_total{${staging},service="rel-ingest",outcome="received"}`,
        values: `0+300x${weekSteps + 14}`,
      },
    ],
    alerts: [
      { eval_time: `${week + 20}m`, alertname: 'IntakeSubmissionsStopped', exp_alerts: [] },
      {
        eval_time: `${week + 60}m`,
        alertname: 'IntakeSubmissionsStopped',
        exp_alerts: [{ exp_labels: { severity: 'critical', namespace: 'forms' } }],
      },
    ],
  },
  {
    name: 'the series of ingest gone entirely (no pod reports) is the same silence; posts going on are not',
    step: weekStep,
    series: [
      {
        series: `intake_submissions_total{${forms},service="rel-ingest",outcome="received"}`,
        values: `0+300x${weekSteps + 2}`,
      },
      {
        series: `intake_submissions_total{${staging},service="rel-ingest",outcome="received"}`,
        values: `0+300x${weekSteps + 14}`,
      },
    ],
    alerts: [
      {
        eval_time: `${week + 60}m`,
        alertname: 'IntakeSubmissionsStopped',
        exp_alerts: [{ exp_labels: { severity: 'critical', namespace: 'forms' } }],
      },
    ],
  },
  {
    name: 'one pod cut off from NATS for 5 minutes pages (min, not max); a short cut and another release do not',
    series: [
      // Ingest: pod a stays connected, pod b is cut off from 2m on (its credentials refused, say).
      { series: `intake_nats_connected{${forms},service="rel-ingest",pod="rel-ingest-a"}`, values: '1x20' },
      { series: `intake_nats_connected{${forms},service="rel-ingest",pod="rel-ingest-b"}`, values: '1 1 0x18' },
      // Delivery: cut off 3 minutes (a NATS restart), then back.
      { series: `intake_nats_connected{${forms},service="rel-delivery",pod="rel-delivery-a"}`, values: '1 0x3 1x16' },
      { series: `intake_nats_connected{${staging},service="rel-usage",pod="rel-usage-a"}`, values: '0x20' },
    ],
    alerts: [
      { eval_time: '5m', alertname: 'IntakeNatsDisconnected', exp_alerts: [] },
      {
        eval_time: '10m',
        alertname: 'IntakeNatsDisconnected',
        exp_alerts: [{ exp_labels: { severity: 'critical', namespace: 'forms', service: 'rel-ingest' } }],
      },
    ],
  },
  {
    name: 'ack pending over 80 % of the max_ack_pending NATS has warns, and stops once it is raised (nats consumer edit)',
    series: [
      // 9,000 unsettled against 10,000; at 15m the limit is raised to 20,000 by hand (not the chart's value).
      {
        series: `intake_consumer_ack_pending{${forms},service="rel-delivery",stream="INTAKE_DELIVERIES",consumer="delivery-send"}`,
        values: '9000x30',
      },
      {
        series: `intake_consumer_max_ack_pending{${forms},service="rel-delivery",stream="INTAKE_DELIVERIES",consumer="delivery-send"}`,
        values: '10000x15 20000x15',
      },
      // Another release with a larger limit: its 9,000 are not this release's alert.
      {
        series: `intake_consumer_ack_pending{${staging},service="rel-delivery",stream="INTAKE_DELIVERIES",consumer="delivery-send"}`,
        values: '9000x30',
      },
      {
        series: `intake_consumer_max_ack_pending{${staging},service="rel-delivery",stream="INTAKE_DELIVERIES",consumer="delivery-send"}`,
        values: '50000x30',
      },
    ],
    alerts: [
      {
        eval_time: '12m',
        alertname: 'IntakeAckPendingHeadroom',
        exp_alerts: [{ exp_labels: { severity: 'warning', namespace: 'forms' } }],
      },
      { eval_time: '25m', alertname: 'IntakeAckPendingHeadroom', exp_alerts: [] },
    ],
  },
  {
    name: 'a purge over 6 hours behind for half an hour warns (the pods’ max); another release’s lag does not',
    series: [
      // Both management pods report the same lag, 5 h 50 min and growing a minute a minute: over 6 h from 10m on.
      {
        series: `intake_purge_lag_seconds{${forms},service="rel-management",pod="rel-management-a"}`,
        values: '21000+60x60',
      },
      {
        series: `intake_purge_lag_seconds{${forms},service="rel-management",pod="rel-management-b"}`,
        values: '21000+60x60',
      },
      {
        series: `intake_purge_lag_seconds{${staging},service="rel-management",pod="rel-management-a"}`,
        values: '86400x60',
      },
    ],
    alerts: [
      // Over 6 h for 25 minutes: not yet.
      { eval_time: '35m', alertname: 'IntakePurgeBehind', exp_alerts: [] },
      {
        eval_time: '45m',
        alertname: 'IntakePurgeBehind',
        exp_alerts: [{ exp_labels: { severity: 'warning', namespace: 'forms' } }],
      },
    ],
  },
  {
    name: 'a purge that goes over 6 hours behind and catches up within half an hour does not warn',
    series: [
      // A shortened retention's burst: 6 h 10 min due for 20 minutes, then the purge has removed it (lag 0).
      {
        series: `intake_purge_lag_seconds{${forms},service="rel-management",pod="rel-management-a"}`,
        values: '22200x20 0x40',
      },
      // The other pod's last figure is an hour: the rule takes the larger.
      {
        series: `intake_purge_lag_seconds{${forms},service="rel-management",pod="rel-management-b"}`,
        values: '3600x60',
      },
    ],
    alerts: [
      { eval_time: '15m', alertname: 'IntakePurgeBehind', exp_alerts: [] },
      { eval_time: '50m', alertname: 'IntakePurgeBehind', exp_alerts: [] },
    ],
  },
  {
    name: 'another Intake in the same Prometheus neither fires this release’s alerts nor hides them',
    series: [
      { series: `intake_outbox_lag_seconds{${staging},service="rel-ingest"}`, values: '600x30' },
      { series: `intake_outbox_lag_seconds{${forms},service="rel-ingest"}`, values: '1x30' },
      {
        series: `intake_consumer_oldest_pending_age_seconds{${forms},service="rel-delivery",stream="INTAKE_DELIVERIES",consumer="delivery-send"}`,
        values: '900x30',
      },
      {
        series: `intake_consumer_oldest_pending_age_seconds{${staging},service="rel-delivery",stream="INTAKE_DELIVERIES",consumer="delivery-send"}`,
        values: '900x30',
      },
    ],
    alerts: [
      { eval_time: '20m', alertname: 'IntakeOutboxBehind', exp_alerts: [] },
      {
        eval_time: '20m',
        alertname: 'IntakeConsumerBehind',
        exp_alerts: [
          {
            exp_labels: {
              severity: 'warning',
              namespace: 'forms',
              stream: 'INTAKE_DELIVERIES',
              consumer: 'delivery-send',
            },
          },
        ],
      },
    ],
  },
];

describe('the chart’s alerting rules, evaluated by promtool', () => {
  const h = useHelm();

  it('fire as their runbooks say: for this release only, for outages, not for a retried pod, and resolve', async () => {
    const objects = await h.render([
      ...['--set', 'metrics.serviceMonitor.enabled=true', '--set', 'metrics.prometheusRule.enabled=true'],
    ]);
    const rule = objects.find((o) => o.kind === 'PrometheusRule') as K8sObject;
    const groups = (rule.spec as { groups: { name: string; rules: Rule[] }[] }).groups.map((g) => ({
      name: g.name,
      // The annotations are text for people; what fires is the expression, its `for` and its labels.
      rules: g.rules.map(({ alert, expr, for: wait, labels }) => ({
        alert,
        expr,
        ...(wait ? { for: wait } : {}),
        labels,
      })),
    }));
    const outcomes = [];
    for (const [i, c] of cases.entries()) {
      // Only the rules the case is about: promtool evaluates every rule of its files at every step.
      const tested = new Set(c.alerts.map((a) => a.alertname));
      const only = groups.map((g) => ({ ...g, rules: g.rules.filter((r) => tested.has(r.alert)) }));
      const rulesFile = path.join(h.work, `rules-${i}.yaml`);
      writeFileSync(rulesFile, stringify({ groups: only }));
      const testFile = path.join(h.work, `rules-${i}.test.yaml`);
      const step = `${c.step ?? 1}m`;
      const test = { name: c.name, interval: step, input_series: c.series, alert_rule_test: c.alerts };
      writeFileSync(testFile, stringify({ rule_files: [rulesFile], evaluation_interval: step, tests: [test] }));
      outcomes.push(await promtool(testFile));
    }
    expect(outcomes).toEqual(cases.map(() => ({ code: 0, output: '' })));
  });
});

/** `promtool test rules <file>`: its exit code, and what it printed when it failed. */
async function promtool(testFile: string): Promise<{ code: number | string | undefined; output: string }> {
  return promisify(execFile)('promtool', ['test', 'rules', testFile], { maxBuffer: 8 * 1024 * 1024 }).then(
    () => ({ code: 0, output: '' }),
    (e: { code?: number | string; stdout?: string; stderr?: string }) => ({
      code: e.code,
      output: e.code === 'ENOENT' ? 'promtool is missing: apt-get install prometheus' : `${e.stdout}${e.stderr}`,
    }),
  );
}
