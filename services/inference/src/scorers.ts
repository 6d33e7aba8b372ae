import { XMLValidator } from 'fast-xml-parser';
import { resolveRefs } from '@weft/objects';
import type { Store } from '@weft/store';
import { askJudge } from './judge-model';
import type { UpstreamRegistry } from './upstreams';

/** A scorer object (LLMAsAJudgeScorer, ValidJSONScorer…) as stored, with its ref and the name its results go under. */
export interface Scorer {
  ref: string;
  name: string;
  val: Record<string, unknown>;
}

/** A scorer's result (with the model and usage of an LLM judge's request), or why there is none. */
export type ScoreResult = { output: unknown; model?: string; usage?: unknown } | { error: string };

/** The scorer classes weft runs itself; any other is an error result naming them. */
const RUN_HERE = 'LLMAsAJudgeScorer, ValidJSONScorer and ValidXMLScorer';

/** A stored LLMStructuredCompletionModel's members weft reads. */
export interface StructuredModel {
  llm_model_id?: unknown;
  default_params?: Record<string, unknown> | null;
}

/** Scorer objects by ref (missing, deleted or non-object refs are left out), named as Weave names them: `name`, else the class. */
export async function readScorers(store: Store, refs: unknown[]): Promise<Scorer[]> {
  const strs = refs.filter((r): r is string => typeof r === 'string');
  const resolved = await resolveRefs(store, strs, JSON.parse);
  return resolved.flatMap((r, i) => {
    if (r.status !== 'ok' || typeof r.value !== 'object' || r.value === null) return [];
    const val = r.value as Record<string, unknown>;
    const name = typeof val.name === 'string' && val.name ? val.name : String(val._class_name ?? 'scorer');
    return [{ ref: strs[i]!, name, val }];
  });
}

/**
 * Scores `output` with a scorer: LLM judges through the upstreams, the JSON and XML checks here,
 * any other class an error result. `vars` are the scorer's keyword arguments (a call's inputs or
 * a dataset row), which the judge's prompt may name.
 */
export async function runScorer(
  store: Store,
  upstreams: UpstreamRegistry,
  s: Scorer,
  output: unknown,
  vars: Record<string, unknown>,
): Promise<ScoreResult> {
  switch (s.val._class_name) {
    case 'LLMAsAJudgeScorer':
      return judge(store, upstreams, s, { ...vars, output });
    case 'ValidJSONScorer':
      return { output: { json_valid: isJsonText(output) } };
    case 'ValidXMLScorer':
      return { output: { xml_valid: typeof output === 'string' && XMLValidator.validate(output) === true } };
    default:
      return { error: `scorer ${String(s.val._class_name)} is not run by weft (${RUN_HERE} are)` };
  }
}

/**
 * LLMAsAJudgeScorer.score: the scoring prompt formatted with the output and the other
 * variables (Python's str.format), after the model's messages template, sent to its
 * llm_model_id; with a JSON response format the answer is parsed.
 */
async function judge(store: Store, upstreams: UpstreamRegistry, s: Scorer, vars: Record<string, unknown>): Promise<ScoreResult> {
  const [model] = await resolveRefs(store, [String(s.val.model)], JSON.parse);
  const m = (model?.status === 'ok' ? model.value : s.val.model) as StructuredModel | null;
  if (!m || typeof m.llm_model_id !== 'string') return { error: 'the scorer names no model (LLMStructuredCompletionModel.llm_model_id)' };
  const r = await completeStructured(upstreams, m, vars, [
    { role: 'user', content: pythonFormat(String(s.val.scoring_prompt ?? '{output}'), vars) },
  ]);
  return 'error' in r ? r : { output: r.output, model: r.model, usage: r.usage };
}

/**
 * LLMStructuredCompletionModel.predict on the server: its messages template formatted with
 * `vars`, then `extra` messages, with its default params, sent to the upstream serving its
 * llm_model_id (a `<provider>/` prefix dropped when no upstream lists the whole id). A JSON
 * response format's answer is parsed; any other (text, or none) is the content as it is.
 */
export async function completeStructured(
  upstreams: UpstreamRegistry,
  m: StructuredModel,
  vars: Record<string, unknown>,
  extra: { role: string; content: string }[] = [],
): Promise<{ output: unknown; model: string; usage?: unknown } | { error: string }> {
  if (typeof m.llm_model_id !== 'string' || !m.llm_model_id) return { error: 'the model names no llm_model_id' };
  const params = m.default_params ?? {};
  const template = Array.isArray(params.messages_template) ? (params.messages_template as { role?: string; content?: unknown }[]) : [];
  const messages = [
    ...template.map((t) => ({
      role: t.role ?? 'system',
      content: typeof t.content === 'string' ? pythonFormat(t.content, vars) : t.content,
    })),
    ...extra,
  ];
  const json = params.response_format === 'json_object' || params.response_format === 'json' || params.response_format === 'json_schema';
  const request: Record<string, unknown> = { messages, ...(json ? { response_format: { type: 'json_object' } } : {}) };
  for (const k of ['temperature', 'top_p', 'max_tokens', 'presence_penalty', 'frequency_penalty', 'stop'])
    if (params[k] !== null && params[k] !== undefined) request[k] = params[k];
  const id = upstreams.find(m.llm_model_id) ? m.llm_model_id : m.llm_model_id.replace(/^[^/]+\//, '');
  const answer = await askJudge(upstreams, id, request);
  if ('error' in answer) return answer;
  if (!json || answer.content === null) return { output: answer.content, model: id, usage: answer.usage };
  try {
    return { output: JSON.parse(answer.content) as unknown, model: id, usage: answer.usage };
  } catch {
    return { error: `model ${id} answered non-JSON: ${JSON.stringify(answer.content.slice(0, 200))}` };
  }
}

function isJsonText(output: unknown): boolean {
  if (typeof output !== 'string') return false;
  try {
    JSON.parse(output);
    return true;
  } catch {
    return false;
  }
}

/** Python's str.format with named fields: `{name}` replaced by the value (text as it is, others as JSON), `{{`/`}}` literal. */
export function pythonFormat(template: string, vars: Record<string, unknown>): string {
  return template.replace(/\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (all, name: string | undefined) => {
    if (all === '{{') return '{';
    if (all === '}}') return '}';
    if (!(name! in vars)) return all;
    const v = vars[name!];
    return typeof v === 'string' ? v : JSON.stringify(v);
  });
}
