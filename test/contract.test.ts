import { describe, expect, it } from 'vitest';
import { DIMENSION_NAMES, METRIC_NAMES } from '@weft/analytics';
import { endpoints, publishedExtraEndpoints } from '@weft/api';
import { Client, basicAuth, bearerAuth } from './helpers/client';
import { useWeft } from './helpers/fixture';

const { weft } = useWeft();

describe('the contract', () => {
  it('serves an OpenAPI 3.1 document listing all 20 endpoints (tagged interface) and the extras, and a docs page', async () => {
    const res = await fetch(`${weft.url}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, { tags: string[] }>> };
    expect(doc.openapi).toBe('3.1.0');
    for (const e of Object.values(endpoints)) expect(doc.paths[e.path]?.post?.tags, e.path).toEqual(['interface']);
    const published = publishedExtraEndpoints().map(([, e]) => ({
      // OpenAPI writes a path parameter `{name}` where the route has `:name`.
      path: e.path.replace(/:(\w+)/g, '{$1}'),
      method: (e.method ?? 'POST').toLowerCase(),
    }));
    expect(published.length).toBeGreaterThan(0);
    for (const { path, method } of published) expect(doc.paths[path]?.[method]?.tags, `${method} ${path}`).toEqual(['extra']);
    // What the interface does not define is listed too (test/routes.test.ts checks every route).
    for (const [method, path] of [
      ['post', '/otel/v1/traces'],
      ['post', '/v1/traces'],
      ['post', '/call/read'],
      ['post', '/calls/delete'],
      ['get', '/v1/models'],
      ['post', '/admin/keys/create'],
    ] as const)
      expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    // The analytics catalogue's metrics and dimensions, as enums of /analytics/query's request.
    type Names = { items: { anyOf: { enum?: string[] }[] } };
    const analytics = (
      doc.paths['/analytics/query'] as unknown as Record<string, { requestBody: { content: Record<string, { schema: unknown }> } }>
    ).post!.requestBody.content['application/json']!.schema as { properties: { metrics: Names; dimensions: Names } };
    const enumOf = (n: Names) => n.items.anyOf.find((o) => o.enum)?.enum;
    expect(enumOf(analytics.properties.metrics)).toEqual([...METRIC_NAMES]);
    expect(enumOf(analytics.properties.metrics)).toEqual(expect.arrayContaining(['count', 'cost', 'latency_p99_ms']));
    expect(enumOf(analytics.properties.dimensions)).toEqual([...DIMENSION_NAMES]);
    const docs = await fetch(`${weft.url}/docs/`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('<html');
  });

  it('answers every endpoint (never 404, never 5xx): an empty body is a 4xx naming what is wrong', async () => {
    for (const spec of Object.values(endpoints)) {
      const api = new Client(weft.url, spec.auth === 'basic' ? basicAuth('test-key') : bearerAuth('test-key'));
      const r = await api.post(spec.path, {});
      expect(r.status, spec.path).not.toBe(404);
      expect(r.status, spec.path).toBeGreaterThanOrEqual(400);
      expect(r.status, spec.path).toBeLessThan(500);
      // The OpenAI-compatible /v1 routes answer in vLLM's `{error: {message, ...}}` shape.
      expect(spec.path.startsWith('/v1/') ? r.body.error?.message : r.body.reason, spec.path).toEqual(expect.any(String));
    }
  });

  it('has /health (liveness) and /ready (each dependency)', async () => {
    const res = await fetch(`${weft.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      status: 'ok',
      version: expect.any(String),
      roles: ['gateway', 'writer', 'query', 'inference'],
    });
    const ready = await fetch(`${weft.url}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', dependencies: { store: { ok: true, mode: 'embedded' } } });
  });

  it('answers unknown paths with a JSON 404', async () => {
    const r = await new Client(weft.url).post('/nope', {});
    expect(r.status).toBe(404);
    expect(r.body.reason).toContain('/nope');
  });
});
