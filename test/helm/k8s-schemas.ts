import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The Kubernetes API schemas the chart's rendered manifests are validated against (offline, by
 * kubeconform), made from the OpenAPI v3 documents that Kubernetes generates from the k8s.io/api
 * Go types (api/openapi-spec/v3 of the k8s.io/kubernetes module, fetched from the Go module
 * proxy with `go mod download`). One standalone, strict JSON schema per kind the chart renders,
 * named as kubeconform's `-schema-location …/{{ .ResourceKind }}{{ .KindSuffix }}.json` looks for it.
 *
 * Refresh (docs/kubernetes.md): bump KUBERNETES_VERSION, run `npx tsx test/helm/k8s-schemas.ts`,
 * commit test/helm/schemas/. A new kind in the chart needs a line in KINDS.
 */
export const KUBERNETES_VERSION = '1.37.2';
export const SCHEMA_DIR = join(import.meta.dirname, 'schemas');

/** kind → [apiVersion, the OpenAPI v3 document that defines it, its component name]. */
export const KINDS: Record<string, [string, string, string]> = {
  ConfigMap: ['v1', 'api__v1_openapi.json', 'io.k8s.api.core.v1.ConfigMap'],
  Secret: ['v1', 'api__v1_openapi.json', 'io.k8s.api.core.v1.Secret'],
  Service: ['v1', 'api__v1_openapi.json', 'io.k8s.api.core.v1.Service'],
  Deployment: ['apps/v1', 'apis__apps__v1_openapi.json', 'io.k8s.api.apps.v1.Deployment'],
  Job: ['batch/v1', 'apis__batch__v1_openapi.json', 'io.k8s.api.batch.v1.Job'],
  HorizontalPodAutoscaler: ['autoscaling/v2', 'apis__autoscaling__v2_openapi.json', 'io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler'],
  Ingress: ['networking.k8s.io/v1', 'apis__networking.k8s.io__v1_openapi.json', 'io.k8s.api.networking.v1.Ingress'],
};

/** kubeconform's file name for a kind: lower-case kind, the group's first label, the version. */
export function schemaFileName(kind: string, apiVersion: string): string {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : [apiVersion, undefined];
  return `${kind.toLowerCase()}-${group!.split('.')[0]!.toLowerCase()}${version ? `-${version}` : ''}.json`;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };
const isObj = (v: Json | undefined): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A component schema with every $ref inlined (kubeconform compiles one file per kind), made
 * strict (`additionalProperties: false` wherever properties are listed, so a misspelt field
 * fails) and without what JSON Schema does not read (descriptions, defaults, x-kubernetes-*).
 */
export function standalone(components: Obj, name: string): Obj {
  const inline = (node: Json, path: string[]): Json => {
    if (Array.isArray(node)) return node.map((n) => inline(n, path));
    if (!isObj(node)) return node;
    const out: Obj = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === 'description' || k === 'default' || k.startsWith('x-kubernetes-')) continue;
      if (k === '$ref') {
        const target = String(v).replace('#/components/schemas/', '');
        // No kind the chart renders is recursive; a cycle would never end, so say so.
        if (path.includes(target)) throw new Error(`recursive schema ${[...path, target].join(' → ')}`);
        const resolved = components[target];
        if (!isObj(resolved)) throw new Error(`unresolved $ref ${String(v)}`);
        Object.assign(out, inline(resolved, [...path, target]));
        continue;
      }
      // Within `properties` the keys are field names, not keywords: keep them all.
      out[k] =
        k === 'properties' && isObj(v) ? Object.fromEntries(Object.entries(v).map(([f, s]) => [f, inline(s, path)])) : inline(v, path);
    }
    if (out.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
    delete out.nullable;
    if (isObj(out.properties) && out.additionalProperties === undefined) out.additionalProperties = false;
    return out;
  };
  return inline(components[name]!, [name]) as Obj;
}

/** The k8s.io/kubernetes module's openapi-spec/v3 directory (downloaded into the Go module cache). */
function specDir(): string {
  const out = execFileSync('go', ['mod', 'download', '-json', `k8s.io/kubernetes@v${KUBERNETES_VERSION}`], { encoding: 'utf8' });
  return join((JSON.parse(out) as { Dir: string }).Dir, 'api', 'openapi-spec', 'v3');
}

export function generate(outDir = SCHEMA_DIR, dir = specDir()): string[] {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const written: string[] = [];
  for (const [kind, [apiVersion, file, name]] of Object.entries(KINDS)) {
    const components = (JSON.parse(readFileSync(join(dir, file), 'utf8')) as { components: { schemas: Obj } }).components.schemas;
    const schema = standalone(components, name);
    // A document of another kind or version fails even where the shapes agree.
    const props = schema.properties as Obj;
    props.kind = { type: 'string', enum: [kind] };
    props.apiVersion = { type: 'string', enum: [apiVersion] };
    const fileName = schemaFileName(kind, apiVersion);
    writeFileSync(join(outDir, fileName), `${JSON.stringify({ $schema: 'http://json-schema.org/schema#', ...schema }, null, 1)}\n`);
    written.push(fileName);
  }
  writeFileSync(
    join(outDir, 'SOURCE.json'),
    `${JSON.stringify({ kubernetes: `v${KUBERNETES_VERSION}`, from: 'k8s.io/kubernetes api/openapi-spec/v3', generator: 'test/helm/k8s-schemas.ts', kinds: Object.keys(KINDS) }, null, 2)}\n`,
  );
  return written.sort();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const written = generate();
  console.log(
    `wrote ${written.length} schemas (Kubernetes v${KUBERNETES_VERSION}) to ${SCHEMA_DIR}: ${readdirSync(SCHEMA_DIR).join(', ')}`,
  );
}
