import { z } from 'zod';
import { clip, DEFAULT_BUDGET, fitValue, LIST_CLIP, MAX_BUDGET, MIN_BUDGET, type ClipOptions } from '../budget';
import type { UiLinks } from '../links';
import type { WeftApi } from '../weft-api';

/** What every tool works with: weft's HTTP API (as the caller) and the UI's links. */
export interface ToolContext {
  api: WeftApi;
  links: UiLinks;
}

// Arguments under the HTTP API's names, described for a model.
export const projectIdArg = z
  .string()
  .regex(/^[^/\s]+\/[^/\s]+$/, 'expected "entity/project"')
  .describe('the project, "entity/project" (list_projects names them)');
export const cursorArg = z.string().min(1).optional().describe('next_cursor of the previous answer, to read the next page');
export const maxCharsArg = z
  .number()
  .int()
  .min(MIN_BUDGET)
  .max(MAX_BUDGET)
  .default(DEFAULT_BUDGET)
  .describe(`most characters of JSON in the answer (default ${DEFAULT_BUDGET}); longer lists page with next_cursor`);
export const limitArg = (def: number, max: number, what: string) =>
  z.number().int().min(1).max(max).default(def).describe(`most ${what} per page (default ${def}, at most ${max})`);

/** A call as the HTTP API answers it (the members the tools read). */
export interface ApiCall {
  id: string;
  project_id: string;
  op_name: string;
  display_name: string | null;
  trace_id: string;
  parent_id: string | null;
  thread_id: string | null;
  turn_id: string | null;
  started_at: string;
  ended_at: string | null;
  inputs?: Record<string, unknown>;
  output?: unknown;
  exception: string | null;
  attributes?: Record<string, unknown>;
  summary: Record<string, unknown> | null;
}

/** `weave:///e/p/op/name:digest` → `name`; other op names as they are. */
export function opShort(opName: string): string {
  const m = /^weave:\/\/\/[^/]+\/[^/]+\/op\/(.+?)(?::[^:/]*)?$/.exec(opName);
  return m ? m[1]! : opName;
}

/** The op names a short name matches: the SDK's op refs (any version) and plain names (OTel, inference). */
export function opNamesFor(projectId: string, op: string): string[] {
  if (op.startsWith('weave:///')) return [op];
  return [`weave:///${projectId}/op/${op}:*`, op];
}

const weaveOf = (c: ApiCall) => (c.summary?.weave ?? {}) as Record<string, unknown>;

export function statusOf(c: ApiCall): string {
  const s = weaveOf(c).status;
  if (typeof s === 'string') return s;
  return c.exception ? 'error' : c.ended_at ? 'success' : 'running';
}

export function latencyOf(c: ApiCall): number | null {
  const l = weaveOf(c).latency_ms;
  if (typeof l === 'number') return l;
  return c.ended_at ? Date.parse(c.ended_at) - Date.parse(c.started_at) : null;
}

/** Token counts of a call's summary.usage (per model, as the SDK writes it), summed. */
export function tokensOf(c: ApiCall): { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null {
  const usage = c.summary?.usage;
  if (!usage || typeof usage !== 'object') return null;
  let prompt = 0;
  let completion = 0;
  let total = 0;
  for (const u of Object.values(usage as Record<string, Record<string, unknown>>)) {
    const n = (k: string) => (typeof u?.[k] === 'number' ? (u[k] as number) : 0);
    const p = n('prompt_tokens') || n('input_tokens');
    const co = n('completion_tokens') || n('output_tokens');
    prompt += p;
    completion += co;
    total += n('total_tokens') || p + co;
  }
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total };
}

/** USD of summary.weave.costs (include_costs), summed over models; null when the call has none. */
export function costOf(c: ApiCall): number | null {
  const costs = weaveOf(c).costs;
  if (!costs || typeof costs !== 'object') return null;
  let sum = 0;
  for (const m of Object.values(costs as Record<string, Record<string, unknown>>)) {
    for (const k of ['prompt_tokens_total_cost', 'completion_tokens_total_cost']) if (typeof m?.[k] === 'number') sum += m[k] as number;
  }
  return sum;
}

/** One call, compact: what a list of calls shows of each (values clipped by `o`). */
export function callLine(c: ApiCall, links: UiLinks, o: ClipOptions = LIST_CLIP): Record<string, unknown> {
  const tokens = tokensOf(c);
  const cost = costOf(c);
  return dropEmpty({
    id: c.id,
    op: opShort(c.op_name),
    display_name: c.display_name,
    status: statusOf(c),
    started_at: c.started_at,
    latency_ms: latencyOf(c),
    trace_id: c.trace_id,
    parent_id: c.parent_id,
    thread_id: c.thread_id,
    exception: c.exception ? clip(c.exception, { ...o, maxString: Math.max(o.maxString, 300) }) : null,
    tokens: tokens?.total_tokens || null,
    cost_usd: cost,
    inputs: c.inputs === undefined ? undefined : fitValue(c.inputs, o.maxString * 3, o),
    output: c.output === undefined ? undefined : fitValue(c.output, o.maxString * 3, o),
    url: links.call(c.project_id, c.id),
  });
}

/** The object without null, undefined or empty-string members (compact answers). */
export function dropEmpty<T extends Record<string, unknown>>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== null && v !== undefined && v !== '') out[k] = v;
  return out as T;
}

/** A tool's answer: compact JSON text. */
export function answer(value: unknown): { content: { type: 'text'; text: string }[] } {
  return { content: [{ type: 'text', text: JSON.stringify(value) }] };
}
