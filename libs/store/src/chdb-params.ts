import { formatQueryParams } from '@clickhouse/client-common';

/** The part of a clickhouse-js Connection's statement parameters this module rewrites. */
interface StatementParams {
  query: string;
  query_params?: Record<string, unknown>;
  clickhouse_settings?: Record<string, unknown>;
}

/** Parameters longer than this (as SET text) are bound as before, not set in the session. */
const LARGE_PARAMS_CHARS = 64 * 1024;

/** A SQL string literal holding `text` exactly (ClickHouse's backslash escapes). */
const literal = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/**
 * The statement with its parameters set in its own session (`SET param_x = '…', param_y = …; SELECT {x:T}`)
 * instead of bound through chDB's binder: chdb-node runs every bound statement of the process
 * one after another (its binder is not safe across connections), which would make every lane
 * wait behind any other's statement. A session's parameters are its own, and the values are the
 * text a ClickHouse server receives as `param_x` over HTTP, so both modes bind alike.
 */
export function inlineParams<P extends StatementParams>(
  params: P,
  session?: { holdsParam(set: { name: string; literal: string }): boolean },
): P {
  const values = params.query_params;
  if (!values || Object.keys(values).length === 0) return params;
  const sets = Object.entries(values).map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`invalid parameter name ${JSON.stringify(name)}`);
    return { name, literal: literal(formatQueryParams({ value })) };
  });
  // Large values (thousands of digests) stay bound: as statement text the parser would cap them
  // (max_query_size) and parse them slowly; those few statements wait for chDB's binder instead.
  if (sets.reduce((n, s) => n + s.literal.length + s.name.length + 16, 0) > LARGE_PARAMS_CHARS) return params;
  // One SET for them all: each statement of a multi-statement query costs its own parse and run.
  const unsaid = sets.filter((s) => !session?.holdsParam(s)).map((s) => `param_${s.name} = ${s.literal}`);
  return { ...params, query: unsaid.length ? `SET ${unsaid.join(', ')}; ${params.query}` : params.query, query_params: undefined };
}

/**
 * What a chDB session has been told: each setting's and parameter's value as last sent. A
 * session keeps what a `SET` says until another says otherwise, so a statement need not say it
 * again — the lane's and the client's settings, the same on nearly every statement, were most
 * of a small read's cost when sent each time (docs/performance.md, "Reads").
 */
class SessionState {
  private readonly told = new Map<string, string>();

  /** The settings and SET statements a statement still needs, recorded as told (in the order they run). */
  unsaid(params: StatementParams): StatementParams {
    const settings = params.clickhouse_settings;
    let kept: Record<string, unknown> | undefined;
    if (settings) {
      kept = {};
      for (const [name, value] of Object.entries(settings)) {
        if (value === undefined) continue;
        const text = JSON.stringify(value);
        if (this.told.get(name) === text) continue;
        this.told.set(name, text);
        kept[name] = value;
      }
    }
    return { ...params, clickhouse_settings: kept };
  }

  /** Whether the session holds this parameter value already (else it is recorded as said: the statement says it). */
  holdsParam(set: { name: string; literal: string }): boolean {
    const key = `param_${set.name}`;
    if (this.told.get(key) === set.literal) return true;
    this.told.set(key, set.literal);
    return false;
  }

  /** After a failure, nothing is assumed: the next statement says everything again. */
  forget(): void {
    this.told.clear();
  }
}

/**
 * A clickhouse-js Connection over chDB whose statements bind their parameters per session
 * (inlineParams), and say only the settings and parameters the session does not hold already.
 */
export function withSessionParams<C extends object>(connection: C): C {
  const state = new SessionState();
  return new Proxy(connection, {
    get(target, prop) {
      // The target as `this`: the connection keeps its state in private fields.
      const value: unknown = Reflect.get(target, prop);
      if (typeof value !== 'function') return value;
      if (prop === 'query' || prop === 'exec' || prop === 'command') {
        return async (params: StatementParams) => {
          let bound = false;
          try {
            const statement = inlineParams(state.unsaid(params), state);
            bound = statement.query_params !== undefined;
            return await (value as (p: StatementParams) => Promise<unknown>).call(target, statement);
          } catch (e) {
            state.forget();
            throw e;
          } finally {
            // chDB's binder leaves the session without the parameters it held: say them all again.
            if (bound) state.forget();
          }
        };
      }
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
}
