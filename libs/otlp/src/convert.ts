import { createHash } from 'node:crypto';
import type { CallEndBody, CallStartBody } from '@weft/api';
import { microsToIso, parseProjectId, parseTimestampMicros } from '@weft/core';
import { expandAttributes, getPath } from './attributes';
import { OtlpRequestError, SpanConversionError } from './errors';
import { idForMessage, parentIdHex, spanIdHex, traceIdHex } from './ids';
import { addNormalizedReading } from './normalized';
import { extractAttributes, extractInputs, extractOutput, extractUsage, extractWandbKeys, modelName } from './semconv';
import { toBigInt, unixNanosToMicros } from './time';
import { getOwn, isObject, keyValuesToRecord, member, setOwn, type Loose } from './values';

/** One span as a call: the start and the end the reference would write for it. */
export interface OtelCall {
  start: CallStartBody & { id: string; trace_id: string };
  end: CallEndBody;
  /** The span's start and end (epoch µs), as the call part holds them: not parsed again from the bodies' ISO text. */
  startedAtMicros: number;
  endedAtMicros: number;
}

export interface ConvertOptions {
  /** The project named by the request (body field or header); wins over resource attributes. */
  projectId: string | null;
  /** `svc_run_id` of the request, if any; a span's `wandb.wb_run_id` is used otherwise. */
  runId?: string | null;
}

export interface ExportConversion {
  calls: OtelCall[];
  rejectedSpans: number;
  /** One `Rejected span (...)` message per rejected span. */
  errors: string[];
  /** The same rejections, structured, for logs and metrics. */
  rejections: SpanRejection[];
}

export interface SpanRejection {
  /** The project the span would have gone to, if known. */
  project: string | null;
  name: string;
  traceId: string;
  spanId: string;
  /** Bounded label (`invalid_span_id`, `no_project`, ...). */
  reason: string;
  message: string;
}

export interface PartialSuccess {
  rejected_spans: number;
  error_message: string;
}

const MAX_OP_NAME = 128;
const MAX_MESSAGES = 20;

/**
 * An OTLP ExportTraceServiceRequest (protobufjs-decoded or its JSON mapping) → calls.
 * A span that cannot be converted is rejected and reported; the rest is converted.
 * Throws only OtlpRequestError, for a request whose structure is unusable as a whole.
 */
export function convertExportRequest(req: unknown, opts: ConvertOptions): ExportConversion {
  if (!isObject(req)) throw new OtlpRequestError('traces must be an ExportTraceServiceRequest object', 'traces');
  const resourceSpans = member(req, 'resourceSpans', 'resource_spans') ?? [];
  if (!Array.isArray(resourceSpans)) throw new OtlpRequestError('resourceSpans must be a list', 'resourceSpans');

  const out: ExportConversion = { calls: [], rejectedSpans: 0, errors: [], rejections: [] };
  let projectless = 0;
  const reject = (span: unknown, err: SpanConversionError, project: string | null) => {
    out.rejectedSpans++;
    const s = isObject(span) ? span : {};
    const name = typeof s.name === 'string' ? s.name.slice(0, 256) : '';
    const traceId = idForMessage(member(s, 'traceId', 'trace_id'));
    const spanId = idForMessage(member(s, 'spanId', 'span_id'));
    out.errors.push(`Rejected span (name='${name}' trace_id='${traceId}' span_id='${spanId}'): ${err.message}`);
    out.rejections.push({ project, name, traceId, spanId, reason: err.reason, message: err.message });
  };

  resourceSpans.forEach((rs, i) => {
    if (!isObject(rs)) throw new OtlpRequestError('each resourceSpans entry must be an object', `resourceSpans.${i}`);
    const resource = isObject(rs.resource) ? rs.resource : {};
    const resourceAttributes = keyValuesToRecord(resource.attributes);
    const project = opts.projectId ?? projectFromResource(resourceAttributes);
    const resourceDump = { attributes: resourceAttributes, schema_url: strOr(member(rs, 'schemaUrl', 'schema_url'), '') };
    const scopeSpans =
      member(rs, 'scopeSpans', 'scope_spans') ?? member(rs, 'instrumentationLibrarySpans', 'instrumentation_library_spans') ?? [];
    if (!Array.isArray(scopeSpans)) throw new OtlpRequestError('scopeSpans must be a list', `resourceSpans.${i}.scopeSpans`);
    scopeSpans.forEach((ss, j) => {
      if (!isObject(ss)) throw new OtlpRequestError('each scopeSpans entry must be an object', `resourceSpans.${i}.scopeSpans.${j}`);
      const scope = isObject(ss.scope) ? ss.scope : isObject(ss.instrumentationLibrary) ? ss.instrumentationLibrary : {};
      const scopeDump = {
        name: strOr(scope.name, ''),
        version: strOr(scope.version, ''),
        attributes: keyValuesToRecord(scope.attributes),
      };
      const spans = ss.spans ?? [];
      if (!Array.isArray(spans)) throw new OtlpRequestError('spans must be a list', `resourceSpans.${i}.scopeSpans.${j}.spans`);
      for (const span of spans) {
        if (project === null) {
          projectless++;
          reject(
            span,
            new SpanConversionError(
              'no project: send the project_id header or the resource attributes wandb.entity and wandb.project',
              'no_project',
            ),
            null,
          );
          continue;
        }
        try {
          out.calls.push(convertSpan(span, { project, resource: resourceDump, scope: scopeDump, runId: opts.runId ?? null }));
        } catch (e) {
          if (e instanceof SpanConversionError) reject(span, e, project);
          else throw e;
        }
      }
    });
  });
  if (projectless > 0 && projectless === out.rejectedSpans && out.calls.length === 0) {
    throw new OtlpRequestError(
      'no project: send the project_id header (<entity>/<project>) or the resource attributes wandb.entity and wandb.project',
      'project_id',
    );
  }
  linkTurns(out.calls);
  return out;
}

/** The response's partial_success: null when every span was accepted. */
export function partialSuccessOf(c: Pick<ExportConversion, 'rejectedSpans' | 'errors'>): PartialSuccess | null {
  if (c.rejectedSpans === 0) return null;
  let error_message = c.errors.slice(0, MAX_MESSAGES).join('; ');
  if (c.errors.length > MAX_MESSAGES) error_message += '; ...';
  return { rejected_spans: c.rejectedSpans, error_message };
}

function projectFromResource(attrs: Record<string, unknown>): string | null {
  const entity = attrs['wandb.entity'];
  const project = attrs['wandb.project'];
  if (typeof entity !== 'string' || typeof project !== 'string') return null;
  const id = `${entity}/${project}`;
  return parseProjectId(id) && !/\s/.test(id) ? id : null;
}

interface SpanContext {
  project: string;
  resource: Record<string, unknown>;
  scope: Record<string, unknown>;
  runId: string | null;
}

const SPAN_KINDS = [
  'SPAN_KIND_UNSPECIFIED',
  'SPAN_KIND_INTERNAL',
  'SPAN_KIND_SERVER',
  'SPAN_KIND_CLIENT',
  'SPAN_KIND_PRODUCER',
  'SPAN_KIND_CONSUMER',
];
const STATUS_CODES = ['STATUS_CODE_UNSET', 'STATUS_CODE_OK', 'STATUS_CODE_ERROR'];

function enumName(v: unknown, names: string[]): string {
  if (typeof v === 'number' && names[v]) return names[v]!;
  if (typeof v === 'string') return names.includes(v) ? v : (names.find((n) => n.endsWith('_' + v.toUpperCase())) ?? names[0]!);
  return names[0]!;
}

const strOr = (v: unknown, d: string) => (typeof v === 'string' ? v : d);

/** The reference shortens op names of 128+ chars to 128, ending in `:` + 4 hex chars of the name's sha256. */
export function shortenOpName(name: string): string {
  if (name.length < MAX_OP_NAME) return name;
  const abbrev = ':' + createHash('sha256').update(name).digest('hex').slice(0, 4);
  return name.slice(0, MAX_OP_NAME - abbrev.length) + abbrev;
}

function listOf(span: Loose, camel: string, snake: string, field: string): unknown[] {
  const v = member(span, camel, snake);
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new SpanConversionError(`invalid ${field}: not a list`);
  return v;
}

const nanosToIsoOrNull = (v: unknown): string | null => {
  const n = toBigInt(v);
  return n !== null && n > 0n && n / 1000n <= BigInt(Number.MAX_SAFE_INTEGER) ? microsToIso(Number(n / 1000n)) : null;
};

/** A time override attribute (Langfuse's `langfuse.startTime`): ISO text or epoch nanos. */
function overrideMicros(v: unknown): number | null {
  if (typeof v === 'string') {
    const iso = parseTimestampMicros(v);
    if (iso !== null) return iso;
  }
  const n = toBigInt(v);
  return n !== null && n > 0n && n / 1000n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n / 1000n) : null;
}

export function convertSpan(span: unknown, ctx: SpanContext): OtelCall {
  if (!isObject(span)) throw new SpanConversionError('span is not an object', 'invalid_span');
  const name = span.name;
  if (typeof name !== 'string' || name === '') throw new SpanConversionError('invalid name: missing or empty');
  const traceId = traceIdHex(member(span, 'traceId', 'trace_id'));
  const spanId = spanIdHex(member(span, 'spanId', 'span_id'));
  const parentId = parentIdHex(member(span, 'parentSpanId', 'parent_span_id'));
  const startNanos = member(span, 'startTimeUnixNano', 'start_time_unix_nano');
  const endNanos = member(span, 'endTimeUnixNano', 'end_time_unix_nano');
  let started = unixNanosToMicros(startNanos, 'start_time_unix_nano');
  let ended = unixNanosToMicros(endNanos, 'end_time_unix_nano');

  const flat = keyValuesToRecord(listOf(span, 'attributes', 'attributes', 'attributes'));
  const tree = expandAttributes(flat);
  started = overrideMicros(getPath(tree, 'langfuse.startTime')) ?? started;
  ended = overrideMicros(getPath(tree, 'langfuse.endTime')) ?? ended;
  if (ended < started) throw new SpanConversionError('invalid end_time_unix_nano: before start_time_unix_nano');

  const events = listOf(span, 'events', 'events', 'events')
    .filter(isObject)
    .map((e) => ({
      name: strOr(e.name, ''),
      timestamp: nanosToIsoOrNull(member(e, 'timeUnixNano', 'time_unix_nano')),
      attributes: keyValuesToRecord(e.attributes),
    }));
  // Some agents (Bedrock/Strands) put messages in span events: visible to the input/output keys as `events.<name>`.
  const withEvents = events.length > 0 ? withEventTree(tree, events) : tree;
  const {
    inputs,
    output,
    attributes: mapped,
  } = addNormalizedReading(tree, extractInputs(withEvents), extractOutput(withEvents), extractAttributes(tree));
  const usage = extractUsage(tree);
  const nothingFound = Object.keys(inputs).length === 0 && output === null && usage === null && Object.keys(mapped).length === 0;
  const wb = extractWandbKeys(tree);

  const status = isObject(span.status) ? span.status : {};
  const statusCode = enumName(status.code, STATUS_CODES);
  const statusMessage = strOr(status.message, '');
  const links = listOf(span, 'links', 'links', 'links')
    .filter(isObject)
    .map((l) => ({
      context: {
        trace_id: idForMessage(member(l, 'traceId', 'trace_id')),
        span_id: idForMessage(member(l, 'spanId', 'span_id')),
        trace_state: strOr(member(l, 'traceState', 'trace_state'), ''),
      },
      attributes: keyValuesToRecord(l.attributes),
    }));

  let exception: string | null = null;
  if (statusCode === 'STATUS_CODE_ERROR') exception = statusMessage || exceptionFromEvents(events) || 'error';

  const summary: Record<string, unknown> = {};
  if (usage) summary.usage = { [modelName(tree) ?? 'usage']: usage };

  const startIso = microsToIso(started);
  const endIso = microsToIso(ended);
  const otelDump = {
    name,
    context: { trace_id: traceId, span_id: spanId, trace_state: strOr(member(span, 'traceState', 'trace_state'), '') },
    // The reference's enum names (python_spans: `INTERNAL`, `OK`), not the protobuf ones.
    kind: enumName(span.kind, SPAN_KINDS).replace(/^SPAN_KIND_/, ''),
    parent_id: parentId,
    start_time: startIso,
    end_time: endIso,
    // The exact nanosecond times, which ISO µs text cannot carry.
    start_time_unix_nano: String(toBigInt(startNanos)),
    end_time_unix_nano: String(toBigInt(endNanos)),
    status: { code: statusCode.replace(/^STATUS_CODE_/, ''), message: statusMessage },
    attributes: tree,
    events,
    links,
    resource: ctx.resource,
    scope: ctx.scope,
  };

  const threadId = wb.threadId;
  // A span naming its thread without saying whether it is a turn is one until linkTurns finds
  // an ancestor of the same thread in the request (then it is part of that ancestor's turn).
  const turnId = threadId && wb.isTurn !== false ? spanId : null;
  const call: OtelCall = {
    start: {
      project_id: ctx.project,
      id: spanId,
      trace_id: traceId,
      parent_id: parentId,
      op_name: shortenOpName(name),
      display_name: wb.displayName,
      thread_id: threadId,
      turn_id: turnId,
      started_at: startIso,
      attributes: nothingFound ? tree : mapped,
      inputs,
      otel_dump: otelDump,
      svc_run_id: ctx.runId ?? wb.runId,
      svc_run_step: wb.runStep,
    },
    end: {
      project_id: ctx.project,
      id: spanId,
      ended_at: endIso,
      output,
      exception,
      summary,
      svc_run_step_end: wb.runStepEnd,
    },
    startedAtMicros: started,
    endedAtMicros: ended,
  };
  if (threadId && wb.isTurn === null) implicitTurns.add(call);
  return call;
}

/** Calls whose turn was taken from their thread alone (no `wandb.is_turn`). */
const implicitTurns = new WeakSet<OtelCall>();

/** `tree` plus `events.<event name>` = the list of those events' attributes (the reference's event tree). */
function withEventTree(
  tree: Record<string, unknown>,
  events: { name: string; attributes: Record<string, unknown> }[],
): Record<string, unknown> {
  if (getOwn(tree, 'events') !== undefined) return tree;
  const root: Record<string, unknown> = {};
  for (const e of events) {
    if (!e.name || Object.keys(e.attributes).length === 0) continue;
    let attrs: Record<string, unknown>;
    try {
      attrs = expandAttributes(e.attributes);
    } catch {
      attrs = e.attributes;
    }
    const parts = e.name.split('.');
    let node = root;
    for (const part of parts.slice(0, -1)) {
      const next = getOwn(node, part);
      if (isObject(next)) node = next;
      else {
        const created: Record<string, unknown> = {};
        setOwn(node, part, created);
        node = created;
      }
    }
    const leaf = parts[parts.length - 1]!;
    const existing = getOwn(node, leaf);
    if (Array.isArray(existing)) existing.push(attrs);
    else setOwn(node, leaf, [attrs]);
  }
  const out = { ...tree };
  setOwn(out, 'events', root);
  return out;
}

function exceptionFromEvents(events: { name: string; attributes: Record<string, unknown> }[]): string | null {
  const e = events.find((x) => x.name === 'exception');
  if (!e) return null;
  const type = e.attributes['exception.type'];
  const msg = e.attributes['exception.message'];
  const parts = [type, msg].filter((x): x is string => typeof x === 'string' && x !== '');
  return parts.length ? parts.join(': ') : null;
}

/**
 * Descendants of a turn carry its turn id (the reference's convention). A span that names its
 * thread but not whether it is a turn (no `wandb.is_turn`):
 * - a root, or a span whose parent is in the request outside the thread (a session set below the
 *   root: OpenInference's `using_session` around one step of an app), is a turn itself;
 * - a span whose parent is in the request in the same thread is part of that parent's turn;
 * - a span whose parent is not in the request is not a turn: its parent, exported later (spans
 *   end bottom-up), most often carries the same session, and every span of a trace exported one
 *   by one would otherwise count as a turn.
 * A span marked `wandb.is_turn: false` is part of its ancestor's turn, or of none.
 */
function linkTurns(calls: OtelCall[]): void {
  if (!calls.some((c) => c.start.thread_id)) return;
  const byId = new Map(calls.map((c) => [`${c.start.project_id}/${c.start.id}`, c]));
  const resolved = new Map<OtelCall, string | null>();
  const resolve = (c: OtelCall, depth: number): string | null => {
    const known = resolved.get(c);
    if (known !== undefined) return known;
    let turn: string | null;
    if (c.start.turn_id && !implicitTurns.has(c))
      turn = c.start.turn_id; // wandb.is_turn: true
    else if (!c.start.parent_id) turn = c.start.turn_id ?? null;
    else {
      const parent = byId.get(`${c.start.project_id}/${c.start.parent_id}`);
      if (!parent) turn = null;
      else if (parent.start.thread_id === c.start.thread_id && depth < 256) turn = resolve(parent, depth + 1);
      else turn = c.start.turn_id ?? null;
    }
    resolved.set(c, turn);
    return turn;
  };
  for (const c of calls) {
    if (c.start.thread_id) c.start.turn_id = resolve(c, 0);
  }
}
