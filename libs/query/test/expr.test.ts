import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { type ApiError } from '@weft/core';
import { CallFieldResolver, compileQuery, jsonFieldRef, Params, sortTerms, splitFieldPath } from '../src/index';

const compile = (expr: unknown) => {
  const p = new Params();
  const sql = compileQuery(expr, new CallFieldResolver('{project:String}'), p);
  return { sql, params: p.values };
};
const err = (expr: unknown): ApiError => {
  try {
    compile(expr);
  } catch (e) {
    return e as ApiError;
  }
  throw new Error('expected an error');
};

describe('compileQuery', () => {
  it('binds every literal and never splices values', () => {
    const evil = "x') OR 1=1 --";
    const { sql, params } = compile({ $eq: [{ $getField: 'op_name' }, { $literal: evil }] });
    expect(sql).toBe('(op_name = {p0:String})');
    expect(params).toEqual({ p0: evil });
  });

  it('reads dotted JSON paths with bound keys, escaped dots and array indexes', () => {
    expect(splitFieldPath('a\\.b.0.c')).toEqual(['a.b', '0', 'c']);
    const p = new Params();
    const ref = jsonFieldRef('inputs_dump', 'a\\.b.0', p);
    expect(ref.kind).toBe('json');
    expect(p.values).toEqual({ p0: 'a.b', p1: 1 });
    expect(ref.sql).not.toContain('a.b');
  });

  it('reads a JSON value as the two-parse form did (JSONType, then JSONExtractString or Raw), in the engine', () => {
    const chdb = createRequire(import.meta.url)('chdb') as { query(sql: string, format?: string): string };
    const docs = [
      '{"n":1}',
      '{"n":"a\\"b\\u00e9\\n😀"}',
      '{"n":null}',
      '{}',
      '{"n":[1,2]}',
      '{"n":{"x":"y"}}',
      'not json',
      '{"n":true}',
      '{"n":""}',
      '{"n":1.50e3}',
      '',
      '{"n":"x","n":"y"}',
      '{"a":{"n":5}}',
      '[1]',
      '{"n":"null"}',
      '{"n":"\\""}',
      '{"n":" "}',
    ];
    const p = new Params();
    const ref = jsonFieldRef('d', 'n', p);
    const old = `multiIf(JSONType(d, 'n') = 'String', JSONExtractString(d, 'n'), JSONType(d, 'n') = 'Null' OR JSONType(d, 'n') IS NULL, NULL, JSONExtractRaw(d, 'n'))`;
    const rows = chdb.query(
      `SELECT d, ${old} AS a, ${ref.sql.replaceAll('{p0:String}', "'n'")} AS b FROM (SELECT toNullable(arrayJoin([${docs.map((d) => `'${d.replace(/\\/g, '\\\\')}'`).join(', ')}, NULL])) AS d)`,
      'JSONEachRow',
    );
    const parsed = rows
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { d: string | null; a: string | null; b: string | null });
    expect(parsed).toHaveLength(docs.length + 1);
    for (const r of parsed) expect(r.b, r.d ?? 'NULL').toBe(r.a);
    expect(parsed.find((r) => r.d === '{"n":"a\\"b\\u00e9\\n😀"}')?.b).toBe('a"bé\n😀');
    expect(parsed.find((r) => r.d === '{"n":null}')?.b).toBeNull();
  });

  it('casts a dynamic field by the peer literal', () => {
    expect(compile({ $gt: [{ $getField: 'output.score' }, { $literal: 0.5 }] }).sql).toMatch(
      /^\(toFloat64OrNull\(multiIf\(.*\) > toFloat64\(\{p\d:Float64\}\)\)$/,
    );
    expect(compile({ $eq: [{ $getField: 'inputs.flag' }, { $literal: true }] }).sql).toContain('multiIf(multiIf(');
    expect(compile({ $gt: [{ $getField: 'started_at' }, { $literal: 1714000000 }] }).sql).toBe(
      "(started_at > toDateTime64({p0:Int64}, 6, 'UTC'))",
    );
    expect(compile({ $gt: [{ $getField: 'started_at' }, { $literal: '2024-01-01' }] }).sql).toContain(
      'parseDateTime64BestEffortOrNull({p0:String}',
    );
  });

  it('compiles the boolean operators with NULL-preserving semantics', () => {
    const { sql } = compile({
      $and: [
        { $not: [{ $eq: [{ $getField: 'exception' }, { $literal: null }] }] },
        {
          $or: [
            { $in: [{ $getField: 'op_name' }, [{ $literal: 'a' }, { $literal: 'b' }]] },
            { $contains: { input: { $getField: 'display_name' }, substr: { $literal: 'X' }, case_insensitive: true } },
          ],
        },
        { $gte: [{ $convert: { input: { $getField: 'inputs.n' }, to: 'int' } }, { $literal: 3 }] },
        { $lte: [{ $getField: 'summary.weave.latency_ms' }, { $literal: 1000 }] },
        { $lt: [{ $getField: 'svc_run_step' }, { $literal: 4 }] },
      ],
    });
    expect(sql).toContain('(NOT (exception IS NULL))');
    expect(sql).toContain('(op_name IN ({p0:String}, {p1:String}))');
    expect(sql).toContain('positionCaseInsensitiveUTF8(display_name, {p2:String}) > 0');
    expect(sql).toContain('toInt64OrNull(toString(');
  });

  it('refuses unknown operators and fields with the path that holds them', () => {
    const e1 = err({ $and: [{ $eq: [{ $getField: 'id' }, { $literal: 1 }] }, { $regex: ['a', 'b'] }] });
    expect(e1.status).toBe(400);
    expect(e1.field).toBe('query.$expr.$and[1].$regex');
    expect(e1.reason).toContain("'$regex'");
    const e2 = err({ $eq: [{ $getField: 'password; DROP TABLE calls_merged' }, { $literal: 1 }] });
    expect(e2.status).toBe(422);
    expect(e2.field).toBe('query.$expr.$eq[0].$getField');
    expect(e2.reason).toContain("unknown field 'password; DROP TABLE calls_merged'");
    expect(err({ $and: [] }).status).toBe(400);
    expect(err({ $not: [{ $literal: 1 }, { $literal: 2 }] }).status).toBe(400);
    expect(err({ $convert: { input: { $literal: 1 }, to: 'float; DROP' } }).field).toBe('query.$expr.$convert.to');
    expect(err({ $eq: [{ $literal: 1 }, 'bare'] }).field).toBe('query.$expr.$eq[1]');
  });

  it('bounds depth and size', () => {
    let deep: unknown = { $literal: true };
    for (let i = 0; i < 50; i++) deep = { $not: [deep] };
    expect(err(deep).reason).toContain('deeper than');
    const wide = { $or: Array.from({ length: 2000 }, () => ({ $literal: true })) };
    expect(err(wide).reason).toContain('nodes');
  });

  it('sorts dynamic fields with three terms', () => {
    const p = new Params();
    const terms = sortTerms(new CallFieldResolver('{project:String}').resolve('output.a.b', p), 'desc');
    expect(terms).toHaveLength(3);
    expect(terms[0]).toMatch(/IS NOT NULL\) DESC$/);
    expect(terms[1]).toMatch(/^toFloat64OrNull\(.*\) DESC NULLS LAST$/);
  });
});
