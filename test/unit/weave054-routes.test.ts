import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FILE_CREATE_PATH, routeSpecs } from '@weft/api';
import { REPO_ROOT } from '@weft/harness';

/**
 * Every route of Weave 0.54's vendored client (test/fixtures/weave054-routes.json, printed by
 * scripts/conformance/weave-client-routes.py) is a route of the table (libs/api routeSpecs) with
 * its method, or one of the few routes outside it. test/weave054-routes.test.ts asks a running weft.
 */
const OUTSIDE_THE_TABLE = ['GET /health', 'GET /server_info', `POST ${FILE_CREATE_PATH}`, 'POST /otel/v1/traces'];

describe("Weave 0.54's client routes", () => {
  it('each is in the route table with its method', () => {
    const routes = JSON.parse(readFileSync(join(REPO_ROOT, 'test/fixtures/weave054-routes.json'), 'utf8')) as {
      method: string;
      path: string;
    }[];
    const table = Object.values(routeSpecs).flatMap((spec) =>
      [spec.path, ...('aliases' in spec && spec.aliases ? spec.aliases : [])].map((p) => ({
        method: ('method' in spec && spec.method) || 'POST',
        re: new RegExp(`^${p.replace(/:[^/]+/g, '[^/]+')}$`),
      })),
    );
    const missing = routes
      .map((r) => ({ method: r.method, path: r.path.replace(/\{\w+\}/g, 'x') }))
      .filter((r) => !OUTSIDE_THE_TABLE.includes(`${r.method} ${r.path}`) && !table.some((t) => t.method === r.method && t.re.test(r.path)))
      .map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
    expect(routes.length).toBeGreaterThan(100);
  });
});
