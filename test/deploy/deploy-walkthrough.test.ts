import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { chart, objectsOf, root, useHelm, validateObject, type Helm, type K8sObject } from './helm';

/**
 * docs/deploy.md's production install, checked the only way this machine allows (no cluster): its shell blocks are
 * read as a reader copies them. Every manifest they apply is validated against its schema, the values files they write
 * feed the very `helm install` line they give (rendered with the real Helm, every object validated), every Secret key
 * a pod or a manifest reads is one the page creates (or an operator it installs creates), and the figures it states
 * (Postgres connections, the pods' requests, what the stream bounds reserve on the NATS volume, and docs/scaling.md's
 * sizing example they come from) are computed here from the chart's values and the page's own.
 */
const doc = readFileSync(path.join(root, 'docs/deploy.md'), 'utf8');
const section = doc.slice(doc.indexOf('## Helm: a production install'), doc.indexOf('## What was proven here'));

type Heredoc = { command: string; text: string };
type Walkthrough = { commands: string[]; heredocs: Heredoc[] };

/** The commands of the section's ```sh blocks (continuation lines joined) and the YAML each heredoc feeds. */
function readWalkthrough(): Walkthrough {
  const commands: string[] = [];
  const heredocs: Heredoc[] = [];
  for (const [, block] of section.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const lines = (block as string).replace(/\\\n\s*/g, ' ').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] as string;
      const here = /^(.*)<<'YAML'\s*$/.exec(line);
      if (!here) {
        if (line.trim()) commands.push(line.trim());
        continue;
      }
      const end = lines.indexOf('YAML', i + 1);
      heredocs.push({ command: (here[1] as string).trim(), text: lines.slice(i + 1, end).join('\n') });
      i = end;
    }
  }
  return { commands, heredocs };
}

const walkthrough = readWalkthrough();
const applied = walkthrough.heredocs
  .filter((h) => h.command.startsWith('kubectl apply'))
  .flatMap((h) => objectsOf(h.text));
const fileOf = (name: string) => {
  const heredoc = walkthrough.heredocs.find((h) => h.command === `cat > ${name}`);
  if (!heredoc) throw new Error(`docs/deploy.md writes no ${name}`);
  return heredoc.text;
};
const natsRelease = () =>
  /^helm install nats \S+ --namespace (\S+)/.exec(command(/^helm install nats /))?.[1] as string;
const command = (pattern: RegExp) => {
  const found = walkthrough.commands.find((c) => pattern.test(c));
  if (!found) throw new Error(`docs/deploy.md has no command matching ${pattern}`);
  return found;
};

/** Secrets by `<namespace>/<name>`: those the page creates with kubectl, and those its operators make. */
function secretsProvided(): Map<string, Set<string>> {
  const secrets = new Map<string, Set<string>>();
  for (const c of walkthrough.commands) {
    const created = /^kubectl -n (\S+) create secret generic (\S+) (.*)$/.exec(c);
    if (!created) continue;
    const keys = [...(created[3] as string).matchAll(/--from-literal=([A-Za-z0-9_.-]+)=/g)].map((m) => m[1] as string);
    secrets.set(`${created[1]}/${created[2]}`, new Set(keys));
  }
  for (const o of applied) {
    const ns = o.metadata.namespace ?? 'default';
    // CloudNativePG: the application role's Secret and the cluster's CA (which holds the CA's key too).
    if (o.kind === 'Cluster' && o.apiVersion.startsWith('postgresql.cnpg.io/')) {
      secrets.set(`${ns}/${o.metadata.name}-app`, new Set(['uri', 'username', 'password', 'host', 'port', 'dbname']));
      secrets.set(`${ns}/${o.metadata.name}-ca`, new Set(['ca.crt', 'ca.key']));
    }
    if (o.kind === 'Certificate' && o.apiVersion.startsWith('cert-manager.io/'))
      secrets.set(`${ns}/${(o.spec as { secretName: string }).secretName}`, new Set(['ca.crt', 'tls.crt', 'tls.key']));
  }
  return secrets;
}

/** Every Secret key an object reads: env secretKeyRefs, CloudNativePG's S3 credentials, secret volumes (their items). */
function secretsRead(value: unknown, namespace: string, parentKey = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v) => secretsRead(v, namespace, parentKey));
  if (typeof value !== 'object' || value === null) return [];
  const o = value as Record<string, unknown>;
  const out: string[] = [];
  if (['secretKeyRef', 'accessKeyId', 'secretAccessKey'].includes(parentKey) && o['name'] && o['key'])
    out.push(`${namespace}/${o['name']}:${o['key']}`);
  if (parentKey === 'secret' && o['secretName']) {
    const items = (o['items'] as { key: string }[] | undefined) ?? [];
    out.push(
      ...(items.length
        ? items.map((i) => `${namespace}/${o['secretName']}:${i.key}`)
        : [`${namespace}/${o['secretName']}:`]),
    );
  }
  for (const [k, v] of Object.entries(o)) out.push(...secretsRead(v, namespace, k));
  return out;
}

const missingSecrets = (reads: string[], provided: Map<string, Set<string>>) =>
  reads.filter((r) => {
    const [secret, key] = r.split(':') as [string, string];
    const keys = provided.get(secret);
    return !keys || (key !== '' && !keys.has(key));
  });

/** The release as the page's `helm install` line renders it: that line's arguments, its objects. */
function useRelease(h: Helm) {
  const release = { args: [] as string[], objects: [] as K8sObject[] };
  beforeAll(async () => {
    let args: string[] = [];
    const dir = path.join(h.work, 'walkthrough');
    mkdirSync(dir);
    const install = command(/^helm install intake deploy\/helm\/intake /);
    args = install
      .split(/\s+/)
      .slice(4)
      .flatMap((a, i, all) => (a === '--timeout' || all[i - 1] === '--timeout' ? [] : [a]));
    args = args.map((a, i) => {
      if (args[i - 1] !== '-f') return a;
      if (a.startsWith('deploy/')) return path.join(root, a);
      const file = path.join(dir, a);
      writeFileSync(file, fileOf(a));
      return file;
    });
    const out = await h.helm('template', 'intake', chart, ...args);
    expect({ exit: out.code, output: out.code ? out.stdout : '' }).toEqual({ exit: 0, output: '' });
    release.args = args;
    release.objects = objectsOf(out.stdout);
  });
  return release;
}
type Release = ReturnType<typeof useRelease>;

describe('docs/deploy.md: the production install, as a reader copies it', () => {
  const h = useHelm();
  const release = useRelease(h);
  describe('rendered and validated', () => renderCases(h, release));
  describe('its Secrets and NATS', () => wiringCases(release));
  describe('its figures', () => figureCases(release));
  describe('its stream bounds', () => streamCases(release));

  it('docs/scaling.md’s connections for the chart’s defaults are the ones the chart renders', async () => {
    const defaults = releaseFigures(await h.render([], { name: 'intake', namespace: 'forms' }));
    const scaling = readFileSync(path.join(root, 'docs/scaling.md'), 'utf8').replace(/\s+/g, ' ');
    const [ingest, management, delivery, usage] = defaults.most;
    expect(scaling).toContain(
      `(${ingest} + ${management} + ${delivery} + ${usage}) × 10 + ${ingest} + ${management} + 2 = ${defaults.connections}`,
    );
  });
});

function renderCases(h: Helm, release: Release) {
  it('installs into a namespace, with a timeout, and helm lint --strict passes on its values', async () => {
    const { args } = release;
    expect(args.slice(0, 2)).toEqual(['--namespace', 'forms']);
    expect(command(/^helm install intake /)).toMatch(/--timeout \d+m/);
    const lint = await h.helm('lint', '--strict', chart, ...args);
    expect({ exit: lint.code, output: lint.code ? lint.stdout : '' }).toEqual({ exit: 0, output: '' });
  });

  it('every object the release renders passes its schema (the Prometheus Operator’s kinds included)', async () => {
    const { objects } = release;
    const kinds = new Set(objects.map((o) => o.kind));
    for (const kind of ['Deployment', 'Job', 'ServiceMonitor', 'PrometheusRule', 'Ingress', 'NetworkPolicy'])
      expect(kinds).toContain(kind);
    for (const o of objects) {
      const id = `${o.kind} ${o.metadata.name}`;
      await expect(validateObject(o).then(() => id)).resolves.toBe(id);
    }
    // kube-prometheus-stack's Prometheus selects them by its release label.
    for (const kind of ['ServiceMonitor', 'PrometheusRule'])
      expect(objects.find((o) => o.kind === kind)?.metadata.labels?.['release']).toBe('kube-prometheus-stack');
  });

  it('every manifest it applies passes its schema (cert-manager, core), CloudNativePG’s Cluster its fields', async () => {
    expect(applied.map((o) => o.kind).sort()).toEqual(
      [
        'Certificate',
        'Certificate',
        'Certificate',
        'ClusterIssuer',
        'ClusterIssuer',
        'Cluster',
        'Deployment',
        'Service',
      ].sort(),
    );
    for (const o of applied.filter((a) => a.kind !== 'Cluster')) {
      const id = `${o.kind} ${o.metadata.name}`;
      await expect(validateObject(o).then(() => id)).resolves.toBe(id);
    }
    // No schema package for CloudNativePG here: the fields the page relies on, with the types the CRD gives them.
    const cluster = applied.find((o) => o.kind === 'Cluster') as K8sObject;
    expect(cluster.apiVersion).toBe('postgresql.cnpg.io/v1');
    expect(cluster.spec).toMatchObject({
      instances: expect.any(Number),
      storage: { size: expect.stringMatching(/^\d+Gi$/) },
      bootstrap: { initdb: { database: 'intake', owner: 'intake' } },
      postgresql: { parameters: { max_connections: expect.stringMatching(/^\d+$/) } },
    });
  });
}

function wiringCases(release: Release) {
  it('every Secret key the pods, the Job and the manifests read is one the page creates, or its operators do', () => {
    const { objects } = release;
    const provided = secretsProvided();
    const reads = [
      ...objects.flatMap((o) => secretsRead(o.spec, 'forms')),
      ...applied.flatMap((o) => secretsRead(o.spec, o.metadata.namespace ?? 'default')),
      ...secretsRead(parse(fileOf('nats-values.yaml')), natsRelease()),
    ];
    // Among them what every install needs: the database URL, the sealing key, and Redis's URL (the default is on).
    for (const needed of [
      'forms/intake-db-app:uri',
      'forms/intake-secrets:SECRETS_KEY',
      'forms/intake-secrets:REDIS_URL',
    ])
      expect(reads).toContain(needed);
    expect(missingSecrets(reads, provided)).toEqual([]);
    // The CA the pods mount for Postgres is a Secret of the CA's certificate alone, not the operator's (it holds ca.key).
    expect(reads.filter((r) => r.startsWith('forms/intake-db-ca:'))).toEqual([]);
  });

  it('NATS: the password user of the NATS values is the Secret’s, and the TLS names cover the pods’ URLs', () => {
    const { objects } = release;
    const nats = parse(fileOf('nats-values.yaml')) as {
      config: {
        nats: { tls: { secretName: string } };
        merge: { authorization: { users: { user: string; password: string }[] } };
      };
      container: { env: Record<string, unknown> };
    };
    const [user] = nats.config.merge.authorization.users;
    expect(command(/create secret generic intake-secrets /)).toContain(`--from-literal=NATS_USER=${user?.user} `);
    const passwordVar = /^<< \$(\w+) >>$/.exec(user?.password ?? '')?.[1] as string;
    expect(Object.keys(nats.container.env)).toContain(passwordVar);
    const serverCert = applied.find(
      (o) =>
        o.kind === 'Certificate' && (o.spec as { secretName: string }).secretName === nats.config.nats.tls.secretName,
    ) as K8sObject;
    expect(serverCert.metadata.namespace).toBe(natsRelease());
    const names = (serverCert.spec as { dnsNames: string[] }).dnsNames;
    const covered = (host: string) =>
      names.some((n) => (n.startsWith('*.') ? host.slice(host.indexOf('.') + 1) === n.slice(2) : host === n));
    const ingest = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'intake-ingest') as K8sObject;
    const env = (ingest.spec as { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } })
      .template.spec.containers[0]!.env;
    const urls = (env.find((e) => e.name === 'NATS_URL')?.value ?? '').split(',');
    expect(urls).toHaveLength(3);
    for (const url of urls) {
      const { protocol, hostname } = new URL(url);
      expect({ url, protocol, covered: covered(hostname) }).toEqual({ url, protocol: 'tls:', covered: true });
    }
    expect(env.map((e) => e.name)).toEqual(expect.arrayContaining(['NATS_USER', 'NATS_PASSWORD', 'NATS_TLS_CA_FILE']));
  });
}

function figureCases(release: Release) {
  it('states the Postgres connections the release can open and a max_connections computed from them', () => {
    const figures = releaseFigures(release.objects);
    const cluster = applied.find((o) => o.kind === 'Cluster') as K8sObject;
    const maxConnections = Math.ceil((figures.connections * 1.1) / 50) * 50;
    const parameters = (cluster.spec as { postgresql: { parameters: { max_connections: string } } }).postgresql
      .parameters;
    expect({ inManifest: parameters.max_connections, connections: figures.connections }).toEqual({
      inManifest: String(maxConnections),
      connections: figures.connections,
    });
    expect(section).toContain(`can open **${figures.connections}** connections`);
    expect(section).toContain(`rounded up to 50: **${maxConnections}**`);
    expect(section).toContain(figures.podsSentence);
  });

  it('states the pods’ requests at their minimum replicas and at full autoscale, computed from the values', () => {
    const { min, max } = releaseFigures(release.objects);
    expect(section).toContain(
      `request **${min.cpu} CPU and ${min.memory} GiB** at their minimum replicas (${min.pods})`,
    );
    expect(section).toContain(`up to **${max.cpu} CPU and ${max.memory} GiB** at full autoscale`);
  });
}

const GiB = 2 ** 30;
/** Text with every run of white space (line breaks included) made one space, as a reader reads it. */
const flat = (text: string) => text.replace(/\s+/g, ' ');
/** The numbers a pattern's groups catch in `text` (thousands separators dropped); throws when it does not match. */
function numbersIn(text: string, pattern: RegExp): number[] {
  const found = pattern.exec(text);
  if (!found) throw new Error(`no text matching ${pattern}`);
  return found.slice(1).map((g) => Number((g as string).replace(/,/g, '')));
}
/** A Kubernetes binary quantity (`20Gi`) in bytes. */
function quantityBytes(q: string): number {
  const [, n, unit] = /^(\d+)(Ki|Mi|Gi|Ti)$/.exec(q) ?? [];
  if (!n || !unit) throw new Error(`not a binary quantity: ${q}`);
  return Number(n) * 1024 ** (['Ki', 'Mi', 'Gi', 'Ti'].indexOf(unit) + 1);
}
/** How many days `bytes` of events last at `bytesPerSecond`, to a tenth. */
const windowDays = (bytes: number, bytesPerSecond: number) => (bytes / bytesPerSecond / 86_400).toFixed(1);

/** The streams' bounds and replicas the release provisions with (the migrations Job's settings). */
function streamSettings(objects: K8sObject[]) {
  const job = objects.find((o) => o.kind === 'Job') as Deployment;
  const env = new Map(job.spec.template.spec.containers[0]!.env.map((e) => [e.name, e.value]));
  const number = (name: string) => (env.has(name) ? Number(env.get(name)) : undefined);
  return {
    events: number('NATS_EVENTS_MAX_BYTES'),
    deliveries: number('NATS_DELIVERIES_MAX_BYTES'),
    single: number('NATS_STREAM_MAX_BYTES'),
    replicas: number('NATS_STREAM_REPLICAS'),
  };
}

/** The NATS cluster the page installs: its nodes, and each node's JetStream store (fileStore.maxSize, else its PVC). */
function natsStore() {
  const { config } = parse(fileOf('nats-values.yaml')) as {
    config: { cluster: { replicas: number }; jetstream: { fileStore: { maxSize?: string; pvc: { size: string } } } };
  };
  const { fileStore } = config.jetstream;
  return { nodes: config.cluster.replicas, store: quantityBytes(fileStore.maxSize ?? fileStore.pvc.size) };
}

function streamCases(release: Release) {
  it('bounds both streams, and what JetStream reserves on each NATS node fits its store with a tenth to spare', () => {
    const { events, deliveries, single, replicas } = streamSettings(release.objects);
    const { nodes, store } = natsStore();
    // Unbounded, a stream grows until the volume is full, and IntakeStreamNearlyFull (bytes / max_bytes) is blind.
    expect({ events, deliveries, single }).toEqual({
      events: expect.any(Number),
      deliveries: expect.any(Number),
      single: undefined,
    });
    // JetStream reserves a stream's bound on every replica, each replica on a node of its own: with as many replicas
    // as nodes every node holds one replica of each stream (with fewer, one node may still hold both), so each node's
    // store must take the sum of the bounds.
    expect(replicas).toBeLessThanOrEqual(nodes);
    const reserved = events! + deliveries!;
    const headroom = store - reserved;
    expect({ reserved, headroom: headroom >= store / 10 }).toEqual({ reserved, headroom: true });
    expect(flat(section)).toContain(
      `each node reserves **${reserved / GiB} GiB** of its ${store / GiB} GiB store and keeps **${headroom / GiB} GiB**`,
    );
  });

  it('docs/scaling.md’s sizing example is recomputed from its rate, event size and volumes, and is the walk-through’s', () => {
    const scaling = flat(readFileSync(path.join(root, 'docs/scaling.md'), 'utf8'));
    const [rate, eventKiB, weekSeconds, weekGiB, volume] = numbersIn(
      scaling,
      /Seven days at (\d+) posts\/s of (\d+) KiB is \d+ × ([\d,]+) × \d+ KiB ≈ (\d+) GiB: that does not fit the (\d+) Gi volume/,
    ) as [number, number, number, number, number];
    const bytesPerSecond = rate * eventKiB * 1024;
    const weekBytes = bytesPerSecond * 7 * 86_400;
    expect({ weekSeconds, weekGiB, fits: weekBytes <= volume * GiB }).toEqual({
      weekSeconds: 7 * 86_400,
      weekGiB: Math.round(weekBytes / GiB),
      fits: false,
    });
    expect(scaling).toContain(`the deprecated single bound, which reserves 2 × ${weekGiB} GiB`);
    const [store, eventsGiB, events, deliveriesGiB, deliveries, reserved, headroom, kibPerSecond, days] = numbersIn(
      scaling,
      /On that volume \(a (\d+) GiB store\) the walk-through sets `nats.eventsMaxBytes` to (\d+) GiB \((\d+)\) and `nats.deliveriesMaxBytes` to (\d+) GiB \((\d+)\): (\d+) GiB reserved per node, (\d+) GiB of headroom, and the events window is \d+ GiB ÷ (\d+) KiB\/s ≈ ([\d.]+) days/,
    ) as number[];
    expect({ store, events, deliveries, reserved, headroom, kibPerSecond, days }).toEqual({
      store: volume,
      events: eventsGiB! * GiB,
      deliveries: deliveriesGiB! * GiB,
      reserved: eventsGiB! + deliveriesGiB!,
      headroom: volume - eventsGiB! - deliveriesGiB!,
      kibPerSecond: rate * eventKiB,
      days: Number(windowDays(events!, bytesPerSecond)),
    });
    expect(headroom).toBeGreaterThanOrEqual(store! / 10);
    // The full week: its events bound holds the week, and the volume keeps a tenth to spare.
    const [weekVolume, weekEvents, weekDeliveries] = numbersIn(
      scaling,
      /For the full 7 days, a (\d+) Gi volume with (\d+) GiB for events and (\d+) GiB for deliveries/,
    ) as [number, number, number];
    expect({
      holdsTheWeek: weekEvents * GiB >= weekBytes,
      spare: weekVolume - weekEvents - weekDeliveries >= weekVolume / 10,
    }).toEqual({ holdsTheWeek: true, spare: true });
    // The walk-through is that example: its NATS volume and its bounds, and the window it states.
    const settings = streamSettings(release.objects);
    expect([natsStore().store, settings.events, settings.deliveries]).toEqual([store! * GiB, events, deliveries]);
    expect(flat(section)).toContain(
      `At ${rate} posts/s of ${eventKiB} KiB the events stream then holds **${windowDays(events!, bytesPerSecond)} days**`,
    );
  });
}

type Deployment = K8sObject & {
  spec: {
    replicas?: number;
    strategy: { rollingUpdate: { maxSurge: number } };
    template: {
      spec: {
        containers: {
          env: { name: string; value?: string }[];
          resources: { requests: { cpu: string; memory: string } };
        }[];
      };
    };
  };
};
const millicores = (q: string) => (q.endsWith('m') ? Number(q.slice(0, -1)) : Number(q) * 1000);
const mebibytes = (q: string) => (q.endsWith('Gi') ? Number(q.slice(0, -2)) * 1024 : Number(q.replace(/Mi$/, '')));
const rounded = (n: number) => String(Math.round(n * 100) / 100);

/**
 * From the rendered release: per service its pods at least (its HPA's minReplicas, else its replicas) and at most (its
 * HPA's or KEDA's maximum, else its replicas), and from those the connections Postgres must take: every pod's pool
 * (PG_POOL_MAX) with a rolling update's surge, one LISTEN per pod of the services that publish events (their outbox
 * relays), and the migrations Job's pool.
 */
function releaseFigures(objects: K8sObject[]) {
  const deployments = objects.filter((o): o is Deployment => o.kind === 'Deployment');
  const scalers = objects.filter((o) => o.kind === 'HorizontalPodAutoscaler' || o.kind === 'ScaledObject');
  const names = ['ingest', 'management', 'delivery', 'usage'];
  const rows = names.map((name) => {
    const d = deployments.find((o) => o.metadata.name === `intake-${name}`) as Deployment;
    const scaler = scalers.find((s) => JSON.stringify(s.spec).includes(`"name":"intake-${name}"`))?.spec as
      { minReplicas?: number; maxReplicas?: number; minReplicaCount?: number; maxReplicaCount?: number } | undefined;
    const min = scaler ? (scaler.minReplicas ?? scaler.minReplicaCount ?? 1) : (d.spec.replicas ?? 1);
    const max = scaler ? (scaler.maxReplicas ?? scaler.maxReplicaCount ?? 1) : (d.spec.replicas ?? 1);
    const container = d.spec.template.spec.containers[0]!;
    const pool = Number(container.env.find((e) => e.name === 'PG_POOL_MAX')?.value);
    const source = readFileSync(path.join(root, `services/${name}/src/index.ts`), 'utf8');
    const listens = /publishesEvents:\s*true/.test(source) ? 1 : 0;
    const { cpu, memory } = container.resources.requests;
    return { name, min, max, surge: d.spec.strategy.rollingUpdate.maxSurge, pool, listens, cpu, memory };
  });
  const migrate = readFileSync(path.join(root, 'services/management/src/cli/migrate.ts'), 'utf8');
  const migratePool = Number(/poolMax: (\d+)/.exec(migrate)?.[1]);
  const connections = rows.reduce((sum, r) => sum + (r.max + r.surge) * (r.pool + r.listens), 0) + migratePool;
  const requests = (pods: (r: (typeof rows)[number]) => number) => ({
    cpu: rounded(rows.reduce((sum, r) => sum + pods(r) * millicores(r.cpu), 0) / 1000),
    memory: rounded(rows.reduce((sum, r) => sum + pods(r) * mebibytes(r.memory), 0) / 1024),
    pods: rows
      .map((r) => `${r.name} ${pods(r)}`)
      .join(', ')
      .replace(/, (usage \d+)$/, ', $1'),
  });
  return {
    connections,
    most: rows.map((r) => r.max + r.surge),
    podsSentence: `ingest ${rows[0]?.max}, management ${rows[1]?.max}, delivery ${rows[2]?.max} and usage ${rows[3]?.max} pods`,
    min: requests((r) => r.min),
    max: requests((r) => r.max),
  };
}
