import { ApiError, invalidField } from '@weft/core';
import { latencySql, traceNameSql } from './call-json';
import { callTotalCostSql, callTotalTokensSql } from './costs';
import { jsonFieldRef, splitFieldPath, type FieldRef, type FieldResolver } from './expr';
import type { Params } from './params';

/**
 * Call fields for filters and sorts, resolved over the columns of a merged call row
 * (the names of MERGED_CALL_COLUMNS). Records which merged columns a query touches, so the
 * id-selecting phase aggregates only those.
 */
const PLAIN: Record<string, FieldRef['kind']> = {
  id: 'string',
  project_id: 'string',
  trace_id: 'string',
  parent_id: 'string',
  thread_id: 'string',
  turn_id: 'string',
  op_name: 'string',
  display_name: 'string',
  exception: 'string',
  svc_user_id: 'string',
  svc_run_id: 'string',
  started_at: 'datetime',
  ended_at: 'datetime',
  deleted_at: 'datetime',
  svc_run_step: 'number',
  svc_run_step_end: 'number',
  input_refs: 'array',
  output_refs: 'array',
};

/** The reference's names of the svc_ fields (the Weave SDK filters, sorts and selects by them). */
export const REFERENCE_CALL_FIELDS: Readonly<Record<string, string>> = {
  wb_user_id: 'svc_user_id',
  wb_run_id: 'svc_run_id',
  wb_run_step: 'svc_run_step',
  wb_run_step_end: 'svc_run_step_end',
};

/** A call field under the interface's name (`wb_run_id` → `svc_run_id`); other names as they are. */
export const interfaceCallField = (name: string): string => REFERENCE_CALL_FIELDS[name] ?? name;

/**
 * Feedback on a call read as a column of its row (reference CallsMergedFeedbackPayloadField):
 * `feedback.[<type>].payload.<path>`, `…runnable_ref`, `…trigger_ref`; `[*]` for any type. Each
 * distinct (type, column) becomes one column `fb_<n>` of the joined row: one feedback row of that
 * type per call (any, as the reference), joined by the call's ref.
 */
export interface FeedbackColumn {
  name: string;
  /** The feedback_type bound as a parameter, or null for `*`. */
  typeSql: string | null;
  column: 'payload_dump' | 'runnable_ref' | 'trigger_ref';
}

/** The feedback columns one calls query reads, shared by all its resolvers (types bound once, in the plan's parameters). */
export class FeedbackColumns {
  readonly byName = new Map<string, FeedbackColumn>();
  private readonly byKey = new Map<string, FeedbackColumn>();
  constructor(private readonly p: Params) {}

  add(type: string, column: FeedbackColumn['column']): FeedbackColumn {
    const key = `${type}\u0000${column}`;
    let c = this.byKey.get(key);
    if (!c) {
      c = { name: `fb_${this.byKey.size}`, typeSql: type === '*' ? null : this.p.str(type), column };
      this.byKey.set(key, c);
      this.byName.set(c.name, c);
    }
    return c;
  }
}

/** Where a ref expansion's ref is read: a call's dump (`inputs_dump`, `output_dump`) or an expansion's value. */
const REF_SOURCE = '__ref_source__';

/** An expanded ref column (`expand_columns`): the value of the object the ref at `path` names, as the column `x_<n>`. */
export interface ExpansionColumn {
  name: string;
  /** The column the ref is read from: a dump of the call row, or the expansion it lies under. */
  source: string;
  /** The ref's text over the source (REF_SOURCE stands for it; see refSql). */
  ref: string;
}

/**
 * `expand_columns` for filters and sorts (reference §3.6): a field under an expanded column
 * reads the referenced object's value, e.g. `inputs.worker_config.id` with
 * `inputs.worker_config` expanded; an expanded column under another reads its ref from the
 * outer one's value (`inputs.worker_config.config`). Each becomes one column of the joined
 * row, joined with the project's object versions by ref (CallsQueryPlan).
 */
export class RefExpansions {
  readonly columns: ExpansionColumn[] = [];
  private readonly byPath = new Map<string, ExpansionColumn>();
  private readonly paths: string[];

  constructor(
    expandColumns: readonly string[],
    private readonly p: Params,
  ) {
    this.paths = [...new Set(expandColumns)].filter((c) => (JSON_ROOTS as readonly string[]).includes(c.split('.')[0]!) && c.includes('.'));
  }

  /** The expansion a field lies under (the longest expanded prefix), and the keys below it; null when none. */
  under(path: string): { column: ExpansionColumn; keys: string[] } | null {
    const prefix = this.longestPrefix(path);
    if (!prefix) return null;
    return { column: this.column(prefix), keys: splitFieldPath(path.slice(prefix.length + 1)) };
  }

  /** The SQL of a column's ref over the SQL of its source. */
  static refSql(c: ExpansionColumn, sourceSql: string): string {
    return `ifNull(${c.ref.replaceAll(REF_SOURCE, sourceSql)}, '')`;
  }

  private longestPrefix(path: string): string | undefined {
    return this.paths.filter((c) => path.startsWith(`${c}.`)).sort((a, b) => b.length - a.length)[0];
  }

  private column(path: string): ExpansionColumn {
    const known = this.byPath.get(path);
    if (known) return known;
    const outer = this.longestPrefix(path);
    const [root, ...keys] = splitFieldPath(path);
    const source = outer ? this.column(outer).name : `${root}_dump`;
    const below = outer ? splitFieldPath(path.slice(outer.length + 1)) : keys;
    const c: ExpansionColumn = { name: `x_${this.columns.length}`, source, ref: jsonFieldRef(REF_SOURCE, below, this.p).sql };
    this.columns.push(c);
    this.byPath.set(path, c);
    return c;
  }
}

/** The fields of a call's annotation queue items a query may read. */
const QUEUE_ITEM_FIELDS = ['queue_id', 'id', 'added_by', 'created_by'];

const FEEDBACK_FIELD = /^feedback\.\[(.+)\]\.(.+)$/;

export const JSON_ROOTS = ['inputs', 'output', 'attributes', 'summary'] as const;

/** Sortable and selectable, not filterable (as the reference). */
export const STORAGE_SIZE_FIELDS = ['storage_size_bytes', 'total_storage_size_bytes'];

export class CallFieldResolver implements FieldResolver {
  /** Merged columns referenced so far (beyond id/project_id). */
  readonly used = new Set<string>();

  /** @param projectParam the bound project id, which pricing a call's usage needs (total_cost). */
  constructor(
    private readonly projectParam: string,
    private readonly feedback?: FeedbackColumns,
    private readonly expansions?: RefExpansions,
  ) {}

  resolve(field: string, p: Params): FieldRef {
    if (field.startsWith('feedback.')) return this.feedbackField(field, p);
    if (field.startsWith('annotation_queue_items.')) return this.queueItemField(field);
    const path = interfaceCallField(field);
    const plain = PLAIN[path];
    if (plain) {
      if (path !== 'id' && path !== 'project_id') this.used.add(path);
      return { sql: path, kind: plain };
    }
    const expanded = this.expansions?.under(path);
    if (expanded) {
      if (expanded.keys.some((k) => k === '')) throw new ApiError(400, `field '${path}' has an empty path segment`, { field: path });
      this.useExpansion(expanded.column);
      return jsonFieldRef(expanded.column.name, expanded.keys, p);
    }
    const [root, ...rest] = splitFieldPath(path);
    if ((JSON_ROOTS as readonly string[]).includes(root!)) {
      if (root === 'summary' && rest[0] === 'weave' && rest.length === 2) {
        const derived = this.derived(rest[1]!);
        if (derived) return derived;
      }
      const dump = `${root}_dump`;
      this.used.add(dump);
      if (rest.length === 0) return jsonFieldRef(dump, [], p);
      if (rest.some((k) => k === '')) throw new ApiError(400, `field '${path}' has an empty path segment`, { field: path });
      return jsonFieldRef(dump, rest, p);
    }
    if (STORAGE_SIZE_FIELDS.includes(path)) {
      throw invalidField(`field '${path}' can be selected but not filtered or sorted on`, path);
    }
    throw invalidField(`unknown field '${path}'`, path);
  }

  /** An expansion and what it is read from: the dump, or the outer expansion (columns the row must carry). */
  private useExpansion(c: ExpansionColumn): void {
    this.used.add(c.name);
    const outer = this.expansions!.columns.find((x) => x.name === c.source);
    if (outer) this.useExpansion(outer);
    else this.used.add(c.source);
  }

  private feedbackField(path: string, p: Params): FieldRef {
    const m = FEEDBACK_FIELD.exec(path);
    if (!m) throw invalidField(`invalid feedback field '${path}': expected feedback.[<type>].payload.<path>`, path);
    if (!this.feedback) throw new ApiError(400, `field '${path}': feedback fields are not supported here`, { field: path });
    const [root, ...rest] = splitFieldPath(m[2]!);
    if (root === 'payload') {
      if (rest.some((k) => k === '')) throw new ApiError(400, `field '${path}' has an empty path segment`, { field: path });
      const c = this.feedback.add(m[1]!, 'payload_dump');
      this.used.add(c.name);
      return jsonFieldRef(c.name, rest, p);
    }
    if ((root === 'runnable_ref' || root === 'trigger_ref') && rest.length === 0) {
      const c = this.feedback.add(m[1]!, root);
      this.used.add(c.name);
      return { sql: `nullIf(${c.name}, '')`, kind: 'string' };
    }
    throw invalidField(`invalid feedback field '${path}': expected payload, runnable_ref or trigger_ref after the type`, path);
  }

  /**
   * `annotation_queue_items.<field>` (the reference's queue filter, e.g. the calls of a queue:
   * `$eq` of `annotation_queue_items.queue_id` and a queue's id): the values of that field over
   * the call's live items in the project's queues, as a list (so `$eq` and `$in` mean "one of
   * its items has it"; a call in no queue, or an unknown queue, matches nothing).
   */
  private queueItemField(path: string): FieldRef {
    const name = path.slice('annotation_queue_items.'.length);
    if (!QUEUE_ITEM_FIELDS.includes(name)) throw invalidField(`unknown field '${path}'`, path);
    const items = `SELECT call_id, groupArray(toString(${name})) AS v FROM annotation_queue_items FINAL
      WHERE project_id = ${this.projectParam} AND deleted_at IS NULL GROUP BY call_id`;
    return { sql: `arrayElement((SELECT mapFromArrays(groupArray(call_id), groupArray(v)) FROM (${items})), id)`, kind: 'array' };
  }

  /** summary.weave.* computed from the row, as the derived summary shown on read. */
  private derived(name: string): FieldRef | null {
    switch (name) {
      case 'status':
        // calls_ends' ready-made column: no summary parsed per row. A call
        // without an end row reads '' through the join: running.
        this.used.add('status');
        return { sql: `if(status = '', 'running', status)`, kind: 'string' };
      case 'latency_ms':
        this.used.add('started_at').add('ended_at');
        return { sql: latencySql, kind: 'number' };
      // Ours, not the reference's: the UI's Tokens and Cost columns (sums over models), sortable.
      case 'total_tokens':
        this.used.add('usage');
        return { sql: callTotalTokensSql, kind: 'number' };
      case 'total_cost':
        this.used.add('usage').add('started_at');
        return { sql: callTotalCostSql(this.projectParam), kind: 'number' };
      case 'trace_name':
        this.used.add('display_name').add('op_name');
        return {
          sql: `if(ifNull(display_name, '') != '', display_name, ${traceNameSql('op_name')})`,
          kind: 'string',
        };
      default:
        return null;
    }
  }
}
