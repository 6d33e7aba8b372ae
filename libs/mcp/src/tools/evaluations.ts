import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { budgetNote, clipped, fitPage, fitValue, LIST_CLIP } from '../budget';
import { ArgumentError, decodeCursor, encodeCursor } from '../cursor';
import { readCall } from './calls';
import {
  answer,
  cursorArg,
  dropEmpty,
  latencyOf,
  limitArg,
  maxCharsArg,
  projectIdArg,
  statusOf,
  type ApiCall,
  type ToolContext,
} from './shared';

/**
 * Evaluations as the Weave SDK records them: an `Evaluation.evaluate` root call (inputs `self`,
 * the Evaluation's ref, and `model`; output the summary per scorer) with one
 * `Evaluation.predict_and_score` child per dataset row (inputs `example`; output `{output, scores}`).
 */
export const evaluateOps = (p: string) => [`weave:///${p}/op/Evaluation.evaluate:*`, 'Evaluation.evaluate'];
const predictOps = (p: string) => [`weave:///${p}/op/Evaluation.predict_and_score:*`, 'Evaluation.predict_and_score'];
/** Most rows of the runs compared that are read. */
const MAX_EXAMPLE_CALLS = 20_000;

/** Numeric and boolean leaves (booleans as 1/0) of a value, by dotted path. */
export function numericLeaves(v: unknown, prefix = '', out = new Map<string, number>()): Map<string, number> {
  if (typeof v === 'number' && Number.isFinite(v)) out.set(prefix, v);
  else if (typeof v === 'boolean') out.set(prefix, v ? 1 : 0);
  else if (v && typeof v === 'object' && !Array.isArray(v))
    for (const [k, x] of Object.entries(v)) numericLeaves(x, prefix ? `${prefix}.${k}` : k, out);
  return out;
}

/** Whether more is better: scores up; latency, cost and tokens down; the model's own output has no direction. */
export function direction(path: string): 'up' | 'down' | 'none' {
  if (/(^|\.)(model_latency|latency|cost|tokens)(\.|$)/.test(path)) return 'down';
  if (path === 'output' || path.startsWith('output.')) return 'none';
  return 'up';
}

function verdict(path: string, base: number | undefined, value: number | undefined): 'better' | 'worse' | 'same' | null {
  if (base === undefined || value === undefined) return null;
  if (base === value) return 'same';
  const d = direction(path);
  if (d === 'none') return null;
  return value > base === (d === 'up') ? 'better' : 'worse';
}

/** The key rows are matched by across runs: a dataset row's digest, another ref, else the example's JSON. */
function exampleKey(example: unknown): string {
  if (typeof example === 'string' && example.startsWith('weave:///')) {
    const m = /\/id\/([^/]+)$/.exec(example);
    return m ? `row:${m[1]}` : `ref:${example}`;
  }
  return `value:${JSON.stringify(example)}`;
}

const str = (v: unknown) => (typeof v === 'string' ? v : null);
const refName = (ref: string | null) => (ref ? (/\/(?:object|op)\/([^:/]+)/.exec(ref)?.[1] ?? ref) : null);

/** What the runs' refs name: evaluation, model and dataset, read with /refs/read_batch. */
async function describe(ctx: ToolContext, calls: ApiCall[]) {
  const refs = [
    ...new Set(calls.flatMap((c) => [str(c.inputs?.self), str(c.inputs?.model)]).filter((r): r is string => !!r?.startsWith('weave:///'))),
  ];
  const vals = new Map<string, unknown>();
  for (let i = 0; i < refs.length; i += 1000) {
    const batch = refs.slice(i, i + 1000);
    const { vals: got } = await ctx.api.post<{ vals: unknown[] }>('/refs/read_batch', { refs: batch });
    batch.forEach((r, j) => vals.set(r, got[j]));
  }
  return (c: ApiCall) => {
    const evalRef = str(c.inputs?.self);
    const modelRef = str(c.inputs?.model);
    const ev = (evalRef ? vals.get(evalRef) : null) as Record<string, unknown> | null;
    const model = (modelRef ? vals.get(modelRef) : null) as Record<string, unknown> | null;
    return dropEmpty({
      evaluation: str(ev?.evaluation_name) ?? str(ev?.name) ?? refName(evalRef),
      model: str(model?.name) ?? refName(modelRef),
      dataset: str(ev?.dataset),
      evaluation_ref: evalRef,
      model_ref: modelRef,
    });
  };
}

export function registerEvaluationTools(server: McpServer, ctx: ToolContext): void {
  const listArgs = { project_id: projectIdArg, limit: limitArg(20, 100, 'evaluation runs'), cursor: cursorArg, max_chars: maxCharsArg };
  server.registerTool(
    'list_evaluations',
    {
      title: 'List evaluation runs',
      description:
        'Evaluation runs (Weave Evaluation.evaluate calls), newest first: the evaluation, model and dataset, status, and the summary scores. ' +
        'Their call_id values go to compare_evaluations.',
      inputSchema: listArgs,
      annotations: { readOnlyHint: true },
    },
    async (a) => {
      const offset = decodeCursor('list_evaluations', a, a.cursor);
      const body = { project_id: a.project_id, filter: { op_names: evaluateOps(a.project_id) } };
      const [{ count }, runs] = await Promise.all([
        ctx.api.post<{ count: number }>('/calls/query_stats', body),
        ctx.api.lines<ApiCall>('/calls/stream_query', {
          ...body,
          sort_by: [{ field: 'started_at', direction: 'desc' }],
          limit: a.limit,
          offset,
        }),
      ]);
      const names = await describe(ctx, runs);
      const lines = runs.map((c) =>
        dropEmpty({
          call_id: c.id,
          ...names(c),
          status: statusOf(c),
          started_at: c.started_at,
          latency_ms: latencyOf(c),
          scores: Object.fromEntries([...numericLeaves(c.output)].slice(0, 30)),
          url: ctx.links.call(a.project_id, c.id),
        }),
      );
      const head = { project_id: a.project_id, total: count, offset, url: ctx.links.evaluations(a.project_id) };
      return answer(
        fitPage(head, lines, a.max_chars, (n) => {
          const next = offset + n;
          return {
            ...head,
            evaluations: lines.slice(0, n),
            ...(next < count ? { next_cursor: encodeCursor('list_evaluations', a, next) } : {}),
            budget: budgetNote(a.max_chars, false),
          };
        }),
      );
    },
  );

  const compareArgs = {
    project_id: projectIdArg,
    call_ids: z
      .array(z.string().min(1))
      .min(2)
      .max(5)
      .describe('evaluation runs (list_evaluations call_id); the first is the baseline the others are compared with'),
    limit: limitArg(20, 200, 'regressed rows'),
    cursor: cursorArg,
    max_chars: maxCharsArg,
  };
  server.registerTool(
    'compare_evaluations',
    {
      title: 'Compare evaluation runs',
      description:
        'Compare evaluation runs with a baseline (the first call_id): each summary metric with its value per run and whether it got better or worse ' +
        '(scores: higher is better; latency, cost, tokens: lower), then the dataset rows on which a run scored worse than the baseline, ' +
        "with the example, each run's output and scores. Page the rows with next_cursor.",
      inputSchema: compareArgs,
      annotations: { readOnlyHint: true },
    },
    async (a) => {
      const offset = decodeCursor('compare_evaluations', a, a.cursor);
      if (new Set(a.call_ids).size !== a.call_ids.length) throw new ArgumentError('call_ids', 'a run is named twice');
      const runs = await Promise.all(a.call_ids.map((id) => readCall(ctx, a.project_id, id)));
      const names = await describe(ctx, runs);
      const leaves = runs.map((r) => numericLeaves(r.output));
      const paths = [...new Set(leaves.flatMap((l) => [...l.keys()]))].filter((p) => direction(p) !== 'none');
      const metrics = paths.map((path) => {
        const base = leaves[0]!.get(path);
        return {
          metric: path,
          baseline: base ?? null,
          runs: leaves.slice(1).map((l) => {
            const v = l.get(path);
            return dropEmpty({
              value: v ?? null,
              delta: v !== undefined && base !== undefined ? v - base : null,
              verdict: verdict(path, base, v),
            });
          }),
        };
      });
      const children = await ctx.api.lines<ApiCall>('/calls/stream_query', {
        project_id: a.project_id,
        filter: { parent_ids: a.call_ids, op_names: predictOps(a.project_id) },
        columns: ['id', 'parent_id', 'started_at', 'inputs', 'output'],
        sort_by: [{ field: 'started_at', direction: 'asc' }],
        limit: MAX_EXAMPLE_CALLS,
      });
      // Rows by example; each run's first result on it.
      const rows = new Map<string, { example: unknown; results: (ApiCall | undefined)[] }>();
      for (const c of children) {
        const run = a.call_ids.indexOf(c.parent_id ?? '');
        if (run < 0) continue;
        const example = c.inputs?.example;
        const key = exampleKey(example);
        const row = rows.get(key) ?? { example, results: a.call_ids.map(() => undefined) };
        row.results[run] ??= c;
        rows.set(key, row);
      }
      const scoresOf = (c: ApiCall | undefined) => numericLeaves((c?.output as Record<string, unknown> | null)?.scores);
      const regressed = [...rows.values()].filter((row) => {
        const base = scoresOf(row.results[0]);
        return row.results.slice(1).some((r) => r && [...scoresOf(r)].some(([p, v]) => verdict(p, base.get(p), v) === 'worse'));
      });
      const examples = await resolveExamples(
        ctx,
        regressed.slice(offset, offset + a.limit).map((r) => r.example),
      );
      const lines = regressed.slice(offset, offset + a.limit).map((row, i) => {
        const base = scoresOf(row.results[0]);
        return {
          example: fitValue(examples[i], 400, LIST_CLIP),
          runs: row.results.map((r, run) =>
            r
              ? dropEmpty({
                  call_id: r.id,
                  output: fitValue((r.output as Record<string, unknown> | null)?.output, 300, LIST_CLIP),
                  scores: Object.fromEntries(scoresOf(r)),
                  worse: run === 0 ? null : [...scoresOf(r)].filter(([p, v]) => verdict(p, base.get(p), v) === 'worse').map(([p]) => p),
                })
              : null,
          ),
        };
      });
      const head = {
        project_id: a.project_id,
        runs: runs.map((r, i) => ({ call_id: r.id, role: i === 0 ? 'baseline' : 'candidate', ...names(r), status: statusOf(r) })),
        metrics,
        rows_compared: rows.size,
        rows_regressed: regressed.length,
        offset,
        url: ctx.links.compare(a.project_id, a.call_ids),
      };
      return answer(
        fitPage(head, lines, a.max_chars, (n) => {
          const next = offset + n;
          return {
            ...head,
            regressed_rows: lines.slice(0, n),
            ...(next < regressed.length ? { next_cursor: encodeCursor('compare_evaluations', a, next) } : {}),
            budget: budgetNote(a.max_chars, clipped(lines.slice(0, n))),
          };
        }),
      );
    },
  );
}

/** Examples given as refs into a dataset's rows, read (a model reads the row, not its ref). */
async function resolveExamples(ctx: ToolContext, examples: unknown[]): Promise<unknown[]> {
  const refs = examples.filter((e): e is string => typeof e === 'string' && e.startsWith('weave:///'));
  if (refs.length === 0) return examples;
  const { vals } = await ctx.api.post<{ vals: unknown[] }>('/refs/read_batch', { refs });
  const byRef = new Map(refs.map((r, i) => [r, vals[i]]));
  return examples.map((e) => (typeof e === 'string' && byRef.has(e) ? byRef.get(e) : e));
}
