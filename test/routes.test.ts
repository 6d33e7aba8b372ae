import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiPath, ROUTE_TAGS, routeSpecs } from '@weft/api';
import { createLogger, loadConfig } from '@weft/core';
import type { Weft } from '@weft/runtime';
import { createWeft } from '../services/all-in-one/src/app';
import { nginxLocations, routeTablePaths, withLocations } from '../scripts/nginx-locations';
import { REPO_ROOT } from './helpers/paths';
import { newDataDir } from './helpers/server';

// The distributed mode's front proxy must send every route a service registers to that service:
// the routes are taken from the real composition (all four roles, in this process), not a list.
let weft: Weft;
beforeAll(async () => {
  const config = loadConfig({ WEFT_DATA_DIR: newDataDir('routes'), LOG_LEVEL: 'silent', WEFT_OTLP_GRPC_PORT: '0' });
  weft = await createWeft(config, createLogger('silent', { mode: 'test' }));
});
afterAll(async () => {
  await weft?.close();
});

/**
 * nginx's choice for a path: the exact `location =` match, else the first regex location
 * (`~`) that matches, else the longest prefix location. Route parameters (`:entity`) stand for
 * one path segment.
 */
function proxiedTo(conf: string, route: string): string | null {
  const path = route.replace(/:[^/]+/g, 'x');
  const exact = new Map<string, string>();
  const regexes: [RegExp, string][] = [];
  const prefixes: [string, string][] = [];
  for (const m of conf.matchAll(/location\s+(=\s+|~\s+)?(\S+)\s*\{\s*proxy_pass\s+http:\/\/([\w-]+);/g)) {
    const [, modifier, loc, upstream] = m as unknown as [string, string | undefined, string, string];
    if (modifier?.trim() === '=') exact.set(loc, upstream);
    else if (modifier?.trim() === '~') regexes.push([new RegExp(loc), upstream]);
    else prefixes.push([loc, upstream]);
  }
  const hit =
    exact.get(path) ??
    regexes.find(([re]) => re.test(path))?.[1] ??
    prefixes.filter(([loc]) => path.startsWith(loc)).sort((a, b) => b[0].length - a[0].length)[0]?.[1];
  return hit ?? null;
}

describe('routes', () => {
  it('the front proxy sends every registered route to the service that registered it', () => {
    const conf = readFileSync(join(REPO_ROOT, 'deploy', 'nginx', 'nginx.conf'), 'utf8');
    expect(weft.routes.length).toBeGreaterThan(20);
    const wrong = weft.routes
      .filter((r) => proxiedTo(conf, r.url) !== r.role)
      .map((r) => `${r.method} ${r.url} (${r.role}) → ${proxiedTo(conf, r.url)}`);
    expect(wrong).toEqual([]);
  });

  it('the front proxy holds the locations the route table generates (npm run gen:nginx)', () => {
    const conf = readFileSync(join(REPO_ROOT, 'deploy', 'nginx', 'nginx.conf'), 'utf8');
    expect(withLocations(conf, nginxLocations(weft.routes, routeTablePaths()))).toBe(conf);
  });

  it('every route of the registry is served, by the service its spec names', () => {
    for (const spec of Object.values(routeSpecs)) {
      const method = 'method' in spec ? spec.method : 'POST';
      const served = weft.routes.filter((r) => r.url === spec.path && r.method === method);
      expect(
        served.map((r) => r.role),
        spec.path,
      ).toEqual([spec.service]);
    }
  });

  it('/openapi.json and /docs list every registered route, each in one group of /docs', async () => {
    type Operation = { tags: string[]; summary: string };
    const doc = (await weft.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      tags: { name: string }[];
      paths: Record<string, Record<string, Operation>>;
    };
    const listed = new Set(Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`)));
    const registered = weft.routes.filter((r) => r.method !== 'HEAD').map((r) => `${r.method} ${openApiPath(r.url)}`);
    expect(registered.length).toBeGreaterThan(50);
    expect(registered.filter((r) => !listed.has(r))).toEqual([]);
    // The shell's own routes too.
    for (const r of ['GET /health', 'GET /ready', 'GET /metrics', 'GET /openapi.json', 'GET /server_info']) expect(listed, r).toContain(r);

    const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([m, op]) => ({ at: `${m} ${path}`, ...op })),
    );
    const groups = Object.keys(ROUTE_TAGS).filter((t) => t !== 'undocumented');
    expect(operations.filter((op) => op.tags.length !== 1 || !groups.includes(op.tags[0]!)).map((op) => `${op.at} ${op.tags}`)).toEqual([]);
    expect(operations.filter((op) => !op.summary).map((op) => op.at)).toEqual([]);
    expect(doc.tags.map((t) => t.name)).toEqual(groups.filter((g) => operations.some((op) => op.tags[0] === g)));
    expect(doc.paths['/v1/traces']?.post?.tags).toEqual(['otlp']);
    expect(doc.paths['/v1/models/{path}']?.get?.tags).toEqual(['openai']);

    // Swagger UI shows this very document.
    expect((await weft.app.inject({ method: 'GET', url: '/docs/json' })).json()).toEqual(doc);
    const page = await weft.app.inject({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<html');
  });

  it('a route missing from the proxy is found', () => {
    const conf = readFileSync(join(REPO_ROOT, 'deploy', 'nginx', 'nginx.conf'), 'utf8').replace(
      /\s*location = \/cost\/create \{[^}]*\}/,
      '',
    );
    expect(proxiedTo(conf, '/cost/create')).toBeNull();
    expect(proxiedTo(conf, '/admin/keys/create')).toBe('gateway');
  });
});
