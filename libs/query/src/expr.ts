import { ApiError } from '@weft/core';
import type { Params } from './params';

/**
 * The `$expr` query language of the reference (weave-semantics §3.3) compiled to ClickHouse SQL.
 * What a field name means is the resolver's business, so the same compiler serves calls,
 * feedback and costs. Every user value (literals, JSON keys) is a bound parameter; field names
 * only ever select SQL the resolver wrote itself.
 */

/** A resolved field: SQL over the caller's row, and the kind of value it yields. */
export interface FieldRef {
  sql: string;
  /** `json`: Nullable(String) read from a JSON dump (NULL when missing or JSON null). */
  kind: 'string' | 'number' | 'datetime' | 'bool' | 'json' | 'array';
}

export interface FieldResolver {
  /** Throws ApiError 400 naming an unknown field. */
  resolve(path: string, p: Params): FieldRef;
}

export interface CompileOptions {
  maxDepth?: number;
  maxNodes?: number;
}

type Kind = FieldRef['kind'] | 'null';
interface Operand {
  sql: string;
  kind: Kind;
}

const BOOL_OPS = ['$and', '$or', '$not'];
const CMP_OPS: Record<string, string> = { $eq: '=', $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' };
const OPERATORS = [...BOOL_OPS, ...Object.keys(CMP_OPS), '$in', '$contains', '$containsToken', '$literal', '$getField', '$convert'];
const CONVERT_TARGETS = ['double', 'string', 'int', 'bool', 'exists'];

/** JSON text of a dump as a boolean: the reference's `bool` cast of dynamic fields. */
const boolOfText = (x: string) => `multiIf(${x} = 'true', 1, ${x} = 'false', 0, toUInt8OrNull(${x}))`;

/** Compiles `query.$expr` into one boolean SQL condition. */
export function compileQuery(expr: unknown, resolver: FieldResolver, p: Params, opts: CompileOptions = {}): string {
  const c = new Compiler(resolver, p, opts.maxDepth ?? 32, opts.maxNodes ?? 1000);
  return c.condition(c.operand(expr, 'query.$expr', 0));
}

class Compiler {
  private nodes = 0;
  constructor(
    private readonly resolver: FieldResolver,
    private readonly p: Params,
    private readonly maxDepth: number,
    private readonly maxNodes: number,
  ) {}

  private fail(where: string, message: string): never {
    throw new ApiError(400, `${where}: ${message}`, { field: where });
  }

  /** Any operand as SQL usable where a condition is expected. */
  condition(o: Operand): string {
    switch (o.kind) {
      case 'bool':
        return o.sql;
      case 'null':
        return 'NULL';
      case 'number':
        return `(${o.sql} != 0)`;
      case 'datetime':
      case 'array':
        return `(${o.sql} IS NOT NULL)`;
      default:
        return boolOfText(o.sql);
    }
  }

  operand(node: unknown, where: string, depth: number): Operand {
    if (++this.nodes > this.maxNodes) this.fail('query.$expr', `expression has more than ${this.maxNodes} nodes`);
    if (depth > this.maxDepth) this.fail(where, `expression nested deeper than ${this.maxDepth}`);
    if (node === null || typeof node !== 'object' || Array.isArray(node)) {
      this.fail(where, 'expected an operation object such as {"$literal": ...} or {"$getField": "..."}');
    }
    const keys = Object.keys(node);
    if (keys.length !== 1)
      this.fail(where, `an operation has exactly one operator key (got ${keys.length ? keys.map((k) => `'${k}'`).join(', ') : 'none'})`);
    const op = keys[0]!;
    const arg = (node as Record<string, unknown>)[op];
    const at = `${where}.${op}`;
    if (!OPERATORS.includes(op)) this.fail(at, `unknown operator '${op}' (known: ${OPERATORS.join(', ')})`);
    switch (op) {
      case '$literal':
        return this.literal(arg, at);
      case '$getField': {
        if (typeof arg !== 'string' || arg === '') this.fail(at, 'expected a non-empty field name');
        try {
          return this.resolver.resolve(arg, this.p);
        } catch (e) {
          // Point at the offending $getField, keeping the resolver's message (which names the field).
          if (e instanceof ApiError && e.status === 400) throw new ApiError(400, `${at}: ${e.message}`, { field: at });
          throw e;
        }
      }
      case '$convert':
        return this.convert(arg, at, depth);
      case '$and':
      case '$or': {
        const items = this.list(arg, at, 1);
        const parts = items.map((x, i) => this.condition(this.operand(x, `${at}[${i}]`, depth + 1)));
        return { sql: parts.length === 1 ? parts[0]! : `(${parts.join(op === '$and' ? ' AND ' : ' OR ')})`, kind: 'bool' };
      }
      case '$not': {
        const items = this.list(arg, at, 1, 1);
        return { sql: `(NOT ${this.condition(this.operand(items[0], `${at}[0]`, depth + 1))})`, kind: 'bool' };
      }
      case '$in':
        return this.inList(arg, at, depth);
      case '$contains':
      case '$containsToken':
        return this.contains(op, arg, at, depth);
      default: {
        const [a, b] = this.list(arg, at, 2, 2).map((x, i) => this.operand(x, `${at}[${i}]`, depth + 1)) as [Operand, Operand];
        return this.compare(CMP_OPS[op]!, a, b, at);
      }
    }
  }

  private list(arg: unknown, at: string, min: number, max = Infinity): unknown[] {
    if (!Array.isArray(arg)) this.fail(at, 'expected an array of operands');
    if (arg.length < min || arg.length > max) {
      this.fail(
        at,
        max === min
          ? `expected exactly ${min} operand(s)`
          : `expected at least ${min} operand(s) (empty ${at.split('.').pop()} is not allowed)`,
      );
    }
    return arg;
  }

  private literal(v: unknown, at: string): Operand {
    if (v === null) return { sql: 'NULL', kind: 'null' };
    switch (typeof v) {
      case 'string':
        return { sql: this.p.str(v), kind: 'string' };
      case 'boolean':
        return { sql: this.p.add(v ? 1 : 0, 'UInt8'), kind: 'bool' };
      case 'number':
        if (!Number.isFinite(v)) this.fail(at, 'number must be finite');
        return Number.isInteger(v) && Math.abs(v) <= Number.MAX_SAFE_INTEGER
          ? { sql: this.p.add(v, 'Int64'), kind: 'number' }
          : { sql: this.p.add(v, 'Float64'), kind: 'number' };
      case 'object':
        // Lists and dicts compare as their compact JSON text, like a JSON field holding them.
        return { sql: this.p.str(JSON.stringify(v)), kind: 'string' };
      default:
        this.fail(at, 'unsupported literal');
    }
  }

  private convert(arg: unknown, at: string, depth: number): Operand {
    if (!arg || typeof arg !== 'object' || Array.isArray(arg)) this.fail(at, 'expected {"input": operand, "to": type}');
    const { input, to, ...rest } = arg as Record<string, unknown>;
    const extra = Object.keys(rest);
    if (extra.length) this.fail(`${at}.${extra[0]}`, `unknown member '${extra[0]}'`);
    if (typeof to !== 'string' || !CONVERT_TARGETS.includes(to)) {
      this.fail(`${at}.to`, `expected one of ${CONVERT_TARGETS.join(', ')} (got ${JSON.stringify(to)})`);
    }
    const x = this.operand(input, `${at}.input`, depth + 1);
    return this.castTo(x, to as 'double' | 'string' | 'int' | 'bool' | 'exists');
  }

  private castTo(x: Operand, to: 'double' | 'string' | 'int' | 'bool' | 'exists'): Operand {
    if (x.kind === 'null') return to === 'exists' ? { sql: '0', kind: 'bool' } : x;
    const text = x.kind === 'string' || x.kind === 'json';
    switch (to) {
      case 'double':
        return {
          sql:
            x.kind === 'number'
              ? `toFloat64(${x.sql})`
              : x.kind === 'datetime'
                ? `(toUnixTimestamp64Micro(${x.sql}) / 1e6)`
                : x.kind === 'bool'
                  ? `toFloat64(${x.sql})`
                  : `toFloat64OrNull(toString(${x.sql}))`,
          kind: 'number',
        };
      case 'int':
        return {
          sql:
            x.kind === 'number'
              ? `toInt64(${x.sql})`
              : x.kind === 'datetime'
                ? `toUnixTimestamp(${x.sql})`
                : x.kind === 'bool'
                  ? `toInt64(${x.sql})`
                  : `toInt64OrNull(toString(${x.sql}))`,
          kind: 'number',
        };
      case 'string':
        return { sql: text ? x.sql : x.kind === 'array' ? `toJSONString(${x.sql})` : `toString(${x.sql})`, kind: 'string' };
      case 'bool':
        return {
          sql: x.kind === 'bool' ? x.sql : x.kind === 'number' ? `(${x.sql} != 0)` : text ? boolOfText(x.sql) : `(${x.sql} IS NOT NULL)`,
          kind: 'bool',
        };
      case 'exists':
        // A dynamic field reads NULL when the path is missing or JSON null: the reference's "exists".
        return { sql: x.kind === 'array' ? `(notEmpty(${x.sql}))` : `(${x.sql} IS NOT NULL)`, kind: 'bool' };
    }
  }

  /**
   * Two operands of different kinds meet on a common type, driven by the literal side as in the
   * reference (`infer_literal_filter_cast`): text vs number compares numerically (non-numeric
   * text → NULL → no match), datetime vs number reads unix seconds, datetime vs text parses it.
   */
  private unify(a: Operand, b: Operand, at: string): [string, string] {
    if (a.kind === b.kind || (isText(a) && isText(b))) return [a.sql, b.sql];
    const pair = (k1: Kind, k2: Kind) => (a.kind === k1 && b.kind === k2) || (a.kind === k2 && b.kind === k1);
    const by = (f: (o: Operand) => string): [string, string] => [f(a), f(b)];
    if (pair('number', 'string') || pair('number', 'json'))
      return by((o) => (o.kind === 'number' ? `toFloat64(${o.sql})` : `toFloat64OrNull(${o.sql})`));
    if (pair('bool', 'string') || pair('bool', 'json')) return by((o) => (o.kind === 'bool' ? o.sql : boolOfText(o.sql)));
    if (pair('bool', 'number')) return by((o) => `toFloat64(${o.sql})`);
    if (pair('datetime', 'number')) return by((o) => (o.kind === 'datetime' ? o.sql : `toDateTime64(${o.sql}, 6, 'UTC')`));
    if (pair('datetime', 'string') || pair('datetime', 'json')) {
      return by((o) => (o.kind === 'datetime' ? o.sql : `parseDateTime64BestEffortOrNull(${o.sql}, 6, 'UTC')`));
    }
    return this.fail(at, `cannot compare a ${a.kind} with a ${b.kind}`);
  }

  private compare(op: string, a: Operand, b: Operand, at: string): Operand {
    if (a.kind === 'null' || b.kind === 'null') {
      // `= null` is the reference's IS NULL; any ordering against NULL is NULL (never matches).
      if (op !== '=') return { sql: 'NULL', kind: 'bool' };
      const other = a.kind === 'null' ? b : a;
      return { sql: other.kind === 'null' ? '1' : other.kind === 'array' ? `empty(${other.sql})` : `(${other.sql} IS NULL)`, kind: 'bool' };
    }
    if (a.kind === 'array' || b.kind === 'array') {
      if (op !== '=' || (a.kind === 'array' && b.kind === 'array')) this.fail(at, 'a list field only supports $eq (membership) and $in');
      const [arr, x] = a.kind === 'array' ? [a, b] : [b, a];
      return { sql: `has(${arr.sql}, toString(${x.sql}))`, kind: 'bool' };
    }
    const [l, r] = this.unify(a, b, at);
    return { sql: `(${l} ${op} ${r})`, kind: 'bool' };
  }

  private inList(arg: unknown, at: string, depth: number): Operand {
    const [lhsNode, listNode] = this.list(arg, at, 2, 2);
    const lhs = this.operand(lhsNode, `${at}[0]`, depth + 1);
    if (!Array.isArray(listNode)) this.fail(`${at}[1]`, 'expected an array of operands');
    const items = listNode.map((x, i) => this.operand(x, `${at}[1][${i}]`, depth + 2));
    if (items.length === 0) return { sql: '0', kind: 'bool' };
    if (lhs.kind === 'array') {
      return { sql: `hasAny(${lhs.sql}, [${items.map((i) => `toString(${i.sql})`).join(', ')}])`, kind: 'bool' };
    }
    const values = items.filter((i) => i.kind !== 'null');
    const kinds = new Set(values.map((i) => (i.kind === 'json' ? 'string' : i.kind)));
    // Homogeneous list: one IN with the lhs cast once (NULL lhs stays NULL, so it never matches).
    if (kinds.size === 1 && values.length === items.length) {
      const sample = values[0]!;
      const pairs = values.map((v) => this.unify(lhs, v, at));
      const left = this.unify(lhs, sample, at)[0];
      return { sql: `(${left} IN (${pairs.map(([, r]) => r).join(', ')}))`, kind: 'bool' };
    }
    const ors = items.map((v) => this.compare('=', lhs, v, at).sql);
    return { sql: `(${ors.join(' OR ')})`, kind: 'bool' };
  }

  private contains(op: string, arg: unknown, at: string, depth: number): Operand {
    if (!arg || typeof arg !== 'object' || Array.isArray(arg))
      this.fail(at, 'expected {"input": operand, "substr": operand, "case_insensitive"?: boolean}');
    const { input, substr, case_insensitive: ci = false, ...rest } = arg as Record<string, unknown>;
    const extra = Object.keys(rest);
    if (extra.length) this.fail(`${at}.${extra[0]}`, `unknown member '${extra[0]}'`);
    if (typeof ci !== 'boolean') this.fail(`${at}.case_insensitive`, 'expected a boolean');
    const hay = this.operand(input, `${at}.input`, depth + 1);
    const needle = this.operand(substr, `${at}.substr`, depth + 1);
    if (hay.kind === 'null' || needle.kind === 'null') return { sql: 'NULL', kind: 'bool' };
    const text = (o: Operand) => (isText(o) ? o.sql : `toString(${o.sql})`);
    if (op === '$containsToken') {
      // hasToken needs a constant needle: only a literal (a bound parameter) qualifies.
      if ((substr as Record<string, unknown>)?.['$literal'] === undefined) this.fail(`${at}.substr`, 'must be a $literal');
      const fn = ci ? 'hasTokenCaseInsensitiveOrNull' : 'hasTokenOrNull';
      if (hay.kind === 'array') return { sql: `arrayExists(x -> ${fn}(x, ${text(needle)}) = 1, ${hay.sql})`, kind: 'bool' };
      return { sql: `(${fn}(${text(hay)}, ${text(needle)}) = 1)`, kind: 'bool' };
    }
    const fn = ci ? 'positionCaseInsensitiveUTF8' : 'position';
    if (hay.kind === 'array') return { sql: `arrayExists(x -> ${fn}(x, ${text(needle)}) > 0, ${hay.sql})`, kind: 'bool' };
    return { sql: `(${fn}(${text(hay)}, ${text(needle)}) > 0)`, kind: 'bool' };
  }
}

const isText = (o: Operand) => o.kind === 'string' || o.kind === 'json';

/**
 * Splits a dotted path on unescaped dots (`\.` keeps a literal dot); parts of digits are
 * array indexes (0-based, as in the reference's `[n]`).
 */
export function splitFieldPath(path: string): string[] {
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < path.length; i++) {
    const ch = path[i]!;
    if (ch === '\\' && path[i + 1] === '.') {
      cur += '.';
      i++;
    } else if (ch === '.') {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  return parts;
}

/**
 * A value inside a JSON dump, read as Nullable(String): strings unquoted, numbers and bools as
 * their text, objects/arrays as JSON text, NULL when the path is missing or holds JSON null.
 * Keys and indexes are bound parameters, so no path syntax ever reaches SQL.
 */
export function jsonFieldRef(dumpSql: string, path: string | readonly string[], p: Params): FieldRef {
  const parts = typeof path === 'string' ? splitFieldPath(path) : path;
  const keys = parts.map((k) => (/^\d+$/.test(k) && k.length < 10 ? p.add(Number(k) + 1, 'Int64') : p.str(k))).join(', ');
  const args = keys ? `${dumpSql}, ${keys}` : dumpSql;
  // The dump is parsed once per row (the engine computes the repeated JSONExtractRaw once): a
  // missing value reads '' and JSON null 'null' (both NULL here), a string its quoted text,
  // unquoted by parsing that short text alone, instead of JSONType + JSONExtractString/Raw
  // parsing the dump twice; the values are the same (a test compares both forms).
  const raw = `JSONExtractRaw(${args})`;
  return {
    sql: `multiIf(${raw} IN ('', 'null'), NULL, startsWith(${raw}, '"'), JSONExtractString(${raw}), ${raw})`,
    kind: 'json',
  };
}

/**
 * ORDER BY terms for one field. A dynamic (JSON) field gives the reference's three terms:
 * rows that have the value first, then numeric order, then text order. NULLs sort last.
 */
export function sortTerms(ref: FieldRef, direction: 'asc' | 'desc'): string[] {
  const dir = direction === 'desc' ? 'DESC' : 'ASC';
  if (ref.kind === 'json') {
    return [`(${ref.sql} IS NOT NULL) DESC`, `toFloat64OrNull(${ref.sql}) ${dir} NULLS LAST`, `${ref.sql} ${dir} NULLS LAST`];
  }
  return [`${ref.sql} ${dir} NULLS LAST`];
}
