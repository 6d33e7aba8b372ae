import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse, parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '@weft/core';
import { ensureGoTool } from './helpers/go-tool';
import { REPO_ROOT } from './helpers/paths';
import { KINDS, KUBERNETES_VERSION, SCHEMA_DIR, generate, schemaFileName } from './helm/k8s-schemas';

/**
 * deploy/helm/weft, checked with the two tools: `helm lint --strict`, and `helm template` with
 * the default and with non-default values, every rendered manifest validated by kubeconform
 * against the Kubernetes API schemas of test/helm/schemas (offline: made from k8s.io/api's
 * OpenAPI by test/helm/k8s-schemas.ts). Then what the chart must do, read off the manifests.
 * No cluster here: nothing is applied.
 */
const HELM_VERSION = 'v3.22.0';
const KUBECONFORM_VERSION = 'v0.8.0';
const CHART = join(REPO_ROOT, 'deploy', 'helm', 'weft');
const ROLES = ['gateway', 'writer', 'query', 'inference'] as const;

let helm = '';
let kubeconform = '';
const scratch = mkdtempSync(join(tmpdir(), 'weft-helm-'));
// helm keeps its own cache and config under these; the test leaves the user's alone.
const helmEnv = {
  ...process.env,
  HELM_CACHE_HOME: join(scratch, 'cache'),
  HELM_CONFIG_HOME: join(scratch, 'config'),
  HELM_DATA_HOME: join(scratch, 'data'),
};

interface Result {
  code: number;
  out: string;
  err: string;
}
async function exec(cmd: string, args: string[]): Promise<Result> {
  try {
    const { stdout, stderr } = await promisify(execFile)(cmd, args, { env: helmEnv, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, out: stdout, err: stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof x.code === 'number' ? x.code : 1, out: x.stdout ?? '', err: x.stderr ?? String(e) };
  }
}

function valuesFile(name: string, values: object): string {
  const file = join(scratch, `${name}.json`); // JSON is YAML: helm reads it as a values file
  writeFileSync(file, JSON.stringify(values));
  return file;
}

/** `helm template` for Kubernetes KUBERNETES_VERSION (the schemas' version). */
async function template(values: object = {}): Promise<Result> {
  return exec(helm, ['template', 'w', CHART, '--namespace', 'weft', '--kube-version', KUBERNETES_VERSION, '-f', valuesFile('v', values)]);
}

type Manifest = {
  kind: string;
  apiVersion: string;
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: any;
  data?: any;
  stringData?: any;
};
async function render(values: object = {}): Promise<{ text: string; docs: Manifest[] }> {
  const r = await template(values);
  expect(r.err.replace(/^.*found symbolic link in path.*\n/gm, '')).toBe('');
  expect(r.code).toBe(0);
  const docs = parseAllDocuments(r.out)
    .map((d) => d.toJS() as Manifest | null)
    .filter((d): d is Manifest => d !== null);
  return { text: r.out, docs };
}

const find = (docs: Manifest[], kind: string, name: string) => docs.find((d) => d.kind === kind && d.metadata.name === name);
const named = (docs: Manifest[], kind: string) => docs.filter((d) => d.kind === kind).map((d) => d.metadata.name);
const container = (d: Manifest) => d.spec.template.spec.containers[0];
const envOf = (d: Manifest): Record<string, any> => Object.fromEntries(container(d).env.map((e: any) => [e.name, e.valueFrom ?? e.value]));

/** kubeconform over a rendered stream, from the local schemas only; its JSON report. */
async function validate(
  manifests: string,
): Promise<{ code: number; resources: { kind: string; name: string; status: string; msg?: string }[]; summary: any }> {
  const file = join(scratch, 'manifests.yaml');
  writeFileSync(file, manifests);
  const r = await exec(kubeconform, [
    '-strict',
    '-summary',
    '-output',
    'json',
    '-schema-location',
    join(SCHEMA_DIR, '{{ .ResourceKind }}{{ .KindSuffix }}.json'),
    file,
  ]);
  const report = JSON.parse(r.out) as { resources?: any[]; summary: any };
  return { code: r.code, resources: report.resources ?? [], summary: report.summary };
}

const compose = parse(readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, { command?: string[] }>;
};

// Non-default values: everything the defaults leave off turned on or changed.
const FULL = {
  fullnameOverride: 'trace',
  image: { repository: 'registry.example.com/weft', tag: 'abc123', pullPolicy: 'Always' },
  imagePullSecrets: [{ name: 'regcred' }],
  clickhouse: { url: 'https://ch.example.com:8443', user: 'weft', database: 'traces', cluster: 'weft_cluster' },
  kafka: { brokers: 'k1:9092,k2:9092,k3:9092', topicPartitions: 24, replicationFactor: 3, topicPrefix: 'prod.' },
  secret: { existingSecret: 'weft-credentials', clickhousePasswordKey: 'ch-pass', bootstrapApiKeyKey: 'admin-key' },
  config: { LOG_LEVEL: 'warn', WEFT_BODY_LIMIT_BYTES: 67108864, WEFT_RETENTION_DAYS: 30, WEFT_INGEST_WORKERS: 'auto' },
  extraEnv: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=1536' }],
  gateway: { otlpGrpc: false, autoscaling: { enabled: true, minReplicas: 3, maxReplicas: 20, targetCPUUtilizationPercentage: 60 } },
  writer: { replicas: 6, env: { KAFKA_GROUP_ID: 'weft-writer-prod', LOG_LEVEL: 'debug' } },
  query: { replicas: 4, autoscaling: { enabled: false, minReplicas: 1, maxReplicas: 1, targetCPUUtilizationPercentage: 80 } },
  inference: {
    upstreams: { upstreams: [{ name: 'local', base_url: 'http://vllm:8000/v1', api_key_env: 'LOCAL_KEY', models: ['m'] }] },
    extraEnv: [{ name: 'LOCAL_KEY', valueFrom: { secretKeyRef: { name: 'model-keys', key: 'local' } } }],
    nodeSelector: { pool: 'inference' },
  },
  proxy: { clientMaxBodySize: '64m', service: { type: 'LoadBalancer', httpPort: 80, grpcPort: 4317, annotations: { a: 'b' } } },
  ingress: {
    enabled: true,
    className: 'nginx',
    annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': '64m' },
    hosts: ['weft.example.com'],
    tls: [{ hosts: ['weft.example.com'], secretName: 'weft-tls' }],
  },
};

let byDefault: { text: string; docs: Manifest[] };
let full: { text: string; docs: Manifest[] };

beforeAll(async () => {
  // First run on a machine: both build from the Go module proxy (helm takes minutes), then cached.
  [helm, kubeconform] = await Promise.all([
    ensureGoTool('helm.sh/helm/v3/cmd/helm', HELM_VERSION),
    ensureGoTool('github.com/yannh/kubeconform/cmd/kubeconform', KUBECONFORM_VERSION),
  ]);
  byDefault = await render();
  full = await render(FULL);
}, 1_800_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('helm lint --strict', () => {
  it('passes with the default values and with the non-default ones', async () => {
    for (const args of [[], ['-f', valuesFile('lint', FULL)]]) {
      const r = await exec(helm, ['lint', '--strict', '--kube-version', KUBERNETES_VERSION, CHART, ...args]);
      expect(r.out + r.err).toContain('1 chart(s) linted, 0 chart(s) failed');
      expect(r.code).toBe(0);
    }
  });
});

describe('as a new user runs it (issue 53, item 6)', () => {
  it('helm template and helm lint work with no --kube-version (a helm built by go install assumes Kubernetes 1.20), without warnings', async () => {
    const template = await exec(helm, ['template', 'w', CHART, '--namespace', 'weft']);
    expect(template.err).toBe('');
    expect(template.code).toBe(0);
    expect(template.out).toContain('kind: HorizontalPodAutoscaler');
    const lint = await exec(helm, ['lint', CHART]);
    expect(lint.out + lint.err).not.toMatch(/symbolic link|symlink|kubeVersion/i);
    expect(lint.code).toBe(0);
    // The same render as with the schemas' Kubernetes version.
    expect(template.out).toBe(
      (await exec(helm, ['template', 'w', CHART, '--namespace', 'weft', '--kube-version', KUBERNETES_VERSION])).out,
    );
  });
});

describe('rendered manifests against the Kubernetes API schemas (kubeconform, offline)', () => {
  it('are all valid, none skipped, with the default and the non-default values', async () => {
    for (const { text, docs } of [byDefault, full]) {
      const report = await validate(text);
      expect(report.resources.filter((r) => r.status !== 'statusValid')).toEqual([]);
      expect(report.summary).toMatchObject({ valid: docs.length, invalid: 0, errors: 0, skipped: 0 });
      expect(report.code).toBe(0);
    }
    // Between them the two renders use every kind there is a schema for.
    expect(new Set([...byDefault.docs, ...full.docs].map((d) => d.kind))).toEqual(new Set(Object.keys(KINDS)));
  });

  it('are rejected for a misspelt field, a wrong type, and a kind without a schema (the check itself works)', async () => {
    const misspelt = byDefault.text.replace('automountServiceAccountToken: false', 'automountServiceAcountToken: false');
    const wrongType = byDefault.text.replace(/containerPort: 6345/, 'containerPort: "http"');
    const noSchema = `${byDefault.text}\n---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: pdb}\nspec: {}\n`;
    const checks: [string, string, RegExp][] = [
      [misspelt, 'statusInvalid', /additional properties 'automountServiceAcountToken' not allowed/],
      [wrongType, 'statusInvalid', /containerPort': got string, want integer/],
      [noSchema, 'statusError', /could not find schema for PodDisruptionBudget/],
    ];
    for (const [text, status, msg] of checks) {
      const report = await validate(text);
      expect(report.code).not.toBe(0);
      expect(report.resources.filter((r) => r.status === status).map((r) => r.msg)).toEqual([expect.stringMatching(msg)]);
    }
  });

  it(
    'come from schemas that test/helm/k8s-schemas.ts makes from Kubernetes ' + KUBERNETES_VERSION + ' (no hand edits, none stale)',
    () => {
      // Downloads k8s.io/kubernetes from the Go module proxy (22 MB, once per machine).
      const fresh = join(scratch, 'schemas');
      const written = generate(fresh);
      expect(written).toEqual(
        Object.entries(KINDS)
          .map(([kind, [apiVersion]]) => schemaFileName(kind, apiVersion))
          .sort(),
      );
      for (const file of readdirSync(SCHEMA_DIR))
        expect(readFileSync(join(fresh, file), 'utf8'), file).toBe(readFileSync(join(SCHEMA_DIR, file), 'utf8'));
      expect(readdirSync(fresh).sort()).toEqual(readdirSync(SCHEMA_DIR).sort());
    },
    600_000,
  );
});

describe('the default release', () => {
  it('runs each role as a Deployment of the one image with the main docker-compose.yml runs, probed on /health and /ready', () => {
    const { docs } = byDefault;
    expect(named(docs, 'Deployment').sort()).toEqual([
      'w-weft-gateway',
      'w-weft-inference',
      'w-weft-proxy',
      'w-weft-query',
      'w-weft-writer',
    ]);
    for (const role of ROLES) {
      const d = find(docs, 'Deployment', `w-weft-${role}`)!;
      const c = container(d);
      expect(c.image).toBe('weft:0.1.0');
      expect(c.command).toEqual(compose.services[role]!.command);
      const http = c.ports.find((p: any) => p.name === 'http');
      expect(http.containerPort).toBe(6345);
      expect(c.livenessProbe.httpGet).toEqual({ path: '/health', port: 'http' });
      expect(c.readinessProbe.httpGet).toEqual({ path: '/ready', port: 'http' });
      // The port opens only after the schema wait and Kafka's start-up: a startup probe covers it.
      expect(c.startupProbe.httpGet).toEqual({ path: '/health', port: 'http' });
      expect(c.startupProbe.periodSeconds * c.startupProbe.failureThreshold).toBeGreaterThanOrEqual(120 + 300);
      const selector = d.spec.selector.matchLabels;
      const service = find(docs, 'Service', `w-weft-${role}`)!;
      expect(service.spec.selector).toEqual(selector);
      expect(d.spec.template.metadata.labels).toMatchObject(selector);
    }
  });

  it('gives every service the distributed mode: Kafka bus, the external ClickHouse, the schema waited for', () => {
    const { docs } = byDefault;
    const secret = find(docs, 'Secret', 'w-weft')!;
    for (const role of ROLES) {
      const d = find(docs, 'Deployment', `w-weft-${role}`)!;
      const env = envOf(d);
      expect(env).toMatchObject({
        WEFT_BUS: 'kafka',
        KAFKA_BROKERS: 'kafka:9092',
        CLICKHOUSE_URL: 'http://clickhouse:8123',
        WEFT_MIGRATE: 'wait',
        PORT: '6345',
      });
      expect(env.CLICKHOUSE_PASSWORD).toEqual({ secretKeyRef: { name: 'w-weft', key: 'clickhouse-password' } });
      expect(Object.keys(secret.stringData)).toContain('clickhouse-password');
      const names = container(d).env.map((e: any) => e.name);
      expect(names.length, `${role}: an env name set twice`).toBe(new Set(names).size);
      // Every variable the chart sets is one weft reads (a misspelt name would be silently ignored).
      expect(names.filter((n: string) => !(n in configSchema.shape))).toEqual([]);
    }
    expect(envOf(find(docs, 'Deployment', 'w-weft-writer')!).KAFKA_GROUP_ID).toBe('weft-writer');
    expect(envOf(find(docs, 'Deployment', 'w-weft-gateway')!)).toMatchObject({
      WEFT_OTLP_GRPC_PORT: '4317',
      WEFT_BOOTSTRAP_API_KEY: { secretKeyRef: { name: 'w-weft', key: 'bootstrap-api-key', optional: true } },
    });
  });

  it('migrates in a pre-install/pre-upgrade hook Job running `weft migrate`, after the Secret it reads', () => {
    const { docs } = byDefault;
    const job = find(docs, 'Job', 'w-weft-migrate')!;
    expect(job.metadata.annotations!['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(container(job).command).toEqual(compose.services.migrate!.command);
    expect(envOf(job)).toMatchObject({
      WEFT_BUS: 'kafka',
      CLICKHOUSE_URL: 'http://clickhouse:8123',
      CLICKHOUSE_PASSWORD: { secretKeyRef: { name: 'w-weft' } },
    });
    expect(envOf(job).WEFT_MIGRATE).toBeUndefined();
    // A hook runs before the release's own resources exist: the Secret is a hook too, made first.
    const secret = find(docs, 'Secret', 'w-weft')!;
    expect(secret.metadata.annotations!['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(Number(secret.metadata.annotations!['helm.sh/hook-weight'])).toBeLessThan(
      Number(job.metadata.annotations!['helm.sh/hook-weight']),
    );
  });

  it('autoscales the gateway and the query service, and leaves their replica count to the HPA', () => {
    const { docs } = byDefault;
    const hpas = docs.filter((d) => d.kind === 'HorizontalPodAutoscaler');
    expect(hpas.map((h) => h.spec.scaleTargetRef)).toEqual([
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'w-weft-gateway' },
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'w-weft-query' },
    ]);
    for (const h of hpas) {
      const target = find(docs, 'Deployment', h.spec.scaleTargetRef.name)!;
      expect(target.spec.replicas).toBeUndefined();
      expect(container(target).resources.requests.cpu).toBeDefined();
    }
    expect(find(docs, 'Deployment', 'w-weft-writer')!.spec.replicas).toBe(2);
  });

  it("fronts the services with deploy/nginx/nginx.conf's own route table, its upstreams pointed at the release's Services", () => {
    const { docs } = byDefault;
    const conf: string = find(docs, 'ConfigMap', 'w-weft-proxy')!.data['nginx.conf'];
    const original = readFileSync(join(REPO_ROOT, 'deploy', 'nginx', 'nginx.conf'), 'utf8');
    const locations = (s: string) => s.split('\n').filter((l) => /^\s*location\b/.test(l));
    expect(locations(conf)).toEqual(locations(original));
    expect(locations(conf).length).toBeGreaterThan(60);
    const upstreams = [...conf.matchAll(/^\s*upstream (\w+) \{ server ([\w.-]+):(\d+);/gm)].map((m) => [m[1], m[2], Number(m[3])]);
    expect(upstreams.map((u) => u[0])).toEqual(['gateway', 'query', 'inference', 'gateway_grpc']);
    for (const [, host, port] of upstreams) {
      const service = find(docs, 'Service', host as string);
      expect(service, `upstream host ${host}`).toBeDefined();
      expect(service!.spec.ports.map((p: any) => p.port)).toContain(port);
    }
    const proxy = find(docs, 'Deployment', 'w-weft-proxy')!;
    expect(container(proxy).volumeMounts).toContainEqual(
      expect.objectContaining({ mountPath: '/etc/nginx/nginx.conf', subPath: 'nginx.conf' }),
    );
    expect(find(docs, 'Service', 'w-weft-proxy')!.spec.ports.map((p: any) => p.port)).toEqual([6345, 4317]);
    expect(named(docs, 'Ingress')).toEqual([]);
  });

  it("lets `config` set exactly weft's variables that the chart does not set itself (values.schema.json)", () => {
    const schema = JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8'));
    const settable: string[] = schema.definitions.config.propertyNames.enum;
    // Set by the chart from its own values, or meaningless in this mode (WEFT_ROLES, WEFT_DATA_DIR, HOST).
    const managed = [
      'PORT',
      'HOST',
      'CLICKHOUSE_URL',
      'CLICKHOUSE_USER',
      'CLICKHOUSE_PASSWORD',
      'CLICKHOUSE_DATABASE',
      'CLICKHOUSE_CLUSTER',
    ];
    managed.push(
      'WEFT_DATA_DIR',
      'WEFT_MIGRATE',
      'WEFT_BUS',
      'KAFKA_BROKERS',
      'KAFKA_TOPIC_PARTITIONS',
      'KAFKA_REPLICATION_FACTOR',
      'KAFKA_TOPIC_PREFIX',
    );
    managed.push('WEFT_BOOTSTRAP_API_KEY', 'WEFT_OTLP_GRPC_PORT', 'WEFT_UPSTREAMS_FILE', 'WEFT_ROLES');
    // A variable added to libs/core/src/config.ts needs its place here and in the schema's enum.
    expect([...settable, ...managed].sort()).toEqual(Object.keys(configSchema.shape).sort());
    expect(settable.filter((v) => managed.includes(v))).toEqual([]);
  });
});

describe('non-default values', () => {
  it('use an existing Secret (none rendered), a ClickHouse cluster, a topic prefix, and config as exact strings', () => {
    const { docs } = full;
    expect(named(docs, 'Secret')).toEqual([]);
    for (const role of ROLES) {
      const env = envOf(find(docs, 'Deployment', `trace-${role}`)!);
      expect(env.CLICKHOUSE_PASSWORD).toEqual({ secretKeyRef: { name: 'weft-credentials', key: 'ch-pass' } });
      expect(env).toMatchObject({
        CLICKHOUSE_CLUSTER: 'weft_cluster',
        CLICKHOUSE_DATABASE: 'traces',
        KAFKA_TOPIC_PREFIX: 'prod.',
        KAFKA_TOPIC_PARTITIONS: '24',
      });
      // Helm reads 67108864 as a float: it must still reach the process as "67108864", not "6.7108864e+07".
      expect(env).toMatchObject({
        WEFT_BODY_LIMIT_BYTES: '67108864',
        WEFT_RETENTION_DAYS: '30',
        NODE_OPTIONS: '--max-old-space-size=1536',
      });
      expect(container(find(docs, 'Deployment', `trace-${role}`)!).image).toBe('registry.example.com/weft:abc123');
    }
    // A role's env wins over the shared config.
    expect(envOf(find(docs, 'Deployment', 'trace-writer')!)).toMatchObject({ LOG_LEVEL: 'debug', KAFKA_GROUP_ID: 'weft-writer-prod' });
    expect(envOf(find(docs, 'Deployment', 'trace-query')!).LOG_LEVEL).toBe('warn');
    expect(envOf(find(docs, 'Deployment', 'trace-gateway')!).WEFT_BOOTSTRAP_API_KEY).toEqual({
      secretKeyRef: { name: 'weft-credentials', key: 'admin-key', optional: true },
    });
  });

  it('turn off the gRPC receiver and the query HPA, mount the upstreams file, and route an Ingress to the proxy', () => {
    const { docs } = full;
    const gateway = find(docs, 'Deployment', 'trace-gateway')!;
    expect(envOf(gateway).WEFT_OTLP_GRPC_PORT).toBe('off');
    expect(container(gateway).ports.map((p: any) => p.name)).toEqual(['http']);
    expect(docs.filter((d) => d.kind === 'HorizontalPodAutoscaler').map((h) => h.spec.scaleTargetRef.name)).toEqual(['trace-gateway']);
    expect(find(docs, 'Deployment', 'trace-query')!.spec.replicas).toBe(4);

    const inference = find(docs, 'Deployment', 'trace-inference')!;
    const file: string = envOf(inference).WEFT_UPSTREAMS_FILE;
    const mount = container(inference).volumeMounts.find((m: any) => file.startsWith(`${m.mountPath}/`));
    const volume = inference.spec.template.spec.volumes.find((v: any) => v.name === mount.name);
    const upstreams = find(docs, 'ConfigMap', volume.configMap.name)!;
    expect(JSON.parse(upstreams.data[file.slice(mount.mountPath.length + 1)])).toEqual(FULL.inference.upstreams);
    expect(envOf(inference).LOCAL_KEY).toEqual({ secretKeyRef: { name: 'model-keys', key: 'local' } });

    const ingress = find(docs, 'Ingress', 'trace')!;
    expect(ingress.spec.rules[0].http.paths).toEqual([
      { path: '/', pathType: 'Prefix', backend: { service: { name: 'trace-proxy', port: { name: 'http' } } } },
    ]);
    expect(find(docs, 'Service', 'trace-proxy')!.spec.ports).toContainEqual(expect.objectContaining({ name: 'http', port: 80 }));
    expect(find(docs, 'ConfigMap', 'trace-proxy')!.data['nginx.conf']).toContain('client_max_body_size 64m;');
  });
});

describe('refused values', () => {
  it('are refused with a message naming the problem', async () => {
    const cases: [object, RegExp][] = [
      [{ config: { KAFKA_BROKER: 'x:9092' } }, /KAFKA_BROKER/], // a misspelt variable
      [{ config: { KAFKA_BROKERS: 'x:9092' } }, /KAFKA_BROKERS/], // the chart's own: kafka.brokers
      [{ clickhouse: { url: 'clickhouse:8123' } }, /url/],
      [{ gateway: { replicas: 'two' } }, /replicas/],
      [{ writer: { replicas: 13 } }, /writer.replicas \(13\) is above kafka.topicPartitions \(12\)/],
      [{ ingress: { enabled: true }, proxy: { enabled: false } }, /ingress.enabled needs proxy.enabled/],
      [{ query: { resources: { requests: { cpu: null } } } }, /query.autoscaling needs query.resources.requests.cpu/],
    ];
    for (const [values, message] of cases) {
      const r = await template(values);
      expect(r.code, JSON.stringify(values)).not.toBe(0);
      expect(r.err).toMatch(message);
    }
  });
});
