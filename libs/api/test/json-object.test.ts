import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument, callStartBody, jsonObject } from '../src';

describe('jsonObject (free-form JSON objects)', () => {
  it('passes a parsed object through as it is, own keys and all (no copy)', () => {
    const value = JSON.parse('{"__proto__":{"x":1},"a":[1,{"b":null}],"constructor":"c"}') as Record<string, unknown>;
    const parsed = jsonObject.parse(value);
    expect(parsed).toBe(value);
    expect(JSON.stringify(parsed)).toBe('{"__proto__":{"x":1},"a":[1,{"b":null}],"constructor":"c"}');
    expect(jsonObject.parse(Object.create(null))).toEqual({});
  });

  it('refuses what is not an object, naming what it got', () => {
    for (const [value, kind] of [
      [[1], 'array'],
      [null, 'null'],
      ['{}', 'string'],
      [3, 'number'],
      [new Date(0), 'object'],
    ] as const) {
      const r = jsonObject.safeParse(value);
      expect(r.success).toBe(false);
      expect(r.error!.issues[0]!.message).toBe(`Invalid input: expected object, received ${kind}`);
    }
    const start = callStartBody.safeParse({ project_id: 'e/p', op_name: 'o', started_at: '2026-01-01T00:00:00Z', inputs: [1] });
    expect(start.success).toBe(false);
    expect(start.error!.issues[0]!.path).toEqual(['inputs']);
  });

  it('is an object of anything in /openapi.json', () => {
    const doc = buildOpenApiDocument({ version: 'test', routes: [{ method: 'POST', url: '/call/start', spec: 'callStart' }] }) as any;
    const start = doc.paths['/call/start'].post.requestBody.content['application/json'].schema.properties.start;
    expect(start.properties.inputs).toEqual({ default: {}, type: 'object', additionalProperties: {} });
    expect(start.properties.otel_dump).toEqual({ anyOf: [{ type: 'object', additionalProperties: {} }, { type: 'null' }] });
  });
});
