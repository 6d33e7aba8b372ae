import { z } from 'zod';
import { jsonObject, projectId, query, timestamp } from './common';
import type { RouteSpec } from './spec';

/**
 * The routes Weave 0.54's interface adds (its vendored client, weave/vendor/weave_server_sdk):
 * object aliases and tags, scoring calls, dataset sources, feedback analytics, files, images,
 * tables from row digests, projects info, and the agents family (docs/api.md, "Weave 0.54's
 * routes"). Shapes as the vendored client's request and response types.
 */

const ignoredUserId = z.string().nullish().describe('ignored: the server sets it from the caller');
const label = z.string().min(1).max(128);
// Validated here (400 naming the field), not left to the engine (whose parse error was a 500).
const isoTime = timestamp.describe('ISO 8601');
const limit = (max: number, dflt: number) => z.number().int().min(0).max(max).default(dflt);
const offset = z.number().int().min(0).default(0);
const sortBy = z.array(z.object({ field: z.string().min(1), direction: z.enum(['asc', 'desc']).default('asc') })).nullish();

// Aliases and tags.
export const aliasListReq = z.object({ project_id: projectId });
export const aliasListRes = z.object({ aliases: z.array(z.string()) });
export const aliasSetReq = z.object({
  project_id: projectId,
  object_id: z.string().min(1),
  digest: z.string().min(1),
  aliases: z.array(label).max(100),
});
export const aliasRemoveReq = z.object({ project_id: projectId, object_id: z.string().min(1), aliases: z.array(z.string()).max(100) });
export const tagListReq = z.object({ project_id: projectId });
export const tagListRes = z.object({ tags: z.array(z.string()) });
export const tagsReq = z.object({
  project_id: projectId,
  object_id: z.string().min(1),
  digest: z.string().min(1),
  tags: z.array(label).max(100),
});

// Scoring.
export const callsScoreReq = z.object({
  project_id: projectId,
  call_ids: z.array(z.string().min(1)).min(1).max(100),
  scorer_refs: z.array(z.string().startsWith('weave:///', 'must be a weave:/// ref')).min(1).max(20),
  svc_user_id: ignoredUserId,
});
export const evaluationRescoreReq = z.object({
  project_id: projectId,
  source_evaluation_run_id: z.string().min(1),
  scorer_refs: z.array(z.string().startsWith('weave:///', 'must be a weave:/// ref')).min(1).max(20),
  svc_user_id: ignoredUserId,
});
export const evaluationRescoreRes = z.object({ call_id: z.string(), evaluation_run_id: z.string() });

// Dataset sources.
const sourceKind = z.enum(['call', 'span', 'conversation']);
const linkSource = z.object({ source_id: z.string().min(1), source_kind: sourceKind, source_trace_id: z.string() });
export const datasetSourceLinkReq = z.object({
  project_id: projectId,
  dataset_object_id: z.string().min(1),
  dataset_digest: z.string().min(1),
  links: z
    .array(z.object({ row_digest: z.string().min(1), sources: z.array(linkSource).max(100), link_metadata: jsonObject.nullish() }))
    .max(1000),
  include_created_status: z.boolean().default(false),
  svc_user_id: ignoredUserId,
});
export const datasetSourceLinkRes = z.object({ entries: z.array(z.object({ link_id: z.string(), created: z.boolean().nullish() })) });
export const datasetSourceQueryReq = z.object({
  project_id: projectId,
  dataset_object_id: z.string().min(1),
  row_digests: z.array(z.string()).max(10_000).nullish(),
  source_kinds: z.array(sourceKind).nullish(),
  include_deleted: z.boolean().default(false),
  limit: z.number().int().min(0).max(10_000).nullish(),
  offset: z.number().int().min(0).nullish(),
  svc_user_id: ignoredUserId,
});
export const datasetSourceQueryRes = z.object({ links: z.array(z.record(z.string(), z.unknown())) });
export const sourceDatasetsQueryReq = z.object({
  project_id: projectId,
  sources: z.array(linkSource).max(1000),
  include_deleted: z.boolean().default(false),
  svc_user_id: ignoredUserId,
});
export const sourceDatasetsQueryRes = z.object({ memberships: z.array(z.record(z.string(), z.unknown())) });

// Feedback analytics.
export const feedbackStatsReq = z.object({
  project_id: projectId,
  start: isoTime,
  end: isoTime.nullish(),
  feedback_type: z.string().nullish(),
  trigger_ref: z.string().nullish(),
  granularity: z.number().int().min(1).nullish().describe('seconds per bucket (default: about 60 buckets over the window)'),
  timezone: z.string().default('UTC'),
  metrics: z
    .array(
      z.object({
        json_path: z.string().min(1),
        aggregations: z.array(z.enum(['sum', 'avg', 'min', 'max', 'count', 'count_true', 'count_false'])).default([]),
        percentiles: z.array(z.number().min(0).max(100)).default([]),
        value_type: z.enum(['numeric', 'boolean', 'categorical']).default('numeric'),
      }),
    )
    .max(50)
    .default([]),
});
export const feedbackStatsRes = z.object({
  start: z.string(),
  end: z.string(),
  granularity: z.number().int(),
  timezone: z.string(),
  buckets: z.array(z.record(z.string(), z.unknown())),
  window_stats: z.record(z.string(), z.record(z.string(), z.number().nullable())),
});
export const feedbackPayloadSchemaReq = z.object({
  project_id: projectId,
  start: isoTime,
  end: isoTime.nullish(),
  feedback_type: z.string().nullish(),
  trigger_ref: z.string().nullish(),
  sample_limit: z.number().int().min(1).max(5000).default(2000),
});
export const feedbackPayloadSchemaRes = z.object({
  paths: z.array(z.object({ json_path: z.string(), value_type: z.enum(['numeric', 'boolean', 'categorical']).nullable() })),
});
export const feedbackAggregateReq = z.object({
  project_id: projectId,
  after_ms: z.number().int(),
  before_ms: z.number().int(),
  feedback_types: z.array(z.string()).default([]),
  group_by: z.array(z.enum(['scorer_id', 'span_agent_name', 'span_agent_version', 'span_status_code'])).default([]),
  monitor_ids: z.array(z.string()).default([]),
  scorer_ids: z.array(z.string()).default([]),
  span_agent_names: z.array(z.string()).default([]),
  span_types: z.array(z.enum(['agent_turn', 'agent_conversation'])).default([]),
  tags: z.array(z.string()).default([]),
  rating_min: z.number().nullish(),
  rating_max: z.number().nullish(),
  time_bucket_seconds: z.number().int().min(1).nullish(),
});
export const feedbackAggregateRes = z.object({
  after_ms: z.number().int(),
  before_ms: z.number().int(),
  time_bucket_seconds: z.number().int().nullable(),
  buckets: z.array(
    z.object({
      group: z.record(z.string(), z.string()),
      time_bucket_start_ms: z.number().int().nullable(),
      total_count: z.number().int(),
      scored_count: z.number().int(),
      rating_counts: z.record(z.string(), z.number().int()),
      rating_sums: z.record(z.string(), z.number()),
      tag_counts: z.record(z.string(), z.number().int()),
    }),
  ),
});

// Files, images, tables, projects.
export const filesQueryStatsReq = z.object({ project_id: projectId });
export const filesResolveUrlReq = z.object({ project_id: projectId, uris: z.array(z.string()).max(1000) });
export const filesResolveUrlRes = z.object({ download_urls: z.array(z.string()), expires_at: z.string().nullable() });
export const imageCreateReq = z.object({
  project_id: projectId,
  inputs: z.object({ model: z.string().min(1), prompt: z.string().min(1), n: z.number().int().min(1).max(10).nullish() }).loose(),
  track_llm_call: z.boolean().nullish(),
  svc_user_id: ignoredUserId,
});
export const imageCreateRes = z.object({ response: z.record(z.string(), z.unknown()), weave_call_id: z.string().nullable() });
export const tableCreateFromDigestsReq = z.object({
  project_id: projectId,
  row_digests: z.array(z.string().min(1)).max(1_000_000),
  expected_digest: z.string().nullish(),
});
export const tableCreateFromDigestsRes = z.object({ digest: z.string() });
export const projectsInfoReq = z.object({ project_ids: z.array(z.string().min(1)).max(1000) });
export const projectsInfoRes = z.array(z.object({ external_project_id: z.string(), internal_project_id: z.string() }));

// V2 evaluation results.
export const evalResultsQueryReq = z.object({
  entity: z.string().min(1),
  project: z.string().min(1),
  evaluation_call_ids: z.array(z.string()).max(100).nullish(),
  evaluation_run_ids: z.array(z.string()).max(100).nullish(),
  include_rows: z.boolean().default(true),
  include_summary: z.boolean().default(true),
  include_raw_data_rows: z.boolean().default(false),
  include_predict_and_score_children: z.boolean().default(false),
  include_costs: z.boolean().default(false),
  require_intersection: z.boolean().default(false),
  filters: z.unknown().optional(),
  filter_logic_operator: z.string().nullish(),
  limit: z.number().int().min(0).max(10_000).nullish(),
  offset: z.number().int().min(0).nullish(),
});
export const evalResultsQueryRes = z.object({
  rows: z.array(z.record(z.string(), z.unknown())),
  total_rows: z.number().int(),
  summary: z.record(z.string(), z.unknown()).nullable(),
  warnings: z.array(z.string()),
});

// Agents (served from the OTLP GenAI / OpenInference spans weft stores as calls).
const agentStats = {
  project_id: z.string(),
  agent_name: z.string(),
  span_count: z.number().int(),
  invocation_count: z.number().int(),
  error_count: z.number().int(),
  total_duration_ms: z.number().int(),
  total_input_tokens: z.number().int(),
  total_output_tokens: z.number().int(),
  total_cost_usd: z.number().nullable(),
  first_seen: z.string().nullable(),
  last_seen: z.string().nullable(),
};
export const agentsQueryReq = z.object({
  project_id: projectId,
  filters: z.object({ agent_name: z.string().nullish() }).nullish(),
  include_costs: z.boolean().default(false),
  limit: limit(10_000, 100),
  offset,
  sort_by: sortBy,
});
export const agentsQueryRes = z.object({ agents: z.array(z.object(agentStats)), total_count: z.number().int() });
export const agentVersionsQueryReq = z.object({
  project_id: projectId,
  agent_name: z.string().min(1),
  include_costs: z.boolean().default(false),
  limit: limit(10_000, 100),
  offset,
  sort_by: sortBy,
});
export const agentVersionsQueryRes = z.object({
  versions: z.array(z.object({ ...agentStats, agent_version: z.string() })),
  total_count: z.number().int(),
});
const roles = z.enum(['', 'user', 'assistant', 'system', 'tool', 'tool_call', 'tool_result']);
export const agentsSearchReq = z.object({
  project_id: projectId,
  query: z.string().default(''),
  agent_name: z.string().nullish(),
  conversation_id: z.string().nullish(),
  trace_id: z.string().nullish(),
  provider_name: z.string().nullish(),
  request_model: z.string().nullish(),
  roles: z.array(roles).nullish(),
  started_after: isoTime.nullish(),
  started_before: isoTime.nullish(),
  truncate_content: z.boolean().default(true),
  limit: limit(1000, 20),
  offset,
});
export const agentsSearchRes = z.object({
  results: z.array(
    z.object({
      conversation_id: z.string(),
      conversation_name: z.string(),
      agent_name: z.string(),
      last_activity: z.string(),
      matched_messages: z.array(
        z.object({
          span_id: z.string(),
          trace_id: z.string(),
          role: z.string(),
          content_preview: z.string(),
          content_digest: z.string(),
          started_at: z.string(),
        }),
      ),
    }),
  ),
  total_conversations: z.number().int(),
});
const spansWindow = { started_after: isoTime.nullish(), started_before: isoTime.nullish() };
export const agentSpansQueryReq = z
  .object({
    project_id: projectId,
    query: query.nullish(),
    include_costs: z.boolean().default(false),
    include_details: z.boolean().default(false),
    limit: limit(10_000, 100),
    offset,
    sort_by: sortBy,
    ...spansWindow,
  })
  .loose();
export const agentSpansQueryRes = z.object({
  spans: z.array(z.record(z.string(), z.unknown())),
  groups: z.array(z.record(z.string(), z.unknown())),
  total_count: z.number().int(),
});
export const agentSpansStatsReq = z
  .object({
    project_id: projectId,
    start: isoTime,
    end: isoTime.nullish(),
    granularity: z.number().int().min(60).nullish().describe('seconds per bucket (default: about 60 buckets)'),
    timezone: z.string().default('UTC'),
  })
  .loose();
export const agentSpansStatsRes = z.object({
  bucket_type: z.literal('time'),
  columns: z.array(
    z.object({
      name: z.string(),
      role: z.enum(['time', 'bucket', 'group', 'metric']),
      value_type: z.enum(['datetime', 'number', 'boolean', 'string']),
      metric: z.string().nullish(),
      aggregation: z.string().nullish(),
    }),
  ),
  rows: z.array(z.record(z.string(), z.unknown())),
  start: z.string(),
  end: z.string(),
  granularity: z.number().int().nullable(),
  timezone: z.string(),
});
export const agentSpansCustomAttrsSchemaReq = z.object({
  project_id: projectId,
  query: query.nullish(),
  limit: limit(10_000, 100),
  offset,
  ...spansWindow,
});
export const agentSpansCustomAttrsSchemaRes = z.object({
  attributes: z.array(
    z.object({
      key: z.string(),
      source: z.enum(['custom_attrs_string', 'custom_attrs_int', 'custom_attrs_float', 'custom_attrs_bool']),
      value_type: z.enum(['string', 'int', 'float', 'bool']),
      span_count: z.number().int(),
    }),
  ),
  has_more: z.boolean(),
  limit: z.number().int(),
  offset: z.number().int(),
});
export const agentTraceChatReq = z.object({
  project_id: projectId,
  trace_id: z.string().min(1),
  include_feedback: z.boolean().default(false),
});
export const agentTraceChatRes = z.record(z.string(), z.unknown());
export const agentConversationChatReq = z.object({
  project_id: projectId,
  conversation_id: z.string().min(1),
  include_feedback: z.boolean().default(false),
  limit: limit(1000, 50),
  offset,
});
export const agentConversationChatRes = z.object({
  conversation_id: z.string(),
  turns: z.array(z.record(z.string(), z.unknown())),
  total_turns: z.number().int(),
  has_more: z.boolean(),
  limit: z.number().int(),
  offset: z.number().int(),
  total_cost_usd: z.number().nullable(),
  feedback: z.array(z.record(z.string(), z.unknown())).nullable(),
});
export const agentConversationSpansReq = z.object({
  project_id: projectId,
  conversation_ids: z
    .array(z.string())
    .max(1000)
    .nullish()
    .transform((v) => v ?? []),
  ...spansWindow,
});
export const agentConversationSpansRes = z.object({
  conversations: z.array(
    z.object({
      conversation_id: z.string(),
      spans: z.array(
        z.object({
          span_id: z.string(),
          trace_id: z.string(),
          operation_name: z.string(),
          duration_ms: z.number().int(),
          status: z.enum(['UNSET', 'OK', 'ERROR']),
        }),
      ),
      spans_feedback: z.array(z.record(z.string(), z.unknown())),
    }),
  ),
});

// V2 runtimes: a custom provider (Provider and ProviderModel objects) by another name.
const runtimeId = z.object({ id: z.string().min(1).max(256), max_tokens: z.number().int().min(1).default(4096) });
export const runtimeApplyReq = z.object({
  entity: z.string().min(1),
  project: z.string().min(1),
  runtime_name: z.string().min(1).max(128),
  base_url: z.string().url(),
  runtime_ids: z.array(runtimeId).max(100),
  api_key_secret: z.string().nullish(),
  headers: z.record(z.string(), z.string()).default({}),
});
export const runtimeApplyRes = z.object({
  name: z.string(),
  base_url: z.string(),
  api_key_secret: z.string().nullable(),
  headers: z.record(z.string(), z.string()),
  runtime_ids: z.array(z.object({ id: z.string(), max_tokens: z.number().int(), playground_id: z.string() })),
});

/** The 0.54 routes (routes.ts lists them with every other group). */
export const weave054RouteSpecs = {
  aliasList: {
    path: '/aliases',
    method: 'GET',
    urlMembers: true,
    summary: "The project's object aliases in use",
    auth: 'basic',
    service: 'query',
    request: aliasListReq,
    response: aliasListRes,
    published: true,
  },
  aliasSet: {
    path: '/objs/:object_id/aliases',
    method: 'PUT',
    urlMembers: true,
    summary: 'Point aliases at a version of an object',
    auth: 'basic',
    service: 'gateway',
    request: aliasSetReq,
    response: z.object({}),
    published: true,
  },
  aliasRemove: {
    path: '/objs/:object_id/aliases/remove',
    urlMembers: true,
    summary: "Remove an object's aliases",
    auth: 'basic',
    service: 'gateway',
    request: aliasRemoveReq,
    response: z.object({}),
    published: true,
  },
  tagList: {
    path: '/tags',
    method: 'GET',
    urlMembers: true,
    summary: "The project's object version tags in use",
    auth: 'basic',
    service: 'query',
    request: tagListReq,
    response: tagListRes,
    published: true,
  },
  tagAdd: {
    path: '/objs/:object_id/versions/:digest/tags',
    method: 'PUT',
    urlMembers: true,
    summary: 'Tag a version of an object',
    auth: 'basic',
    service: 'gateway',
    request: tagsReq,
    response: z.object({}),
    published: true,
  },
  tagRemove: {
    path: '/objs/:object_id/versions/:digest/tags/remove',
    urlMembers: true,
    summary: "Remove a version's tags",
    auth: 'basic',
    service: 'gateway',
    request: tagsReq,
    response: z.object({}),
    published: true,
  },
  callsScore: {
    path: '/calls/score',
    summary: 'Score calls with scorer objects (runnable feedback on each call)',
    auth: 'basic',
    service: 'inference',
    request: callsScoreReq,
    response: z.object({}),
    published: true,
  },
  evaluationsRescore: {
    path: '/evaluations/rescore',
    summary: "Score an evaluation run's predictions again with other scorers",
    auth: 'basic',
    service: 'inference',
    request: evaluationRescoreReq,
    response: evaluationRescoreRes,
    published: true,
  },
  datasetSourcesLink: {
    path: '/dataset_sources/link',
    summary: 'Link dataset rows to the calls, spans or conversations they came from',
    auth: 'basic',
    service: 'gateway',
    request: datasetSourceLinkReq,
    response: datasetSourceLinkRes,
    published: true,
  },
  datasetSourcesQuery: {
    path: '/dataset_sources/query',
    summary: "A dataset's row sources",
    auth: 'basic',
    service: 'query',
    request: datasetSourceQueryReq,
    response: datasetSourceQueryRes,
    published: true,
  },
  sourceDatasetsQuery: {
    path: '/dataset_sources/source_datasets_query',
    summary: 'The datasets rows of some sources went into',
    auth: 'basic',
    service: 'query',
    request: sourceDatasetsQueryReq,
    response: sourceDatasetsQueryRes,
    published: true,
  },
  feedbackAggregate: {
    path: '/feedback/aggregate',
    summary: 'Feedback counts, ratings and tags per group and time bucket',
    auth: 'basic',
    service: 'query',
    request: feedbackAggregateReq,
    response: feedbackAggregateRes,
    published: true,
    lane: 'heavy',
  },
  feedbackStats: {
    path: '/feedback/stats',
    summary: 'Feedback payload values aggregated per time bucket',
    auth: 'basic',
    service: 'query',
    request: feedbackStatsReq,
    response: feedbackStatsRes,
    published: true,
    lane: 'heavy',
  },
  feedbackPayloadSchema: {
    path: '/feedback/payload_schema',
    summary: 'The JSON paths of feedback payloads, with their value types',
    auth: 'basic',
    service: 'query',
    request: feedbackPayloadSchemaReq,
    response: feedbackPayloadSchemaRes,
    published: true,
  },
  filesQueryStats: {
    path: '/files/query_stats',
    summary: "Bytes of a project's stored files",
    auth: 'basic',
    service: 'query',
    request: filesQueryStatsReq,
    response: z.object({ total_size_bytes: z.number().int() }),
    published: true,
  },
  filesResolveUrl: {
    path: '/files/resolve_url',
    summary: 'Download URLs of stored files',
    auth: 'basic',
    service: 'query',
    request: filesResolveUrlReq,
    response: filesResolveUrlRes,
    published: true,
  },
  imageCreate: {
    path: '/image/create',
    summary: 'Generate images with a model (an upstream with an images API)',
    auth: 'basic',
    service: 'inference',
    request: imageCreateReq,
    response: imageCreateRes,
    published: true,
  },
  tableCreateFromDigests: {
    path: '/table/create_from_digests',
    summary: 'Create a table from stored rows named by digest',
    auth: 'basic',
    service: 'gateway',
    request: tableCreateFromDigestsReq,
    response: tableCreateFromDigestsRes,
    published: true,
  },
  projectsInfo: {
    path: '/service/projects_info',
    summary: "Projects' internal ids (weft's are their names)",
    auth: 'basic',
    service: 'query',
    request: projectsInfoReq,
    response: projectsInfoRes,
    published: true,
  },
  evalResultsQuery: {
    path: '/v2/:entity/:project/eval_results/query',
    urlMembers: true,
    summary: "Evaluation runs' rows: each example with its predictions and scores",
    auth: 'basic',
    service: 'query',
    request: evalResultsQueryReq,
    response: evalResultsQueryRes,
    published: true,
    lane: 'heavy',
  },
  agentsQuery: {
    path: '/agents/query',
    summary: 'Agents seen in OTLP spans, with their totals',
    auth: 'basic',
    service: 'query',
    request: agentsQueryReq,
    response: agentsQueryRes,
    published: true,
  },
  agentVersionsQuery: {
    path: '/agents/agent-versions/query',
    summary: "An agent's versions, with their totals",
    auth: 'basic',
    service: 'query',
    request: agentVersionsQueryReq,
    response: agentVersionsQueryRes,
    published: true,
  },
  agentsSearch: {
    path: '/agents/search',
    summary: 'Conversations whose messages contain a text',
    auth: 'basic',
    service: 'query',
    request: agentsSearchReq,
    response: agentsSearchRes,
    published: true,
  },
  agentSpansQuery: {
    path: '/agents/spans/query',
    summary: 'Agent spans',
    auth: 'basic',
    service: 'query',
    request: agentSpansQueryReq,
    response: agentSpansQueryRes,
    published: true,
  },
  agentSpansStats: {
    path: '/agents/spans/stats',
    summary: 'Agent span counts, errors, tokens per time bucket',
    auth: 'basic',
    service: 'query',
    request: agentSpansStatsReq,
    response: agentSpansStatsRes,
    published: true,
    lane: 'heavy',
  },
  agentSpansCustomAttrsSchema: {
    path: '/agents/spans/custom-attrs/schema',
    summary: "The custom attributes of a project's agent spans",
    auth: 'basic',
    service: 'query',
    request: agentSpansCustomAttrsSchemaReq,
    response: agentSpansCustomAttrsSchemaRes,
    published: true,
  },
  agentTraceChat: {
    path: '/agents/traces/chat',
    summary: 'An agent trace as a chat: its messages, tool calls and totals',
    auth: 'basic',
    service: 'query',
    request: agentTraceChatReq,
    response: agentTraceChatRes,
    published: true,
  },
  agentConversationChat: {
    path: '/agents/conversations/chat',
    summary: 'A conversation as chats, one per turn (trace)',
    auth: 'basic',
    service: 'query',
    request: agentConversationChatReq,
    response: agentConversationChatRes,
    published: true,
  },
  agentConversationSpans: {
    path: '/agents/conversations/spans',
    summary: "Conversations' spans (scalars only)",
    auth: 'basic',
    service: 'query',
    request: agentConversationSpansReq,
    response: agentConversationSpansRes,
    published: true,
  },
  v2RuntimeApply: {
    path: '/v2/:entity/:project/runtimes/:runtime_name',
    method: 'PUT',
    urlMembers: true,
    summary: "Declare a runtime (an OpenAI-compatible endpoint and its model ids) as the project's custom provider",
    auth: 'basic',
    service: 'inference',
    request: runtimeApplyReq,
    response: runtimeApplyRes,
    published: true,
  },
} as const satisfies Record<string, RouteSpec>;
