import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import { parse, parseAllDocuments } from 'yaml';

const root = path.resolve(__dirname, '../..');
const chart = path.join(root, 'deploy/helm/intake');
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

describe('Helm chart deploy/helm/intake', () => {
  const values = parse(read('deploy/helm/intake/values.yaml'));
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

  it('runs the migrations as a pre-install/pre-upgrade hook Job with the migrate entry point that tsc builds', () => {
    const job = read('deploy/helm/intake/templates/migrations-job.yaml');
    expect(job).toContain('helm.sh/hook: pre-install,pre-upgrade');
    const command = /command: \["node", "([^"]+)"\]/.exec(job)?.[1] as string;
    expect(command).toBe('services/management/dist/cli/migrate.js');
    expect(allFiles(path.join(root, 'services/management/dist')).map((f) => path.relative(root, f))).toContain(command);
  });
});
