import { XMLValidator } from 'fast-xml-parser';
import { distance as levenshtein } from 'fastest-levenshtein';
import { RE2JS } from 're2js';
import { pythonJsonDumps } from '@weft/digest';
import { resolveRefs } from '@weft/objects';
import type { Store } from '@weft/store';
import { askJudge, type JudgeTrace } from './judge-model';
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
const RUN_HERE =
  "LLMAsAJudgeScorer, ValidJSONScorer, ValidXMLScorer, StringMatchScorer, LevenshteinScorer, and weft's RegexScorer, ContainsWordsScorer and LengthScorer";

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
  trace?: JudgeTrace,
): Promise<ScoreResult> {
  switch (s.val._class_name) {
    case 'LLMAsAJudgeScorer':
      return judge(store, upstreams, s, { ...vars, output }, trace);
    case 'ValidJSONScorer':
      return { output: { json_valid: isJsonText(output) } };
    case 'ValidXMLScorer':
      return { output: { xml_valid: typeof output === 'string' && XMLValidator.validate(output) === true } };
    // Weave's string scorers: the output against the row's (or call's) `target`.
    case 'StringMatchScorer':
    case 'LevenshteinScorer': {
      if (typeof output !== 'string' || typeof vars.target !== 'string')
        return { error: `${String(s.val._class_name)} scores a text output against a text \`target\` (the dataset row's column)` };
      return s.val._class_name === 'StringMatchScorer'
        ? { output: { string_in_input: vars.target.toLowerCase().includes(output.toLowerCase()) } }
        : { output: { levenshtein_distance: levenshtein(output, vars.target) } };
    }
    case 'RegexScorer':
      return regexScore(s.val, output);
    case 'ContainsWordsScorer': {
      const words = Array.isArray(s.val.target_words) ? s.val.target_words.filter((w): w is string => typeof w === 'string') : [];
      if (words.length === 0) return { error: 'ContainsWordsScorer needs target_words (a list of words)' };
      const text = outputText(output);
      return { output: { contains_words: words.some((w) => text.includes(w)) } };
    }
    case 'LengthScorer': {
      const length = [...outputText(output)].length;
      const min = typeof s.val.min_length === 'number' ? s.val.min_length : null;
      const max = typeof s.val.max_length === 'number' ? s.val.max_length : null;
      return { output: { length, length_valid: (min === null || length >= min) && (max === null || length <= max) } };
    }
    default:
      return { error: `scorer ${String(s.val._class_name)} is not run by weft (${RUN_HERE} are)` };
  }
}

/**
 * LLMAsAJudgeScorer.score: the scoring prompt formatted with the output and the other
 * variables (Python's str.format), after the model's messages template, sent to its
 * llm_model_id; with a JSON response format the answer is parsed.
 */
async function judge(
  store: Store,
  upstreams: UpstreamRegistry,
  s: Scorer,
  vars: Record<string, unknown>,
  trace?: JudgeTrace,
): Promise<ScoreResult> {
  const m = await judgeModel(store, s);
  if (!m || typeof m.llm_model_id !== 'string') return { error: 'the scorer names no model (LLMStructuredCompletionModel.llm_model_id)' };
  const r = await completeStructured(
    upstreams,
    m,
    vars,
    [{ role: 'user', content: pythonFormat(String(s.val.scoring_prompt ?? '{output}'), vars) }],
    trace,
  );
  return 'error' in r ? r : { output: r.output, model: r.model, usage: r.usage };
}

/** A judge's model object, read once per scorer object (refs name immutable versions). */
const judgeModels = new WeakMap<Scorer, Promise<StructuredModel | null>>();
function judgeModel(store: Store, s: Scorer): Promise<StructuredModel | null> {
  let m = judgeModels.get(s);
  if (!m) {
    m = resolveRefs(store, [String(s.val.model)], JSON.parse).then(
      ([model]) => (model?.status === 'ok' ? model.value : s.val.model) as StructuredModel | null,
    );
    // A failed read is not kept: the next score tries again.
    m.catch(() => judgeModels.delete(s));
    judgeModels.set(s, m);
  }
  return m;
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
  trace?: JudgeTrace,
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
  const answer = await askJudge(upstreams, id, request, trace);
  if ('error' in answer) return answer;
  if (!json || answer.content === null) return { output: answer.content, model: id, usage: answer.usage };
  try {
    return { output: JSON.parse(answer.content) as unknown, model: id, usage: answer.usage };
  } catch {
    return { error: `model ${id} answered non-JSON: ${JSON.stringify(answer.content.slice(0, 200))}` };
  }
}

/** The text a check reads: a text output as it is, any other as Python's json.dumps (as the reference's contains_words). */
function outputText(output: unknown): string {
  return typeof output === 'string' ? output : pythonJsonDumps(output ?? null, { sortKeys: false });
}

/**
 * weft's RegexScorer: `pattern` (RE2 syntax: linear time, so a user's pattern cannot stall the
 * process) searched in the output's text; `flags` may hold i (case), m (multiline), s (dot matches newlines).
 */
function regexScore(val: Record<string, unknown>, output: unknown): ScoreResult {
  if (typeof val.pattern !== 'string') return { error: 'RegexScorer needs a pattern (text)' };
  const f = typeof val.flags === 'string' ? val.flags : '';
  const flags =
    (f.includes('i') ? RE2JS.CASE_INSENSITIVE : 0) | (f.includes('m') ? RE2JS.MULTILINE : 0) | (f.includes('s') ? RE2JS.DOTALL : 0);
  let re: RE2JS;
  try {
    re = RE2JS.compile(val.pattern, flags);
  } catch (e) {
    return { error: `RegexScorer pattern is not a valid RE2 expression: ${(e as Error).message}` };
  }
  return { output: { regex_match: re.test(outputText(output)) } };
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
