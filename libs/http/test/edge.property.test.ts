import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { endpoints, parseBody } from '@weft/api';
import { ApiError, type Caller } from '@weft/core';
import { checkJsonValue, defaultRequestLimits, enforceTenancy, mayCrossLimits, mayHoldRefs, parseJsonBody } from '../src/index';

function thrown(f: () => unknown): unknown {
  try {
    f();
    return undefined;
  } catch (e) {
    return e;
  }
}

const limits = { ...defaultRequestLimits, maxJsonDepth: 32, maxStringChars: 1000, maxArrayItems: 100 };

describe('JSON body parser (property)', () => {
  it('answers any byte sequence with a value or a 400/413, nothing else', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const e = thrown(() => parseJsonBody(Buffer.from(bytes), limits));
        if (e !== undefined) {
          expect(e).toBeInstanceOf(ApiError);
          expect([400, 413]).toContain((e as ApiError).status);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('returns exactly what JSON.parse would for documents within the limits', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (v) => {
        const text = JSON.stringify(v);
        expect(parseJsonBody(Buffer.from(text, 'utf8'), { ...limits, maxStringChars: 1e6 })).toEqual(JSON.parse(text));
      }),
      { numRuns: 1000 },
    );
  });

  it('rejects nesting exactly beyond the configured depth', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), fc.constantFrom('[', '{"a":'), (depth, open) => {
        const close = open === '[' ? ']' : '}';
        const text = open.repeat(depth) + '1' + close.repeat(depth);
        const e = thrown(() => parseJsonBody(Buffer.from(text), limits));
        if (depth > limits.maxJsonDepth) expect((e as ApiError).status).toBe(400);
        else expect(e).toBeUndefined();
      }),
    );
  });

  it('names the path of a value over its limit', () => {
    const e = thrown(() => checkJsonValue({ a: [1, { b: 'x'.repeat(1001) }] }, limits)) as ApiError;
    expect(e.status).toBe(413);
    expect(e.field).toBe('a[1].b');
  });
});

describe('body validation (property)', () => {
  it('answers any JSON value with the parsed body or a 422 naming the problem, for every endpoint', () => {
    const specs = Object.values(endpoints);
    fc.assert(
      fc.property(fc.constantFrom(...specs), fc.jsonValue({ maxDepth: 5 }), (spec, v) => {
        const e = thrown(() => parseBody(spec.request, v));
        if (e !== undefined) {
          expect(e).toBeInstanceOf(ApiError);
          expect((e as ApiError).status).toBe(422);
          expect((e as ApiError).reason.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('tenancy walker (property)', () => {
  const alice: Caller = { userId: 'u', keyId: 'k', isAdmin: false, entities: ['acme'] };
  const ident = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/);

  it('finds a foreign ref wherever it is hidden in a payload', () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 4 }),
        ident.filter((e) => e !== 'acme'),
        fc.array(fc.oneof(ident, fc.nat(3)), { maxLength: 4 }),
        (v, entity, path) => {
          // Hide the ref at a random path below `inputs`.
          let hidden: unknown = `weave:///${entity}/p/object/o:1`;
          for (const step of [...path].reverse()) hidden = typeof step === 'number' ? [...Array(step).fill(v), hidden] : { [step]: hidden };
          const body = { start: { project_id: 'acme/p', op_name: 'o', inputs: { v, x: hidden } } };
          const e = thrown(() => enforceTenancy(alice, body)) as ApiError;
          expect(e).toBeInstanceOf(ApiError);
          expect(e.status).toBe(403);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('lets admins through and members into their own entity, whatever the payload', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => {
        const clean = JSON.parse(JSON.stringify(v ?? null).replaceAll('weave:///', 'x'));
        expect(thrown(() => enforceTenancy(alice, { project_id: 'acme/p', inputs: clean, payload: { v: clean } }))).toBeUndefined();
        expect(thrown(() => enforceTenancy({ ...alice, isAdmin: true, entities: [] }, { project_id: 'zeta/p', v }))).toBeUndefined();
      }),
      { numRuns: 1000 },
    );
  });

  it('cannot be dodged by escaping a ref in the JSON text (the raw-text shortcut)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }), (v, escapes) => {
        const ref = 'weave:///globex/p/object/o:1';
        // Spell each character of the ref literally, as \uXXXX, or ('/') as \/.
        const spelled = [...ref]
          .map((ch, i) => (escapes[i] ? (ch === '/' && i % 2 ? '\\/' : `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`) : ch))
          .join('');
        const text = `{"project_id":"acme/p","inputs":{"v":${JSON.stringify(v)},"x":"${spelled}"}}`;
        const raw = Buffer.from(text, 'utf8');
        const body = parseJsonBody(raw, { ...limits, maxStringChars: 1e6 });
        const e = thrown(() => enforceTenancy(alice, body, { refsPossible: mayHoldRefs(raw) })) as ApiError;
        expect(e).toBeInstanceOf(ApiError);
        expect(e.status).toBe(403);
      }),
      { numRuns: 500 },
    );
  });
});

describe('limit pre-scan (property)', () => {
  it('never says "within limits" for a value the exact check refuses', () => {
    const small = { maxJsonDepth: 5, maxStringChars: 8, maxArrayItems: 4 };
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 7 }), (v) => {
        const text = JSON.stringify(v);
        if (!mayCrossLimits(text, small)) expect(thrown(() => checkJsonValue(JSON.parse(text), small))).toBeUndefined();
      }),
      { numRuns: 2000 },
    );
  });
});
