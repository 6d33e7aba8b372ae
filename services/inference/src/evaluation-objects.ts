import { ApiError, badRequest } from '@weft/core';
import { RawJson } from '@weft/digest';
import { parseRef, queryTableRows, readObject, resolveRefs } from '@weft/objects';
import type { Store } from '@weft/store';
import type { EvaluationVal, Example } from './evaluation-run';
import { readScorers, type Scorer, type StructuredModel } from './scorers';

/** Rows (dataset rows × trials) one evaluation may run: they are read into memory at the request. */
export const MAX_EVALUATION_ROWS = 10_000;

/**
 * The objects a run reads (its Evaluation, the model, the scorers, the dataset's rows), each
 * checked as it is read: a 4xx names the request's field; another project's objects are not read
 * on this project's behalf.
 */
export class EvaluationObjects {
  constructor(private readonly store: Store) {}

  async readModel(projectId: string, ref: string): Promise<StructuredModel & { name?: unknown }> {
    const model = (await this.readRef(projectId, ref, 'model_ref')) as StructuredModel & { _class_name?: unknown; name?: unknown };
    if (model._class_name !== 'LLMStructuredCompletionModel')
      throw badRequest(
        `model_ref: weft runs LLMStructuredCompletionModel objects only (this one's class is ${String(model._class_name)})`,
        'model_ref',
      );
    if (typeof model.llm_model_id !== 'string' || !model.llm_model_id)
      throw badRequest('model_ref: the model names no llm_model_id', 'model_ref');
    return model;
  }

  async readScorers(projectId: string, evaluation: EvaluationVal): Promise<Scorer[]> {
    const scorerRefs = Array.isArray(evaluation.scorers) ? evaluation.scorers : [];
    // Another project's objects are not read on this project's behalf.
    for (const r of scorerRefs)
      if (typeof r !== 'string' || parseRef(r)?.projectId !== projectId)
        throw badRequest(`evaluation_ref: a scorer is not an object of project ${projectId}: ${JSON.stringify(r)}`, 'evaluation_ref');
    return readScorers(this.store, scorerRefs);
  }

  /** The object a request's ref names, as plain values: a 400 naming the field when it is no object ref of the project. */
  async readRef(projectId: string, ref: string, field: string): Promise<Record<string, unknown>> {
    const parsed = parseRef(ref);
    if (!parsed || parsed.kind !== 'object' || parsed.extra.length > 0) throw badRequest(`${field}: not an object ref: '${ref}'`, field);
    if (parsed.projectId !== projectId)
      throw badRequest(`${field}: ref project '${parsed.projectId}' does not match project_id '${projectId}'`, field);
    let obj;
    try {
      obj = await readObject(this.store, { project_id: projectId, object_id: parsed.name, digest: parsed.version });
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) throw new ApiError(404, `${field}: no object ${ref}`, { field });
      throw e;
    }
    const val = obj.val instanceof RawJson ? (JSON.parse(obj.val.text) as unknown) : obj.val;
    if (typeof val !== 'object' || val === null || Array.isArray(val)) throw badRequest(`${field}: not an object value: '${ref}'`, field);
    return val as Record<string, unknown>;
  }

  /** The dataset's rows (its `rows` table), each `trials` times, with their refs. */
  async readExamples(projectId: string, evaluation: EvaluationVal): Promise<Example[]> {
    const datasetRef = typeof evaluation.dataset === 'string' ? evaluation.dataset : null;
    const [dataset] = datasetRef ? await resolveRefs(this.store, [datasetRef], JSON.parse) : [];
    const rowsRef = dataset?.status === 'ok' ? (dataset.value as { rows?: unknown } | null)?.rows : null;
    const table = typeof rowsRef === 'string' ? parseRef(rowsRef) : null;
    if (datasetRef && parseRef(datasetRef)?.projectId !== projectId)
      throw badRequest(`evaluation_ref: the dataset is not an object of project ${projectId}`, 'evaluation_ref');
    if (!datasetRef || !table || table.kind !== 'table' || table.projectId !== projectId)
      throw badRequest('evaluation_ref: the Evaluation names no readable Dataset (a dataset ref whose rows are a table)', 'evaluation_ref');
    const trials = typeof evaluation.trials === 'number' && evaluation.trials >= 1 ? Math.floor(evaluation.trials) : 1;
    const rows: Example[] = [];
    for await (const r of queryTableRows(this.store, { project_id: table.projectId, digest: table.digest })) {
      if (rows.length * trials >= MAX_EVALUATION_ROWS)
        throw badRequest(
          `evaluation_ref: the dataset has more than ${MAX_EVALUATION_ROWS / trials} rows (at most ${MAX_EVALUATION_ROWS} rows × trials run)`,
          'evaluation_ref',
        );
      const row = JSON.parse(r.val.text) as unknown;
      rows.push({
        row: typeof row === 'object' && row !== null && !Array.isArray(row) ? (row as Record<string, unknown>) : { row },
        ref: `${datasetRef}/attr/rows/id/${r.digest}`,
      });
    }
    if (rows.length === 0) throw badRequest('evaluation_ref: the dataset has no rows', 'evaluation_ref');
    return Array.from({ length: trials }, () => rows).flat();
  }
}
