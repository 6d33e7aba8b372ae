/**
 * Which part of the interface a suite test exercises. "core": tracing, calls queries, objects,
 * tables, datasets, feedback, evaluations, costs, files, OTel export. "extras": the rest of the
 * reference's interface (V2 object and evaluation APIs, calls_complete / upsert_batch_v2,
 * calls/stats, usage, annotation queues, actions, evaluate_model, project version, custom
 * providers, LLMStructuredCompletionModel through completions).
 */
export type Category = 'core' | 'extras';

/** Files whose every test is an extra. */
const EXTRA_FILES = new Set([
  'tests/trace/test_actions_lifecycle.py',
  'tests/trace/test_client_annotation_queues.py',
  'tests/trace/test_queue_filtering.py',
  'tests/trace/test_trace_server_v2_api.py',
  'tests/trace/test_llm_structured_completion_model.py',
  'tests/trace/test_llm_as_a_judge_scorer.py',
  'tests/trace_server/test_call_stats.py',
  'tests/trace_server/test_calls_complete.py',
  'tests/trace_server/test_otel_calls_complete.py',
  'tests/trace_server/test_custom_provider.py',
  'tests/trace_server/test_dataset_v2_api.py',
  'tests/trace_server/test_op_v2_api.py',
  'tests/trace_server/test_scorer_v2_api.py',
  'tests/trace_server/test_project_version.py',
  'tests/trace_server/test_trace_server_evaluation_apis.py',
  'tests/trace_server/test_trace_usage.py',
  'tests/trace_server/isolated_client_executor/test_isolated_client_executor.py',
]);

/** Tests of extras inside otherwise core files (annotation queues, completions). */
const EXTRA_TESTS = [
  /^tests\/trace\/test_feedback\.py::test_feedback_(with|query_by)_.*queue_id/,
  /^tests\/trace\/test_weave_client\.py::test_evaluate_with_llm_completion_model/,
];

export function categoryOf(test: string): Category {
  const file = test.split('::', 1)[0]!;
  if (EXTRA_FILES.has(file) || EXTRA_TESTS.some((re) => re.test(test))) return 'extras';
  return 'core';
}
