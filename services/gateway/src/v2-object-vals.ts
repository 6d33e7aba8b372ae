/**
 * The values the V2 object APIs store: what the Weave SDK itself would publish for an op, a
 * Dataset, a Scorer, a Model or an Evaluation built from the request's fields (the reference's
 * object_creation_utils), so the SDK and the UI read them as their own.
 */

/** The file an op's (or a Model's) source code is stored as, as the SDK stores it. */
export const SOURCE_FILE_NAME = 'obj.py';

export const PLACEHOLDER_OP_SOURCE = `def func(*args, **kwargs):
    ... # Code-capture unavailable for this op
`;
export const SCORER_SUMMARIZE_SOURCE = `def summarize(score_rows: list) -> dict | None:
    '''Default summarize implementation that auto-summarizes score rows.'''
    from weave.flow.scorer import auto_summarize
    return auto_summarize(score_rows)
`;
/** The placeholder sources of the ops the V2 APIs make on the server (no code of the caller's runs in them). */
const placeholder = (name: string, params: string, body: string) => `import weave
@weave.op
def ${name}(${params}):
    """Placeholder ${name} function."""
    ${body}
`;
export const EVALUATE_SOURCE = placeholder('evaluate', 'evaluation, model', 'return {"status": "not_implemented"}');
export const PREDICT_AND_SCORE_SOURCE = placeholder(
  'predict_and_score',
  'evaluation, example',
  'return {"prediction": None, "scores": {}}',
);
export const EVALUATION_SUMMARIZE_SOURCE = placeholder('summarize', 'evaluation_results', 'return {"summary": "not_implemented"}');
export const MODEL_PREDICT_SOURCE = placeholder('predict', 'model, **inputs', 'return model.predict(**inputs)');
export const SCORER_SCORE_SOURCE = placeholder('score', 'scorer, **inputs', 'return scorer.score(**inputs)');

/**
 * The object id of a name: spaces and slashes become `_`, other characters than letters, digits,
 * `_`, `.`, `-` are dropped, lower case (the reference's make_safe_name); no name: `fallback`.
 */
export function objectIdOf(name: string | null | undefined, fallback: string): string {
  if (name === null || name === undefined) return fallback;
  return name
    .replace(/[ /]/g, '_')
    .replace(/[^\p{L}\p{N}_.-]/gu, '')
    .toLowerCase();
}

const OBJECT_BASES = ['Object', 'BaseModel'];

export function opVal(sourceFileDigest: string): Record<string, unknown> {
  return { _type: 'CustomWeaveType', weave_type: { type: 'Op' }, files: { [SOURCE_FILE_NAME]: sourceFileDigest } };
}

export function datasetVal(name: string | null | undefined, description: string | null | undefined, rowsRef: string) {
  return {
    _type: 'Dataset',
    _class_name: 'Dataset',
    _bases: OBJECT_BASES,
    name: name ?? 'Dataset',
    description: description ?? null,
    rows: rowsRef,
  };
}

export function scorerVal(name: string, description: string | null | undefined, scoreOp: string, summarizeOp: string) {
  return {
    _type: 'Scorer',
    _class_name: 'Scorer',
    _bases: OBJECT_BASES,
    name,
    description: description ?? null,
    score: scoreOp,
    summarize: summarizeOp,
    column_map: null,
  };
}

/** A Model: its source as a file, its attributes as members of the object (the SDK's Model fields). */
export function modelVal(
  name: string,
  description: string | null | undefined,
  sourceFileDigest: string,
  attributes: Record<string, unknown> | null | undefined,
) {
  return {
    _type: 'Model',
    _class_name: 'Model',
    _bases: OBJECT_BASES,
    name,
    description: description ?? null,
    files: { [SOURCE_FILE_NAME]: sourceFileDigest },
    ...(attributes ?? {}),
  };
}

/** The members of a Model's value that are not its attributes. */
export const MODEL_OWN_MEMBERS = new Set(['_type', '_class_name', '_bases', 'name', 'description', 'files']);

export interface EvaluationFields {
  name: string;
  description?: string | null;
  dataset: string;
  scorers?: string[] | null;
  trials: number;
  evaluation_name?: string | null;
  eval_attributes?: Record<string, unknown> | null;
}

export function evaluationVal(f: EvaluationFields, ops: { evaluate: string; predictAndScore: string; summarize: string }) {
  return {
    _type: 'Evaluation',
    _class_name: 'Evaluation',
    _bases: OBJECT_BASES,
    name: f.name,
    description: f.description ?? null,
    dataset: f.dataset,
    scorers: f.scorers ?? [],
    trials: f.trials,
    evaluation_name: f.evaluation_name ?? null,
    metadata: null,
    preprocess_model_input: null,
    evaluate: ops.evaluate,
    predict_and_score: ops.predictAndScore,
    summarize: ops.summarize,
    ...(f.eval_attributes ?? {}),
  };
}
