import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { callEndBody, callStartBody } from '@weft/api';
import {
  convertExportRequest,
  decodeExportTraceServiceRequest,
  expandAttributes,
  getPath,
  OtlpRequestError,
  parseOtlpJson,
} from '../src/index';

/** Runs `f`; passes when it returns or throws one of `allowed`, fails on any other throw. */
function onlyThrows(f: () => unknown, ...allowed: (new (...a: never[]) => Error)[]): unknown {
  try {
    return f();
  } catch (e) {
    if (allowed.some((c) => e instanceof c)) return undefined;
    throw e;
  }
}

const hex = (n: number) => fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: n, maxLength: n });
// Mostly well-formed (so some spans convert), sometimes absent, null or any JSON at all.
const maybe = <T>(a: fc.Arbitrary<T>) => fc.oneof({ arbitrary: a, weight: 12 }, fc.constant(undefined), fc.constant(null), fc.jsonValue());
const nanos = fc.bigInt({ min: 1_600_000_000_000_000_000n, max: 1_800_000_000_000_000_000n });
const anyValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.record({ stringValue: fc.string() }),
    fc.record({ stringValue: fc.constantFrom('{"a":1}', '[1,2]', '{bad', '[') }),
    fc.record({ intValue: fc.oneof(fc.integer(), fc.bigInt().map(String), fc.string()) }),
    fc.record({ doubleValue: fc.oneof(fc.double(), fc.string()) }),
    fc.record({ boolValue: fc.oneof(fc.boolean(), fc.string()) }),
    fc.record({ bytesValue: fc.base64String() }),
    fc.record({ arrayValue: fc.record({ values: fc.array(tie('v'), { maxLength: 3 }) }) }),
    fc.record({ kvlistValue: fc.record({ values: fc.array(fc.record({ key: fc.string(), value: tie('v') }), { maxLength: 3 }) }) }),
    fc.jsonValue(),
  ),
})).v;
const key = fc
  .array(fc.constantFrom('a', 'b', 'gen_ai', 'input', 'value', 'usage', '0', '1', '__proto__', ''), { minLength: 1, maxLength: 4 })
  .map((p) => p.join('.'));
const span = fc.record(
  {
    traceId: maybe(fc.oneof({ arbitrary: hex(32), weight: 4 }, fc.string(), fc.uint8Array({ minLength: 16, maxLength: 16 }))),
    spanId: maybe(fc.oneof({ arbitrary: hex(16), weight: 4 }, fc.string(), fc.uint8Array({ minLength: 0, maxLength: 9 }))),
    parentSpanId: maybe(fc.oneof(hex(16), fc.constant(''), fc.string())),
    name: maybe(fc.string({ minLength: 1, maxLength: 200 })),
    kind: maybe(fc.oneof(fc.integer({ min: -1, max: 7 }), fc.string())),
    startTimeUnixNano: maybe(
      fc.oneof(
        { arbitrary: nanos.map(String), weight: 6 },
        fc.bigInt({ min: 0n, max: 1n << 64n }).map(String),
        fc.integer(),
        fc.double(),
        fc.bigInt(),
      ),
    ),
    endTimeUnixNano: maybe(
      fc.oneof({ arbitrary: nanos.map(String), weight: 6 }, fc.bigInt({ min: 0n, max: 1n << 64n }).map(String), fc.integer()),
    ),
    attributes: maybe(fc.array(fc.record({ key, value: anyValue }), { maxLength: 4 })),
    status: maybe(fc.record({ code: maybe(fc.oneof(fc.integer({ min: 0, max: 3 }), fc.string())), message: maybe(fc.string()) })),
    events: maybe(
      fc.array(
        fc.record({
          name: maybe(fc.string()),
          timeUnixNano: maybe(fc.string()),
          attributes: maybe(fc.array(fc.record({ key: fc.string(), value: anyValue }))),
        }),
        { maxLength: 2 },
      ),
    ),
    links: maybe(fc.array(fc.record({ traceId: maybe(fc.string()), spanId: maybe(fc.string()) }), { maxLength: 2 })),
  },
  { requiredKeys: [] },
);
const request = fc.record({
  resourceSpans: fc.array(
    fc.record({
      resource: maybe(
        fc.record({
          attributes: maybe(
            fc.array(fc.record({ key: fc.constantFrom('wandb.entity', 'wandb.project', 'service.name'), value: anyValue })),
          ),
        }),
      ),
      scopeSpans: fc.array(fc.record({ scope: maybe(fc.record({ name: maybe(fc.string()) })), spans: fc.array(span, { maxLength: 5 }) }), {
        maxLength: 3,
      }),
    }),
    { maxLength: 3 },
  ),
});

describe('the converter throws nothing but its typed errors', () => {
  it('any JSON value as a request', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.option(fc.constant('e/p'), { nil: null }), (req, projectId) => {
        onlyThrows(() => convertExportRequest(req, { projectId }), OtlpRequestError);
      }),
      { numRuns: 500 },
    );
  });

  it('OTLP-shaped requests with hostile members: every span is a call or a counted rejection, every call fits the contract', () => {
    let accepted = 0;
    let rejected = 0;
    fc.assert(
      fc.property(request, (req) => {
        const total = req.resourceSpans.reduce((n, rs) => n + rs.scopeSpans.reduce((m, ss) => m + ss.spans.length, 0), 0);
        const out = onlyThrows(() => convertExportRequest(req, { projectId: 'e/p' }), OtlpRequestError) as
          ReturnType<typeof convertExportRequest> | undefined;
        if (!out) return;
        expect(out.calls.length + out.rejectedSpans).toBe(total);
        expect(out.errors).toHaveLength(out.rejectedSpans);
        accepted += out.calls.length;
        rejected += out.rejectedSpans;
        for (const c of out.calls) {
          // What the gateway does next: serialise, and the row codec's schemas accept it.
          expect(() => JSON.stringify(c)).not.toThrow();
          expect(callStartBody.safeParse(c.start).success).toBe(true);
          expect(callEndBody.safeParse(c.end).success).toBe(true);
          expect(c.start.id).toMatch(/^[0-9a-f]{16}$/);
          expect(c.start.trace_id).toMatch(/^[0-9a-f]{32}$/);
          expect(c.start.op_name.length).toBeLessThanOrEqual(128);
        }
      }),
      { numRuns: 400 },
    );
    // The generator reaches both outcomes, so the checks above did run on real calls.
    expect(accepted).toBeGreaterThan(10);
    expect(rejected).toBeGreaterThan(10);
  });

  it('attribute expansion never fails', () => {
    fc.assert(
      fc.property(fc.dictionary(key, fc.jsonValue()), (flat) => {
        onlyThrows(() => expandAttributes(flat));
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      { numRuns: 500 },
    );
  });

  it('loses no attribute: every key’s value is found at its path, prefixes and values mixed', () => {
    const dotted = fc.array(fc.constantFrom('a', 'b', 'c', 'db', 'system', 'name'), { minLength: 1, maxLength: 4 }).map((p) => p.join('.'));
    const scalar = fc.oneof(
      fc.integer(),
      fc.boolean(),
      fc.string().filter((s) => !s.startsWith('[') && !s.startsWith('{')),
    );
    fc.assert(
      fc.property(fc.dictionary(dotted, scalar), (flat) => {
        const tree = expandAttributes(flat);
        for (const [k, v] of Object.entries(flat)) expect(getPath(tree, k), k).toEqual(v);
      }),
      { numRuns: 1000 },
    );
  });

  it('random bytes as protobuf, random text as OTLP/JSON', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const decoded = onlyThrows(() => decodeExportTraceServiceRequest(bytes), OtlpRequestError);
        if (decoded !== undefined) onlyThrows(() => convertExportRequest(decoded, { projectId: 'e/p' }), OtlpRequestError);
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.json(), (text) => {
        onlyThrows(() => convertExportRequest(parseOtlpJson(text), { projectId: 'e/p' }), OtlpRequestError);
      }),
      { numRuns: 300 },
    );
  });
});
