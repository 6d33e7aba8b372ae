import { formatQueryParams } from '@clickhouse/client-common';

/** The part of a clickhouse-js Connection's statement parameters this module rewrites. */
interface StatementParams {
  query: string;
  query_params?: Record<string, unknown>;
}

/** Parameters longer than this (as SET text) are bound as before, not set in the session. */
const LARGE_PARAMS_CHARS = 64 * 1024;

/** A SQL string literal holding `text` exactly (ClickHouse's backslash escapes). */
const literal = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/**
 * The statement with its parameters set in its own session (`SET param_x = '…'; SELECT {x:T}`)
 * instead of bound through chDB's binder: chdb-node runs every bound statement of the process
 * one after another (its binder is not safe across connections), which would make every lane
 * wait behind any other's statement. A session's parameters are its own, and the values are the
 * text a ClickHouse server receives as `param_x` over HTTP, so both modes bind alike.
 */
export function inlineParams<P extends StatementParams>(params: P): P {
  const values = params.query_params;
  if (!values || Object.keys(values).length === 0) return params;
  const sets = Object.entries(values).map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`invalid parameter name ${JSON.stringify(name)}`);
    return `SET param_${name} = ${literal(formatQueryParams({ value }))}`;
  });
  // Large values (thousands of digests) stay bound: as statement text the parser would cap them
  // (max_query_size) and parse them slowly; those few statements wait for chDB's binder instead.
  const text = sets.join('; ');
  if (text.length > LARGE_PARAMS_CHARS) return params;
  return { ...params, query: `${text}; ${params.query}`, query_params: undefined };
}

/** A clickhouse-js Connection over chDB whose statements bind their parameters per session (inlineParams). */
export function withSessionParams<C extends object>(connection: C): C {
  return new Proxy(connection, {
    get(target, prop) {
      // The target as `this`: the connection keeps its state in private fields.
      const value: unknown = Reflect.get(target, prop);
      if (typeof value !== 'function') return value;
      if (prop === 'query' || prop === 'exec' || prop === 'command') {
        return (params: StatementParams) => (value as (p: StatementParams) => unknown).call(target, inlineParams(params));
      }
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
}
