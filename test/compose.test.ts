import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { endpoints, extraEndpoints } from '@weft/api';
import { configSchema, loadConfig } from '@weft/core';
import { serverEntries } from '../scripts/build';
import { REPO_ROOT } from './helpers/paths';

// No Docker engine here: the distributed deployment is checked as data.
interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: unknown;
  volumes?: string[];
  ports?: string[];
}
const compose = parse(readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
};
// The long-running weft services (the `migrate` one-shot is built from the same image too).
const weftServices = Object.entries(compose.services).filter(([name, s]) => s.build !== undefined && name !== 'migrate');

/** `location = /path { proxy_pass http://service; }` lines of the front proxy. */
function proxyRoutes(): Map<string, string> {
  const conf = readFileSync(join(REPO_ROOT, 'deploy', 'nginx', 'nginx.conf'), 'utf8');
  const routes = new Map<string, string>();
  for (const m of conf.matchAll(/location\s+=\s+(\S+)\s*\{\s*proxy_pass\s+http:\/\/([\w-]+);/g)) routes.set(m[1]!, m[2]!);
  return routes;
}

describe('docker-compose.yml', () => {
  it('runs the four services from the one image, each its compiled main (built from an existing main)', () => {
    expect(weftServices.map(([name]) => name).sort()).toEqual(['gateway', 'inference', 'query', 'writer']);
    for (const [name, s] of weftServices) {
      expect(s.command).toEqual(['node', `dist/${name}.mjs`]);
      const main = serverEntries[name as keyof typeof serverEntries];
      expect(main).toBe(`services/${name}/src/main.ts`);
      expect(existsSync(join(REPO_ROOT, main))).toBe(true);
    }
  });

  it('migrates once: a one-shot `weft migrate` the services wait for, and they only wait', () => {
    const s = compose.services;
    expect(s.migrate!.build).toBeDefined();
    expect(s.migrate!.command).toEqual(['node', 'dist/cli.mjs', 'migrate']);
    expect(serverEntries.cli).toBe('services/cli/src/main.ts');
    expect(s.migrate!.depends_on).toMatchObject({ clickhouse: { condition: 'service_healthy' } });
    for (const [name, svc] of weftServices) {
      expect(svc.depends_on, name).toMatchObject({ migrate: { condition: 'service_completed_successfully' } });
      expect(loadConfig(svc.environment ?? {}).WEFT_MIGRATE, name).toBe('wait');
    }
  });

  it('gives every service an environment the configuration schema accepts, with no unknown variable', () => {
    const known = new Set(Object.keys(configSchema.shape));
    for (const [name, s] of weftServices) {
      const env = s.environment ?? {};
      expect(
        Object.keys(env).filter((k) => !known.has(k)),
        name,
      ).toEqual([]);
      const config = loadConfig(env);
      expect(config.CLICKHOUSE_URL, name).toBe('http://clickhouse:8123');
      if (name === 'gateway' || name === 'writer') {
        expect(config.WEFT_BUS, name).toBe('kafka');
        expect(config.KAFKA_BROKERS, name).toBe('kafka:9092');
      }
    }
  });

  it('starts things in dependency order, with health checks and named volumes', () => {
    const s = compose.services;
    expect(s.kafka!.image).toMatch(/^apache\/kafka:/);
    expect(s.kafka!.environment!.KAFKA_PROCESS_ROLES).toBe('broker,controller');
    expect(s.clickhouse!.image).toMatch(/^clickhouse\/clickhouse-server:/);
    expect(s.clickhouse!.volumes).toContain('./deploy/clickhouse/weft.xml:/etc/clickhouse-server/config.d/weft.xml:ro');
    for (const name of Object.keys(s)) if (name !== 'migrate') expect(s[name]!.healthcheck, name).toBeDefined();
    // Healthy = ready: every dependency of the service answers.
    for (const [name, svc] of weftServices) expect(JSON.stringify(svc.healthcheck), name).toContain('/ready');
    for (const name of ['gateway', 'writer']) {
      expect(s[name]!.depends_on).toMatchObject({ kafka: { condition: 'service_healthy' }, clickhouse: { condition: 'service_healthy' } });
    }
    expect(Object.keys(s.proxy!.depends_on!).sort()).toEqual(['gateway', 'inference', 'query', 'writer']);
    expect(Object.keys(compose.volumes).sort()).toEqual(['clickhouse-data', 'kafka-data']);
    expect(s.kafka!.volumes).toContain('kafka-data:/var/lib/kafka/data');
  });

  it('routes all 20 paths of the interface to the service that owns them, on one port', () => {
    const routes = proxyRoutes();
    const specs = Object.values(endpoints);
    expect(specs).toHaveLength(20);
    for (const spec of specs) expect(routes.get(spec.path), spec.path).toBe(spec.service);
    // Only weft services are proxied to, and every one of them has an upstream.
    const conf = readFileSync(join(REPO_ROOT, 'deploy', 'nginx', 'nginx.conf'), 'utf8');
    for (const service of new Set(routes.values())) {
      expect(compose.services[service], service).toBeDefined();
      expect(conf).toMatch(new RegExp(`upstream ${service} \\{ server ${service}:6345;`));
    }
    // One HTTP port; the other published port is OTLP/gRPC (next test).
    expect(compose.services.proxy!.ports).toEqual(['6345:80', '4317:4317']);
  });

  it('sends the web UI (page and assets) to the query service', () => {
    expect(proxyRoutes().get('/')).toBe('query');
    const conf = readFileSync(join(REPO_ROOT, 'deploy', 'nginx', 'nginx.conf'), 'utf8');
    expect(conf).toMatch(/location \/ui\/ \{ proxy_pass http:\/\/query; \}/);
  });

  it('routes the extra endpoints to the service that owns them', () => {
    const routes = proxyRoutes();
    const conf = readFileSync(join(REPO_ROOT, 'deploy', 'nginx', 'nginx.conf'), 'utf8');
    // Paths with parameters (/v2/{entity}/{project}/…) go by a regex location.
    const prefixRoutes = [...conf.matchAll(/location\s+(\/\S*)\s*\{\s*proxy_pass\s+http:\/\/([\w-]+);/g)].map(
      (m) => [m[1]!, m[2]!] as const,
    );
    const regexRoutes = [...conf.matchAll(/location\s+~\s+(\S+)\s*\{\s*proxy_pass\s+http:\/\/([\w-]+);/g)].map(
      (m) => [new RegExp(m[1]!), m[2]!] as const,
    );
    for (const spec of Object.values(extraEndpoints) as { path: string; service: string; aliases?: readonly string[] }[]) {
      for (const path of [spec.path, ...(spec.aliases ?? [])]) {
        // An exact location, else a regex one (paths with parameters), else the longest prefix one.
        const example = path.replace(/:[a-z_]+/g, 'x');
        const prefix = prefixRoutes.filter(([pre]) => example.startsWith(pre)).sort((a, b) => b[0].length - a[0].length)[0];
        const owner = routes.get(path) ?? regexRoutes.find(([re]) => re.test(example))?.[1] ?? prefix?.[1];
        expect(owner, path).toBe(spec.service);
      }
    }
    for (const path of ['/graphql', '/file/create', '/files/create', '/agents/otel/v1/traces'])
      expect(routes.get(path), path).toBe('gateway');
  });

  it('publishes OTLP/gRPC on 4317 and passes it to the gateway’s receiver, /v1 to inference', () => {
    const conf = readFileSync(join(REPO_ROOT, 'deploy', 'nginx', 'nginx.conf'), 'utf8');
    expect(compose.services.proxy!.ports).toContain('4317:4317');
    expect(conf).toMatch(/upstream gateway_grpc \{ server gateway:(\d+);/);
    const port = /upstream gateway_grpc \{ server gateway:(\d+);/.exec(conf)![1];
    expect(compose.services.gateway!.environment!.WEFT_OTLP_GRPC_PORT).toBe(port);
    expect(conf).toMatch(/listen 4317 http2;[^}]*location \/ \{ grpc_pass grpc:\/\/gateway_grpc; \}/s);
    expect(conf).toMatch(/location \/v1\/ \{ proxy_pass http:\/\/inference; \}/);
  });
});

describe('Dockerfile', () => {
  const lines = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.trimStart().startsWith('#'));
  const froms = lines.filter((l) => /^FROM\s/.test(l));

  it('builds in stages on a supported Node LTS, from the lockfile only', () => {
    expect(froms.length).toBeGreaterThanOrEqual(2);
    // A stage may start from an earlier one (FROM sources AS build); every image is a Node LTS.
    const stages = froms.map((f) => /\bAS (\w+)$/i.exec(f)?.[1]).filter(Boolean);
    for (const from of froms.filter((f) => !stages.includes(f.split(/\s+/)[1]))) {
      const major = Number(/node:(\d+)/.exec(from)?.[1]);
      // Even majors are the LTS lines; 20 reached its end of life in 2026.
      expect(major % 2, from).toBe(0);
      expect(major, from).toBeGreaterThanOrEqual(22);
    }
    const runs = lines.filter((l) => /^RUN\s/.test(l)).join('\n');
    expect(runs).toMatch(/npm ci --omit=dev/);
    expect(runs).not.toMatch(/npm (install|i)\b/);
    // The image runs the compiled build: tsx and esbuild only build it, as dev dependencies.
    expect(runs).toMatch(/npm run build/);
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(pkg.dependencies.tsx).toBeUndefined();
    expect(pkg.dependencies.esbuild).toBeUndefined();
  });

  it('runs the compiled all-in-one, with the build of the build stage', () => {
    const finalStage = lines.slice(lines.lastIndexOf(froms.at(-1)!));
    expect(finalStage.find((l) => /^CMD\s/.test(l))).toBe('CMD ["node", "dist/all-in-one.mjs"]');
    expect(finalStage.some((l) => /^COPY --from=build\b.*\/app\/dist \/app\/dist$/.test(l))).toBe(true);
    expect(serverEntries['all-in-one']).toBe('services/all-in-one/src/main.ts');
  });

  it('keeps the harness (tools/) out of the runtime image: only the build stage has it', () => {
    const stageOf = (name: string) => {
      const from = froms.findIndex((f) => new RegExp(`\\bAS ${name}$`, 'i').test(f));
      const start = lines.indexOf(froms[from]!);
      return lines.slice(start, from + 1 < froms.length ? lines.indexOf(froms[from + 1]!) : lines.length);
    };
    for (const stage of ['sources', 'deps'])
      expect(
        stageOf(stage).filter((l) => /^COPY\b.*\btools\b/.test(l)),
        stage,
      ).toEqual([]);
    expect(stageOf('build').some((l) => /^COPY tools /.test(l))).toBe(true);
  });

  it('runs as an unprivileged user', () => {
    const finalStage = lines.slice(lines.lastIndexOf(froms.at(-1)!));
    const user = finalStage.filter((l) => /^USER\s/.test(l)).at(-1);
    expect(user).toBeDefined();
    expect(user).not.toMatch(/\broot\b|\s0$/);
  });
});
