import { parseLosslessJson, RawJson } from '@weft/digest';
import { CALL_FIGURES } from '@weft/query';
import { parseRef, splitDotted, type AlertAggregation } from '@weft/objects';

/**
 * A Weave `AlertSpec` (weave/trace/builtin_object_classes/alert_spec.py in the 0.54 SDK: `op_scope`
 * and a `WeaveMetricThresholdSpec` under `spec`) read into the rule weft evaluates. The SDK
 * allows extra keys in `spec`; weft reads two of them: `weft_aggregation` (`sum`, `p50`, `p90`,
 * `p95`, `p99`: what the SDK's aggregation list lacks, for cost per hour or p95 latency) and
 * `hysteresis` (how far past the threshold a firing alert's figure must go back to resolve).
 */

export type Comparison = 'GREATER_THAN' | 'LESS_THAN' | 'EQUAL';
export type Aggregation = AlertAggregation;

export interface AlertRule {
  projectId: string;
  name: string;
  /** The version evaluated: `weave:///<project>/object/<name>:<digest>`. */
  ref: string;
  description: string | null;
  /** Calls of the scoped ops, or a Monitor's scores (feedback). */
  source:
    | { kind: 'calls'; opNames: string[]; metric: string }
    | { kind: 'monitor'; monitorPrefix: string; scorerPrefix?: string; path: string[] };
  metricPath: string;
  aggregation: Aggregation;
  statusMatch: string | null;
  comparison: Comparison;
  threshold: number;
  /** Resolving takes a figure past the threshold by more than this (hysteresis). */
  band: number;
  windowSize: number | null;
  windowDuration: number | null;
  opScope: string[] | null;
  monitorRef: string | null;
  scorerRef: string | null;
}

/** What a stored AlertSpec says, whether or not weft can evaluate it. */
export type ReadRule =
  { ok: true; rule: AlertRule } | { ok: false; reason: string; rule: Partial<AlertRule> & Pick<AlertRule, 'projectId' | 'name' | 'ref'> };

const AGGREGATIONS = ['mean', 'median', 'min', 'max', 'mode', 'percentage', 'count', 'sum', 'p50', 'p90', 'p95', 'p99'];
const COMPARISONS: Comparison[] = ['GREATER_THAN', 'LESS_THAN', 'EQUAL'];
/** Weave's old CountWindow defaulted to 10 calls: a spec with no window is read so. */
export const DEFAULT_WINDOW_SIZE = 10;
/** The largest window of calls (a figure is read exactly, so its calls are all read). */
export const MAX_WINDOW_SIZE = 100_000;
/** Without `hysteresis`, a firing alert resolves once its figure is 5% of the threshold past it. */
const DEFAULT_BAND_SHARE = 0.05;
/** Aliases of the per-call figures, as the analytics catalogue names them. */
const FIGURE_ALIASES: Record<string, string> = {
  latency_ms: 'latency',
  total_tokens: 'tokens',
  errors: 'error',
  exception: 'error',
};
/** Span status codes (OpenTelemetry: 1 OK, 2 ERROR) as `status_match_value`, read as call statuses. */
const STATUS_CODES: Record<string, string> = { '1': 'success', '2': 'error' };

export function readAlertRule(projectId: string, name: string, digest: string, val: Record<string, unknown>): ReadRule {
  const ref = `weave:///${projectId}/object/${name}:${digest}`;
  const spec = (isObject(val.spec) ? val.spec : {}) as Record<string, unknown>;
  const base = { projectId, name, ref, description: typeof val.description === 'string' ? val.description : null };
  const fail = (reason: string): ReadRule => ({ ok: false, reason, rule: base });

  const comparison = String(spec.comparison_operator ?? 'GREATER_THAN') as Comparison;
  if (!COMPARISONS.includes(comparison)) return fail(`comparison_operator '${comparison}' is not one of ${COMPARISONS.join(', ')}`);
  const threshold = Number(spec.threshold ?? 0);
  if (!Number.isFinite(threshold)) return fail('threshold is not a number');
  const aggregation = String(spec.weft_aggregation ?? spec.aggregation_function ?? 'mean') as Aggregation;
  if (!AGGREGATIONS.includes(aggregation)) return fail(`aggregation '${aggregation}' is not one of ${AGGREGATIONS.join(', ')}`);
  const statusMatch = spec.status_match_value === undefined || spec.status_match_value === null ? null : String(spec.status_match_value);
  const size = optionalPositiveInt(spec.window_size);
  const duration = optionalPositiveInt(spec.window_duration);
  if (size === false) return fail('window_size is not a positive integer');
  if (duration === false) return fail('window_duration is not a positive number of seconds');
  if (size !== null && size > MAX_WINDOW_SIZE) return fail(`window_size is over ${MAX_WINDOW_SIZE}`);
  const windowSize = size === null && duration === null ? DEFAULT_WINDOW_SIZE : size;
  const hysteresis = spec.hysteresis === undefined || spec.hysteresis === null ? null : Number(spec.hysteresis);
  if (hysteresis !== null && !(hysteresis >= 0)) return fail('hysteresis is not a number ≥ 0');
  const band = hysteresis ?? Math.abs(threshold) * DEFAULT_BAND_SHARE;
  const metricPath = typeof spec.metric_path === 'string' ? spec.metric_path.trim() : '';
  const opScope = Array.isArray(val.op_scope) ? val.op_scope.map(String) : null;
  const monitorRef = typeof spec.monitor_ref === 'string' && spec.monitor_ref ? spec.monitor_ref : null;
  const scorerRef = typeof spec.scorer_ref === 'string' && spec.scorer_ref ? spec.scorer_ref : null;
  const common = {
    ...base,
    metricPath,
    aggregation,
    statusMatch,
    comparison,
    threshold,
    band,
    windowSize,
    windowDuration: duration,
    opScope,
    monitorRef,
    scorerRef,
  };

  if (monitorRef) {
    // The monitor's scores: feedback its worker wrote on the project's calls.
    const monitorPrefix = versionlessRef(monitorRef, projectId);
    if (!monitorPrefix) return fail(`monitor_ref '${monitorRef}' is not an object ref of ${projectId}`);
    let scorerPrefix: string | undefined;
    if (scorerRef) {
      const p = versionlessRef(scorerRef, projectId);
      if (!p) return fail(`scorer_ref '${scorerRef}' is not an object ref of ${projectId}`);
      scorerPrefix = p;
    }
    // A score is the scorer's output: `output.x` or `x` both name its member x.
    const parts = metricPath ? splitDotted(metricPath) : [];
    const path = parts[0] === 'output' ? parts : ['output', ...parts];
    return { ok: true, rule: { ...common, source: { kind: 'monitor', monitorPrefix, ...(scorerPrefix ? { scorerPrefix } : {}), path } } };
  }

  const opNames: string[] = [];
  for (const r of [...(opScope ?? []), ...(typeof spec.op_str === 'string' && spec.op_str ? [spec.op_str] : [])]) {
    const parsed = parseRef(r);
    if (!parsed || parsed.kind !== 'op' || parsed.projectId !== projectId) {
      return fail(`op_scope: '${r}' is not an op ref of ${projectId}`);
    }
    opNames.push(r);
  }
  let metric = FIGURE_ALIASES[metricPath] ?? metricPath;
  if (metric === '' && (aggregation === 'percentage' || aggregation === 'count')) metric = 'status';
  if (metric === '') return fail('metric_path is empty');
  const isFigure = (CALL_FIGURES as readonly string[]).includes(metric);
  if (!isFigure && !/^(inputs|output|attributes|summary)\.[^.]/.test(metric)) {
    return fail(
      `metric_path '${metricPath}' is neither a figure (${CALL_FIGURES.join(', ')}) nor a path under inputs., output., attributes. or summary.`,
    );
  }
  if (metric === 'status' && !(aggregation === 'percentage' || aggregation === 'count')) {
    return fail('status is text: it takes percentage or count (with status_match_value)');
  }
  const match = statusMatch !== null && metric === 'status' ? (STATUS_CODES[statusMatch] ?? statusMatch) : statusMatch;
  return { ok: true, rule: { ...common, statusMatch: match, source: { kind: 'calls', opNames, metric } } };
}

/** `weave:///<project>/object/<name>:` of an object ref into the project (any version), or null. */
function versionlessRef(ref: string, projectId: string): string | null {
  const parsed = parseRef(ref);
  if (!parsed || parsed.kind !== 'object' || parsed.projectId !== projectId) return null;
  return `weave:///${projectId}/object/${parsed.name}:`;
}

/** null when absent; false when not a positive integer. */
function optionalPositiveInt(v: unknown): number | null | false {
  if (v === undefined || v === null) return null;
  const n = Number(v);
  return Number.isInteger(n) && n > 0 ? n : false;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The name an alert_ref (a ref of any version, or a bare name) designates, or null when it points outside the project. */
export function alertNameOf(alertRef: string, projectId: string): string | null {
  if (!alertRef.startsWith('weave:///')) return /^[\p{L}\p{N}_.-]+$/u.test(alertRef) ? alertRef : null;
  const parsed = parseRef(alertRef.endsWith(':*') ? `${alertRef.slice(0, -2)}:latest` : alertRef);
  if (!parsed || parsed.kind !== 'object' || parsed.projectId !== projectId) return null;
  return parsed.name;
}

/** A stored object's value (lossless JSON) as plain values. */
export function plainVal(v: unknown): unknown {
  return v instanceof RawJson ? JSON.parse(v.text) : typeof v === 'string' ? parseLosslessJson(v) : v;
}
