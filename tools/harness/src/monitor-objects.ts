/**
 * A Weave Monitor published over HTTP as `weave.Monitor(...).activate()` publishes it: an LLM
 * judge (LLMAsAJudgeScorer whose LLMStructuredCompletionModel asks `judgeModel` with the system
 * prompt "You grade answers.") and a JSON check, on one op. For benches and tests that need a
 * monitor without running the Python SDK.
 */
export async function publishMonitor(
  post: (path: string, body: unknown) => Promise<Record<string, unknown>>,
  opts: { project: string; op: string; judgeModel: string; name?: string },
): Promise<string> {
  const project = opts.project;
  const obj = async (object_id: string, val: Record<string, unknown>) => {
    const { digest } = await post('/obj/create', { obj: { project_id: project, object_id, val } });
    return `weave:///${project}/object/${object_id}:${String(digest)}`;
  };
  const bases = ['Object', 'BaseModel'];
  const model = await obj('judge-model', {
    _type: 'LLMStructuredCompletionModel',
    llm_model_id: opts.judgeModel,
    default_params: { response_format: 'json_object', messages_template: [{ role: 'system', content: 'You grade answers.' }] },
    _class_name: 'LLMStructuredCompletionModel',
    _bases: ['Model', ...bases],
  });
  // Scorer objects are named as the SDK names them: the judge by its `name`, the check by its class.
  const scorers = [
    await obj('helpful', {
      _type: 'LLMAsAJudgeScorer',
      name: 'helpful',
      model,
      scoring_prompt: 'Grade: {output}',
      _class_name: 'LLMAsAJudgeScorer',
      _bases: ['Scorer', ...bases],
    }),
    await obj('ValidJSONScorer', { _type: 'ValidJSONScorer', _class_name: 'ValidJSONScorer', _bases: ['Scorer', ...bases] }),
  ];
  const name = opts.name ?? 'monitor';
  const ref = await obj(name, {
    _type: 'Monitor',
    name,
    active: true,
    op_names: [opts.op],
    sampling_rate: 1,
    scorers,
    _class_name: 'Monitor',
    _bases: bases,
  });
  // A call must end after the monitor was published to be its (as Weave's monitors see new calls).
  await new Promise((resolve) => setTimeout(resolve, 50));
  return ref;
}

/** `n` ended calls of `op` in one /call/upsert_batch body (start and end together, as the SDK sends a short call). */
export function endedCallsBatch(project: string, op: string, ids: string[]): { batch: unknown[] } {
  const batch: unknown[] = [];
  for (const id of ids) {
    const at = new Date().toISOString();
    batch.push({
      mode: 'start',
      req: { start: { project_id: project, id, trace_id: id, op_name: op, started_at: at, inputs: { q: id }, attributes: {} } },
    });
    batch.push({ mode: 'end', req: { end: { project_id: project, id, ended_at: at, output: `answer to ${id}`, summary: {} } } });
  }
  return { batch };
}
