import { describe, expect, it } from 'vitest';
import { endpoints, publishedExtraEndpoints } from '@weft/api';
import { Client, basicAuth, bearerAuth } from './helpers/client';
import { useWeft } from './helpers/fixture';

const { weft } = useWeft();

describe('the contract', () => {
  it('serves an OpenAPI 3.1 document listing all 20 endpoints (and the extras that publish a response), and a docs page', async () => {
    const res = await fetch(`${weft.url}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, { post: unknown }> };
    expect(doc.openapi).toBe('3.1.0');
    const paths = Object.keys(doc.paths).sort();
    const published = publishedExtraEndpoints().map(([, e]) => e.path);
    expect(published.length).toBeGreaterThan(0);
    expect(paths).toHaveLength(20 + published.length);
    expect(paths).toEqual([...Object.values(endpoints).map((e) => e.path), ...published].sort());
    for (const p of published) expect((doc.paths[p] as { post: { tags: string[] } }).post.tags).toContain('extra');
    for (const p of paths) expect(doc.paths[p]?.post).toBeDefined();
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
