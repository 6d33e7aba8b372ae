import { parseArgs } from 'node:util';
import type { AdminPath } from '@weft/auth';

export class UsageError extends Error {}

export const USAGE = `usage: weft <command> [options]

  migrate                               apply the schema migrations not yet applied, then exit
                                        (run once per deployment; services started with
                                        WEFT_MIGRATE=wait wait for it)
  keys create --user <name> [--entity <entity>]... [--admin] [--name <label>]
                                        create a key (shown once); the user and entities are created when missing
  keys list [--user <name>]             list keys (never the keys themselves)
  keys revoke <key_id>                  revoke a key
  entities create <name>                create an entity (team)
  entities list                         list entities and their members
  entities add-member <entity> <user>   make a user a member of an entity
  entities remove-member <entity> <user>
  export <entity/project> --format jsonl|csv|parquet [--out <file>] [--query <$expr JSON>]
         [--filter <filter JSON>] [--columns <a,b,…>] [--limit <n>]
                                        download the calls a query matches (progress on stderr)
  analytics <entity/project> --metrics <a,b,…> [--dimensions <a,b,…>] [--from <ISO>] [--to <ISO>]
         [--bucket minute|hour|day|week|month] [--query <$expr JSON>] [--filter <filter JSON>]
         [--limit <n>] [--format json|csv] [--out <file>]
                                        run a metrics query (/analytics/query); rows as JSON or CSV
  retention <entity/project> [<days>|off]
                                        show, or set, how many days the project's calls are kept
  redaction <entity/project> [off|pii-v1]
                                        show, or set, the project's sensitive-data policy (new calls)
  sampling <entity/project> [<rate 0–1> [--dry-run]]
                                        show, or set, the share of the project's new traces stored
  delivery <entity/project>             what became of the project's calls per entrance, and its lag
  dead-letters list [--state pending|replayed|discarded]
  dead-letters show|replay|discard <seq>
                                        the ingest log's dead letters (admin key): list them, show one
                                        with its values, publish one again through the write path
                                        (once), or discard it
  backup <dir> [--data-dir <dir>]       back up an all-in-one data directory (WEFT_DATA_DIR) into a new
                                        directory, with no server running on it (the engine's BACKUP)
  restore <dir> [--data-dir <dir>]      restore such a backup into a new data directory
  delete project <entity/project>       delete a project's data from the engine's parts (a job)
  delete user <svc_user_id>             delete every call of a user and the feedback on them (admin key)
  delete status <job_id>                whether a deletion job's data is gone
  monitors <entity/project> [list]      the project's Weave Monitors: active or not, ops, sampling, scorers
  monitors <entity/project> activate|deactivate <name>
                                        publish the monitor's latest version again with active set (as the SDK)
  alerts <entity/project> [list]        the project's AlertSpecs as weft evaluates them: state, last value, mute
  alerts <entity/project> events [--state firing|resolved] [--from <ISO>] [--limit <n>]
                                        the alerts' transitions, newest first, with each delivery
  alerts <entity/project> test <channel_id>
                                        send a test notification to a channel now
  evaluate <entity/project> --evaluation <ref> --model <ref> [--max-cost <usd>] [--wait]
                                        run an Evaluation against a model on the server (/evaluations/evaluate_model)
  evaluate <entity/project> replay --model <ref> [--scorers <ref,…>] [--filter <JSON>] [--query <$expr JSON>]
         [--limit <n>] [--name <name>] [--max-cost <usd>] [--wait]
                                        replay the calls a filter matches through a model, as an evaluation
  evaluate <entity/project> status|cancel <call_id>
                                        a server-side run's status, or cancel it (--wait: follow a run to its end)
  mcp [--url <url>] [--api-key <key>]   weft's MCP server over stdio (for Claude Code, Cursor…), reading the
                                        server at --url with that key (docs/mcp.md)

export, analytics, retention, redaction, sampling, delivery, dead-letters, delete, monitors, alerts, evaluate and mcp always go through a server: --url (default http://localhost:6345) and
--api-key (any key that may read the project).

Where the store is:
  --url <url> (or WEFT_URL)             a running weft server: uses its admin endpoints with
  --api-key <key> (or WEFT_API_KEY)     an admin key. Needed while a server holds an embedded store.
  otherwise                             the store itself, as the server would open it
                                        (CLICKHOUSE_URL, or embedded under WEFT_DATA_DIR).`;

/** `weft migrate`: on the store only (never through a server). */
export interface MigrateCommand {
  kind: 'migrate';
}

/** `weft backup|restore`: an all-in-one data directory, with no server on it. */
export interface BackupCommand {
  kind: 'backup' | 'restore';
  /** The backup's directory. */
  dir: string;
  /** The data directory (default WEFT_DATA_DIR). */
  dataDir?: string;
}

/** `weft export` / `weft analytics`: a read through a running server's HTTP API. */
export interface ReadCommand {
  kind: 'export' | 'analytics' | 'retention' | 'settings' | 'dead-letters' | 'delete';
  path:
    | '/calls/export'
    | '/analytics/query'
    | '/project/ttl_settings/read'
    | '/project/ttl_settings/update'
    | '/project/sensitive_data_settings'
    | '/project/sensitive_data_settings/update'
    | '/project/ingest_sampling_settings/read'
    | '/project/ingest_sampling_settings/update'
    | '/project/delivery'
    | '/admin/dead_letters/list'
    | '/admin/dead_letters/read'
    | '/admin/dead_letters/replay'
    | '/admin/dead_letters/discard'
    | '/project/delete'
    | '/user_data/delete'
    | '/deletion/status';
  body: Record<string, unknown>;
  /** Weave's GET routes take the body as the query string. */
  method?: 'GET';
  url: string;
  apiKey?: string;
  /** Where the bytes go (default: stdout). */
  out?: string;
  /** analytics: the rows as CSV instead of JSON. */
  csv?: boolean;
}

/** `weft mcp`: the MCP server over stdio, reading a running server (mcp.ts). */
export interface McpCommand {
  kind: 'mcp';
  url: string;
  apiKey: string;
}

/** `weft monitors` / `weft evaluate`: the server's work on traces, through its HTTP API (server-work.ts). */
export interface ServerWorkCommand {
  kind: 'server-work';
  action:
    | 'monitors list'
    | 'monitors activate'
    | 'monitors deactivate'
    | 'alerts list'
    | 'alerts events'
    | 'alerts test'
    | 'evaluate run'
    | 'evaluate replay'
    | 'evaluate status'
    | 'evaluate cancel';
  project: string;
  args: string[];
  body: Record<string, unknown>;
  wait: boolean;
  url: string;
  apiKey?: string;
}

export interface Command {
  kind: 'admin';
  path: AdminPath;
  body: Record<string, unknown>;
  url?: string;
  apiKey?: string;
}

/** Turns command-line arguments into one admin operation (the same bodies as the HTTP endpoints). */
export function parseCommand(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
): Command | MigrateCommand | ReadCommand | ServerWorkCommand | BackupCommand | McpCommand {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      user: { type: 'string' },
      entity: { type: 'string', multiple: true },
      admin: { type: 'boolean', default: false },
      name: { type: 'string' },
      url: { type: 'string' },
      'api-key': { type: 'string' },
      format: { type: 'string' },
      out: { type: 'string' },
      query: { type: 'string' },
      filter: { type: 'string' },
      columns: { type: 'string' },
      limit: { type: 'string' },
      metrics: { type: 'string' },
      dimensions: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      bucket: { type: 'string' },
      state: { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
      'data-dir': { type: 'string' },
      evaluation: { type: 'string' },
      model: { type: 'string' },
      scorers: { type: 'string' },
      'max-cost': { type: 'string' },
      wait: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) throw new UsageError(USAGE);
  const [group, action, ...rest] = positionals;
  if (group === 'migrate') {
    if (action !== undefined) throw new UsageError(`weft migrate takes no arguments\n\n${USAGE}`);
    return { kind: 'migrate' };
  }
  if (group === 'backup' || group === 'restore') {
    if (!action || rest.length > 0) throw new UsageError(`weft ${group} takes one directory (the backup's)\n\n${USAGE}`);
    return { kind: group, dir: action, ...(values['data-dir'] ? { dataDir: values['data-dir'] } : {}) };
  }
  const common = { url: values.url ?? env.WEFT_URL ?? undefined, apiKey: values['api-key'] ?? env.WEFT_API_KEY ?? undefined };
  if (group === 'mcp') {
    if (action !== undefined) throw new UsageError(`weft mcp takes options only (--url, --api-key)\n\n${USAGE}`);
    if (!common.apiKey) throw new UsageError('weft mcp needs a key: --api-key <key> or WEFT_API_KEY');
    return { kind: 'mcp', url: common.url ?? 'http://localhost:6345', apiKey: common.apiKey };
  }
  if (group === 'retention') {
    if (!action || rest.length > 1) throw new UsageError(`weft retention takes a project and, to set it, <days> or off\n\n${USAGE}`);
    const where = { ...common, url: common.url ?? 'http://localhost:6345' };
    if (rest.length === 0) return { kind: 'retention', path: '/project/ttl_settings/read', body: { project_id: action }, ...where };
    const days = rest[0] === 'off' ? null : Number(rest[0]);
    if (days !== null && !(Number.isInteger(days) && days >= 1))
      throw new UsageError(`weft retention: <days> is a whole number ≥ 1, or off (got ${rest[0]})`);
    return { kind: 'retention', path: '/project/ttl_settings/update', body: { project_id: action, retention_days: days }, ...where };
  }
  if (group === 'redaction' || group === 'sampling' || group === 'delivery') {
    const where = { ...common, url: common.url ?? 'http://localhost:6345' };
    const takes = { redaction: 'off or pii-v1', sampling: 'a rate from 0 to 1', delivery: 'nothing more' }[group];
    if (!action || rest.length > (group === 'delivery' ? 0 : 1))
      throw new UsageError(`weft ${group} takes a project and ${takes}\n\n${USAGE}`);
    const project_id = action;
    if (group === 'delivery') return { kind: 'settings', path: '/project/delivery', body: { project_id }, ...where };
    if (group === 'redaction') {
      if (rest.length === 0)
        return { kind: 'settings', method: 'GET', path: '/project/sensitive_data_settings', body: { project_id }, ...where };
      if (rest[0] !== 'off' && rest[0] !== 'pii-v1') throw new UsageError(`weft redaction: the policy is off or pii-v1 (got ${rest[0]})`);
      return { kind: 'settings', path: '/project/sensitive_data_settings/update', body: { project_id, policy: rest[0] }, ...where };
    }
    if (rest.length === 0) return { kind: 'settings', path: '/project/ingest_sampling_settings/read', body: { project_id }, ...where };
    const rate = Number(rest[0]);
    if (!(rest[0] !== '' && rate >= 0 && rate <= 1))
      throw new UsageError(`weft sampling: the rate is a number from 0 to 1 (got ${rest[0]})`);
    return {
      kind: 'settings',
      path: '/project/ingest_sampling_settings/update',
      body: { project_id, sample_rate: rate, dry_run: values['dry-run'] },
      ...where,
    };
  }
  if (group === 'dead-letters') {
    const where = { ...common, url: common.url ?? 'http://localhost:6345' };
    if (action === 'list' && rest.length === 0)
      return { kind: 'dead-letters', path: '/admin/dead_letters/list', body: values.state ? { state: values.state } : {}, ...where };
    const paths = {
      show: '/admin/dead_letters/read',
      replay: '/admin/dead_letters/replay',
      discard: '/admin/dead_letters/discard',
    } as const;
    const seq = Number(rest[0]);
    if (!(action! in paths) || rest.length !== 1 || !Number.isInteger(seq) || seq < 0)
      throw new UsageError(`weft dead-letters takes list, or show|replay|discard and a dead letter's number\n\n${USAGE}`);
    return { kind: 'dead-letters', path: paths[action as keyof typeof paths], body: { seq }, ...where };
  }
  if (group === 'delete') {
    const where = { ...common, url: common.url ?? 'http://localhost:6345' };
    if (rest.length !== 1)
      throw new UsageError(`weft delete takes project <entity/project>, user <svc_user_id> or status <job_id>\n\n${USAGE}`);
    if (action === 'project') return { kind: 'delete', path: '/project/delete', body: { project_id: rest[0] }, ...where };
    if (action === 'user') return { kind: 'delete', path: '/user_data/delete', body: { svc_user_id: rest[0] }, ...where };
    if (action === 'status') return { kind: 'delete', path: '/deletion/status', body: { job_id: rest[0] }, ...where };
    throw new UsageError(`weft delete takes project <entity/project>, user <svc_user_id> or status <job_id>\n\n${USAGE}`);
  }
  if (group === 'alerts') {
    const where = { ...common, url: common.url ?? 'http://localhost:6345' };
    if (!action) throw new UsageError(`weft alerts takes a project (<entity>/<project>)\n\n${USAGE}`);
    return alertsCommand(action, rest, values, where);
  }
  if (group === 'monitors' || group === 'evaluate') {
    const where = { ...common, url: common.url ?? 'http://localhost:6345' };
    if (!action) throw new UsageError(`weft ${group} takes a project (<entity>/<project>)\n\n${USAGE}`);
    return serverWorkCommand(group, action, rest, values, where);
  }
  if (group === 'export' || group === 'analytics') {
    if (!action || rest.length) throw new UsageError(`weft ${group} takes one project (<entity>/<project>)\n\n${USAGE}`);
    return readCommand(group, action, values, { ...common, url: common.url ?? 'http://localhost:6345' });
  }
  const need = (n: number, what: string) => {
    if (rest.length !== n) throw new UsageError(`weft ${group} ${action} takes ${what}\n\n${USAGE}`);
  };
  const cmd = (path: AdminPath, body: Record<string, unknown>): Command => ({ kind: 'admin', path, body, ...common });
  switch (`${group} ${action}`) {
    case 'keys create':
      need(0, 'options only');
      if (!values.user) throw new UsageError(`weft keys create needs --user <name>\n\n${USAGE}`);
      return cmd('/admin/keys/create', { user: values.user, admin: values.admin, entities: values.entity ?? [], name: values.name });
    case 'keys list':
      need(0, 'options only');
      return cmd('/admin/keys/list', values.user ? { user: values.user } : {});
    case 'keys revoke':
      need(1, 'one key id');
      return cmd('/admin/keys/revoke', { key_id: rest[0] });
    case 'entities create':
      need(1, 'one entity name');
      return cmd('/admin/entities/create', { name: rest[0] });
    case 'entities list':
      need(0, 'no arguments');
      return cmd('/admin/entities/list', {});
    case 'entities add-member':
      need(2, '<entity> <user>');
      return cmd('/admin/entities/add_member', { entity: rest[0], user: rest[1] });
    case 'entities remove-member':
      need(2, '<entity> <user>');
      return cmd('/admin/entities/remove_member', { entity: rest[0], user: rest[1] });
    default:
      throw new UsageError(USAGE);
  }
}

/** A --filter or --query option's JSON (a query is the $expr body); a clear usage error when it is not JSON. */
function jsonOption(flag: 'query' | 'filter', text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    return flag === 'query' ? { $expr: v } : v;
  } catch {
    throw new UsageError(`--${flag} is not JSON: ${text}`);
  }
}

type ReadOptions = Partial<
  Record<'format' | 'out' | 'query' | 'filter' | 'columns' | 'limit' | 'metrics' | 'dimensions' | 'from' | 'to' | 'bucket', string>
>;

/** The body of an export or a metrics query from the options (the server checks it and names what is wrong). */
function readCommand(group: 'export' | 'analytics', project: string, o: ReadOptions, where: { url: string; apiKey?: string }): ReadCommand {
  const json = (flag: 'query' | 'filter') => jsonOption(flag, o[flag]);
  const list = (s: string | undefined) => (s === undefined ? undefined : s.split(',').filter(Boolean));
  const limit = o.limit === undefined ? undefined : Number(o.limit);
  if (limit !== undefined && !Number.isInteger(limit)) throw new UsageError(`--limit must be an integer: ${o.limit}`);
  const body: Record<string, unknown> = { project_id: project, query: json('query'), filter: json('filter'), limit };
  if (group === 'export') {
    if (!o.format) throw new UsageError(`weft export needs --format jsonl|csv|parquet\n\n${USAGE}`);
    Object.assign(body, { format: o.format, columns: list(o.columns) });
    return { kind: 'export', path: '/calls/export', body, out: o.out, ...where };
  }
  if (!o.metrics) throw new UsageError(`weft analytics needs --metrics <a,b,…>\n\n${USAGE}`);
  if (o.format !== undefined && o.format !== 'json' && o.format !== 'csv') throw new UsageError('--format is json or csv for analytics');
  Object.assign(body, { metrics: list(o.metrics), dimensions: list(o.dimensions) ?? [], from: o.from, to: o.to, bucket: o.bucket });
  return { kind: 'analytics', path: '/analytics/query', body, out: o.out, csv: o.format === 'csv', ...where };
}

type ServerWorkOptions = Partial<
  Record<'evaluation' | 'model' | 'scorers' | 'max-cost' | 'filter' | 'query' | 'limit' | 'name', string>
> & {
  wait?: boolean;
};

function serverWorkCommand(
  group: 'monitors' | 'evaluate',
  project: string,
  rest: string[],
  o: ServerWorkOptions,
  where: { url: string; apiKey?: string },
): ServerWorkCommand {
  const base = { kind: 'server-work' as const, project, args: rest.slice(1), body: {}, wait: o.wait === true, ...where };
  const [sub] = rest;
  if (group === 'monitors') {
    if (sub === undefined || (sub === 'list' && rest.length === 1)) return { ...base, action: 'monitors list' };
    if ((sub === 'activate' || sub === 'deactivate') && rest.length === 2) return { ...base, action: `monitors ${sub}` };
    throw new UsageError(`weft monitors takes a project, then list, or activate|deactivate <name>\n\n${USAGE}`);
  }
  if ((sub === 'status' || sub === 'cancel') && rest.length === 2) return { ...base, action: `evaluate ${sub}` };
  const cost = o['max-cost'] === undefined ? undefined : Number(o['max-cost']);
  if (cost !== undefined && !(cost > 0)) throw new UsageError(`--max-cost is a positive number of USD: ${o['max-cost']}`);
  if (!o.model) throw new UsageError(`weft evaluate needs --model <model ref>\n\n${USAGE}`);
  if (sub === 'replay' && rest.length === 1) {
    const json = (flag: 'filter' | 'query') => jsonOption(flag, o[flag]);
    const limit = o.limit === undefined ? undefined : Number(o.limit);
    if (limit !== undefined && !Number.isInteger(limit)) throw new UsageError(`--limit must be an integer: ${o.limit}`);
    const body = {
      model_ref: o.model,
      scorer_refs: o.scorers ? o.scorers.split(',').filter(Boolean) : undefined,
      filter: json('filter'),
      query: json('query'),
      limit,
      name: o.name,
      max_cost_usd: cost,
    };
    return { ...base, action: 'evaluate replay', body };
  }
  if (rest.length > 0) throw new UsageError(`weft evaluate: unexpected ${rest.join(' ')}\n\n${USAGE}`);
  if (!o.evaluation) throw new UsageError(`weft evaluate needs --evaluation <Evaluation ref>\n\n${USAGE}`);
  return { ...base, action: 'evaluate run', body: { evaluation_ref: o.evaluation, model_ref: o.model, max_cost_usd: cost } };
}

/** `weft alerts <project> [list] | events [--state] [--from] [--limit] | test <channel_id>`. */
function alertsCommand(
  project: string,
  rest: string[],
  o: Partial<Record<'state' | 'from' | 'limit', string>>,
  where: { url: string; apiKey?: string },
): ServerWorkCommand {
  const base = { kind: 'server-work' as const, project, args: rest.slice(1), body: {}, wait: false, ...where };
  const [sub] = rest;
  if (sub === undefined || (sub === 'list' && rest.length === 1)) return { ...base, action: 'alerts list' };
  if (sub === 'test' && rest.length === 2) return { ...base, action: 'alerts test' };
  if (sub === 'events' && rest.length === 1) {
    const limit = o.limit === undefined ? undefined : Number(o.limit);
    if (limit !== undefined && !Number.isInteger(limit)) throw new UsageError(`--limit must be an integer: ${o.limit}`);
    return { ...base, action: 'alerts events', body: { state: o.state, since: o.from, limit } };
  }
  throw new UsageError(`weft alerts takes a project, then list, events, or test <channel_id>\n\n${USAGE}`);
}
