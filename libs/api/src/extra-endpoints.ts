import { z } from 'zod';
import { callEndBody, callStartBody } from './calls';
import { emptyObject, jsonObject, projectId, query, serverCheck, storedTimestamp } from './common';
import { callStatsReq, callStatsRes } from './call-stats';
import { callUsageRes, callsUsageReq, projectStatsReq, projectStatsRes, traceUsageReq } from './usage';
import { costCreateReq, costCreateRes, feedbackReplaceReq, tableCreateRes } from './objects';
import { embeddingReq, responsesReq, textCompletionReq } from './inference';
import type { EndpointSpec } from './endpoints';
import { otelLogsQueryReq, otelLogsQueryRes } from './otel-logs';
import {
  ingestSamplingSettingsRes,
  ingestSamplingSettingsUpdateReq,
  projectSettingsReadReq,
  sensitiveDataSettingsRes,
  sensitiveDataSettingsUpdateReq,
  ttlSettingsRes,
  ttlSettingsUpdateReq,
} from './project-settings';
import { actionsExecuteBatchReq } from './actions';
import { deadLetterEntry, deadLetterReq, deadLetterRes, deadLettersListReq, deadLettersListRes } from './dead-letters';
import { projectDeliveryReq, projectDeliveryRes, projectsDeliveryReq, projectsDeliveryRes } from './delivery';
import { deletionStatusReq, deletionStatusRes, projectDeleteReq, userDataDeleteReq } from './deletions';
import { tableDiffReq, tableDiffRes } from './table-diff';
import { usersReadBatchReq, usersReadBatchRes } from './users';
import * as v2 from './v2-objects';
import {
  evaluateModelReq,
  evaluateModelRes,
  evaluationCancelReq,
  evaluationReplayReq,
  evaluationReplayRes,
  evaluationStatusReq,
  evaluationStatusRes,
} from './evaluations';
import {
  annotationQueue,
  annotationQueueAddCallsReq,
  annotationQueueAddCallsRes,
  annotationQueueCreateReq,
  annotationQueueCreateRes,
  annotationQueueDeleteReq,
  annotationQueueItemsQueryReq,
  annotationQueueItemsQueryRes,
  annotationQueueReadReq,
  annotationQueueRes,
  annotationQueuesQueryReq,
  annotationQueuesStatsReq,
  annotationQueuesStatsRes,
  annotationQueueUpdateReq,
  annotatorProgressUpdateReq,
  annotatorProgressUpdateRes,
} from './annotation-queues';
import {
  analyticsQueryReq,
  analyticsQueryRes,
  callsExportReq,
  tableExportReq,
  callsAggregateReq,
  callsAggregateRes,
  projectsListReq,
  projectsListRes,
} from './analytics';

/**
 * Endpoints the reference's clients need beyond the interface's 20 (see docs/api.md, "Extra
 * endpoints"). Kept out of `endpoints` so the published contract stays exactly the interface;
 * registered the same way (addRoute) and routed the same way (the front proxy, by `service`).
 */
export type ExtraEndpointSpec = Omit<EndpointSpec, 'response'> & {
  /** The response body's schema (handlers are typed by it); absent: not yet written down. */
  response?: z.ZodType;
  /** Listed in /openapi.json (tagged `extra`); needs `response`. */
  published?: boolean;
  /** The HTTP method; POST when absent. GET and DELETE have no body: the query string is the request. */
  method?: 'GET' | 'PUT' | 'DELETE';
  /** The path's parameters and the query string are members of the request (the reference's REST routes). */
  urlMembers?: true;
};

export const tableCreateExtraReq = z.object({
  table: z.object({
    project_id: projectId,
    rows: z.array(jsonObject),
    expected_digest: z.string().nullish(),
  }),
});

export const refsReadBatchReq = z.object({
  refs: z.array(z.string()).max(1000, 'Too many refs (at most 1000)'),
});
export const refsReadBatchRes = z.object({ vals: z.array(z.unknown()) });

/** A call finished before it is sent: its start and end together (the reference's CompletedCallSchemaForInsert). */
export const completedCall = callStartBody.extend({
  id: z.string().min(1),
  trace_id: z.string().min(1),
  ended_at: storedTimestamp,
  summary: callEndBody.shape.summary,
  exception: callEndBody.shape.exception,
  output: callEndBody.shape.output,
  svc_run_step_end: callEndBody.shape.svc_run_step_end,
});
export type CompletedCall = z.infer<typeof completedCall>;
export const callsCompleteReq = z.object({ batch: z.array(completedCall) });

export const callReadReq = z.object({
  project_id: projectId,
  id: z.string().min(1),
  include_costs: z.boolean().default(false),
  include_storage_size: z.boolean().default(false),
  include_total_storage_size: z.boolean().default(false),
});

/** The reference's MAX_DISPLAY_NAME_LENGTH. */
export const MAX_DISPLAY_NAME_CHARS = 1024;
export const callUpdateReq = z.object({
  project_id: projectId,
  call_id: z.string().min(1),
  display_name: z.string().max(MAX_DISPLAY_NAME_CHARS).optional(),
  svc_user_id: z.string().nullish().describe('ignored: the server sets it from the caller'),
});

/** The reference's MAX_DELETE_CALLS_COUNT. */
export const MAX_DELETE_CALLS = 1000;
export const callsDeleteReq = z.object({
  project_id: projectId,
  call_ids: z.array(z.string().min(1)).max(MAX_DELETE_CALLS, `at most ${MAX_DELETE_CALLS} calls at a time`),
  svc_user_id: z.string().nullish().describe('ignored: the server sets it from the caller'),
});

/** The reference's limit of versions per /obj/delete. */
export const MAX_OBJECTS_TO_DELETE = 100;
export const objDeleteReq = z.object({
  project_id: projectId,
  object_id: z.string().min(1),
  digests: z
    .array(z.string().min(1))
    .superRefine((d, ctx) => {
      if (d.length > MAX_OBJECTS_TO_DELETE) {
        const message = `Object delete request contains ${d.length} objects. Please delete ${MAX_OBJECTS_TO_DELETE} or fewer objects at a time.`;
        ctx.addIssue({ code: 'custom', ...serverCheck(message) });
      }
    })
    .optional(),
});

export const tableQueryStatsReq = z.object({ project_id: projectId, digest: z.string().min(1) });
export const tableQueryStatsBatchReq = z.object({
  project_id: projectId,
  digests: z.array(z.string().min(1)).max(1000).default([]),
  include_storage_size: z.boolean().default(false),
});

/** /feedback/create: /feedback/replace's fields without `feedback_id`. */
export const feedbackCreateReq = feedbackReplaceReq.omit({ feedback_id: true });
export const feedbackBatchCreateReq = z.object({ batch: z.array(feedbackCreateReq) });
export const feedbackPurgeReq = z.object({ project_id: projectId, query });

export const fileContentReq = z.object({ project_id: projectId, digest: z.string().min(1) });
/** The reference's CostPurgeReq: the query names the project prices to remove by id. */
export const costPurgeReq = z.object({ project_id: projectId, query });
export const filesStatsReq = z.object({ project_id: projectId });
export const filesStatsRes = z.object({ total_size_bytes: z.number().int() });

export const extraEndpoints = {
  tableCreate: {
    path: '/table/create',
    summary: 'Create a table from rows',
    auth: 'basic',
    service: 'gateway',
    request: tableCreateExtraReq,
    response: tableCreateRes,
  },
  refsReadBatch: {
    path: '/refs/read_batch',
    summary: 'Read the values of object refs',
    auth: 'basic',
    service: 'query',
    request: refsReadBatchReq,
    response: refsReadBatchRes,
  },
  costCreate: {
    path: '/cost/create',
    summary: 'Add project-level prices',
    auth: 'basic',
    service: 'query',
    request: costCreateReq,
    response: costCreateRes,
  },
  costPurge: {
    path: '/cost/purge',
    summary: 'Remove project-level prices by id',
    auth: 'basic',
    service: 'query',
    request: costPurgeReq,
    response: emptyObject,
  },
  otelLogsQuery: {
    path: '/otel/logs/query',
    summary: "A project's OTLP log records (GenAI events and others), newest first; of one trace or span if asked",
    auth: 'basic',
    service: 'query',
    request: otelLogsQueryReq,
    response: otelLogsQueryRes,
  },
  filesStats: {
    path: '/files/stats',
    summary: "Bytes of a project's stored files",
    auth: 'basic',
    service: 'query',
    request: filesStatsReq,
    response: filesStatsRes,
  },
  traceUsage: {
    path: '/trace/usage',
    summary: 'Token and cost usage per call, with its descendants',
    auth: 'basic',
    service: 'query',
    request: traceUsageReq,
    response: callUsageRes,
  },
  callsUsage: {
    path: '/calls/usage',
    summary: 'Token and cost usage of root calls, with their descendants',
    auth: 'basic',
    service: 'query',
    request: callsUsageReq,
    response: callUsageRes,
  },
  callStats: {
    path: '/calls/stats',
    summary: 'Call and usage metrics per time bucket',
    auth: 'basic',
    service: 'query',
    request: callStatsReq,
    response: callStatsRes,
  },
  projectStats: {
    path: '/project/stats',
    summary: "Bytes of a project's calls, objects, tables and files",
    auth: 'basic',
    service: 'query',
    request: projectStatsReq,
    response: projectStatsRes,
  },
  callsComplete: {
    path: '/v2/:entity/:project/calls/complete',
    summary: 'Write finished calls (start and end together)',
    auth: 'basic',
    service: 'gateway',
    request: callsCompleteReq,
  },
  callStartV2: {
    path: '/v2/:entity/:project/call/start',
    summary: 'Start a call (v2 path)',
    auth: 'basic',
    service: 'gateway',
    request: z.object({ start: callStartBody }),
  },
  callEndV2: {
    path: '/v2/:entity/:project/call/end',
    summary: 'End a call (v2 path)',
    auth: 'basic',
    service: 'gateway',
    request: z.object({ end: callEndBody }),
  },
  callUpdate: { path: '/call/update', summary: 'Rename a call', auth: 'basic', service: 'gateway', request: callUpdateReq },
  callsDelete: {
    path: '/calls/delete',
    summary: 'Delete calls and their descendants',
    auth: 'basic',
    service: 'gateway',
    request: callsDeleteReq,
  },
  callRead: { path: '/call/read', summary: 'Read one call', auth: 'basic', service: 'query', request: callReadReq },
  objDelete: { path: '/obj/delete', summary: 'Delete object versions', auth: 'basic', service: 'gateway', request: objDeleteReq },
  tableQueryStats: {
    path: '/table/query_stats',
    summary: 'Count the rows of a table',
    auth: 'basic',
    service: 'query',
    request: tableQueryStatsReq,
  },
  tableQueryStatsBatch: {
    path: '/table/query_stats_batch',
    summary: 'Count the rows of tables',
    auth: 'basic',
    service: 'query',
    request: tableQueryStatsBatchReq,
  },
  feedbackCreate: {
    path: '/feedback/create',
    summary: 'Create a feedback record',
    auth: 'basic',
    service: 'gateway',
    request: feedbackCreateReq,
  },
  feedbackBatchCreate: {
    path: '/feedback/batch/create',
    summary: 'Create feedback records',
    auth: 'basic',
    service: 'gateway',
    request: feedbackBatchCreateReq,
  },
  feedbackPurge: {
    path: '/feedback/purge',
    summary: 'Delete feedback records by id',
    auth: 'basic',
    service: 'gateway',
    request: feedbackPurgeReq,
  },
  fileContent: {
    path: '/file/content',
    summary: 'Read a file',
    auth: 'basic',
    service: 'query',
    request: fileContentReq,
    aliases: ['/files/content'],
  },
  textCompletions: {
    path: '/v1/completions',
    summary: 'Create a (legacy, prompt) completion (OpenAI-compatible)',
    auth: 'bearer',
    service: 'inference',
    request: textCompletionReq,
  },
  embeddings: {
    path: '/v1/embeddings',
    summary: 'Create embeddings (OpenAI-compatible, passed through)',
    auth: 'bearer',
    service: 'inference',
    request: embeddingReq,
  },
  responsesCreate: {
    path: '/v1/responses',
    summary: 'Create a model response (OpenAI Responses API, forwarded; streamed as its SSE events)',
    auth: 'bearer',
    service: 'inference',
    request: responsesReq,
    stream: 'sse',
  },
  // For the web UI (services/ui); published in /openapi.json.
  projectsList: {
    path: '/projects/list',
    summary: 'Projects the key can see, with call counts and last activity',
    auth: 'basic',
    service: 'query',
    request: projectsListReq,
    response: projectsListRes,
    published: true,
  },
  callsAggregate: {
    path: '/calls/aggregate',
    summary: 'Calls, errors, latency, tokens and cost over time, per op and per model',
    auth: 'basic',
    service: 'query',
    request: callsAggregateReq,
    response: callsAggregateRes,
    published: true,
    lane: 'heavy',
  },
  callsExport: {
    path: '/calls/export',
    summary: 'The calls a query matches as a download: JSONL, CSV or Parquet, streamed',
    auth: 'basic',
    service: 'query',
    request: callsExportReq,
    response: z.string().describe('the file: application/jsonl, text/csv or application/vnd.apache.parquet'),
    // Streamed page by page: a limit as large as a stream's (WEFT_MAX_STREAM_LIMIT).
    stream: 'file',
    published: true,
    lane: 'heavy',
  },
  ttlSettingsRead: {
    path: '/project/ttl_settings/read',
    summary: "A project's retention: days its calls and their feedback are kept (null: forever)",
    auth: 'basic',
    service: 'query',
    request: projectSettingsReadReq,
    response: ttlSettingsRes,
    published: true,
  },
  ttlSettingsUpdate: {
    path: '/project/ttl_settings/update',
    summary: "Sets a project's retention (null: keep forever); what is older leaves the store within an interval",
    auth: 'basic',
    service: 'query',
    request: ttlSettingsUpdateReq,
    response: ttlSettingsRes,
    published: true,
  },
  // Deletions that delete (docs/operations.md "Deletion"): jobs whose status says when the data is off the disk.
  projectDelete: {
    path: '/project/delete',
    summary: "Deletes every row of a project (calls, feedback, objects, tables, files, settings…) from the engine's parts; a job",
    auth: 'basic',
    service: 'gateway',
    request: projectDeleteReq,
    response: deletionStatusRes,
    published: true,
  },
  userDataDelete: {
    path: '/user_data/delete',
    summary: 'Admin keys: deletes every call of a svc_user_id, in every project, and the feedback on them (a data-subject request); a job',
    auth: 'basic',
    service: 'gateway',
    request: userDataDeleteReq,
    response: deletionStatusRes,
    published: true,
  },
  deletionStatus: {
    path: '/deletion/status',
    summary: 'A deletion job: running, or done once no row of it is left in the parts and its mutations ended',
    auth: 'basic',
    service: 'gateway',
    request: deletionStatusReq,
    response: deletionStatusRes,
    published: true,
  },
  // The bus's dead letters (the all-in-one's ingest log, or the Kafka dead-letter topic; admin keys): `weft dead-letters` calls these.
  deadLettersList: {
    path: '/admin/dead_letters/list',
    summary:
      "Admin keys: the bus's dead letters (the ingest log's or the Kafka dead-letter topic's: values the store refused for good), with why and what became of them",
    auth: 'basic',
    service: 'gateway',
    request: deadLettersListReq,
    response: deadLettersListRes,
    published: true,
  },
  deadLetterRead: {
    path: '/admin/dead_letters/read',
    summary: 'Admin keys: one dead letter with its values (each call part as the row that was to be stored)',
    auth: 'basic',
    service: 'gateway',
    request: deadLetterReq,
    response: deadLetterRes,
    published: true,
  },
  deadLetterReplay: {
    path: '/admin/dead_letters/replay',
    summary: 'Admin keys: publishes a dead letter again through the normal write path (once: a replayed one is left as it is)',
    auth: 'basic',
    service: 'gateway',
    request: deadLetterReq,
    response: deadLetterEntry,
    published: true,
  },
  deadLetterDiscard: {
    path: '/admin/dead_letters/discard',
    summary: 'Admin keys: marks a dead letter discarded (it is no longer pending)',
    auth: 'basic',
    service: 'gateway',
    request: deadLetterReq,
    response: deadLetterEntry,
    published: true,
  },
  // Visible delivery (docs/operations.md "Visible delivery"): the counts of the process that answers.
  projectDelivery: {
    path: '/project/delivery',
    summary:
      "What became of a project's calls per entrance (accepted, stored, refused by reason, dead-lettered, sampled out) and its ack→queryable lag",
    auth: 'basic',
    service: 'gateway',
    request: projectDeliveryReq,
    response: projectDeliveryRes,
    published: true,
  },
  projectsDelivery: {
    path: '/projects/delivery',
    summary: 'Delivery totals and lag of every project the key can see (admin keys: also refusals whose project was not known)',
    auth: 'basic',
    service: 'gateway',
    request: projectsDeliveryReq,
    response: projectsDeliveryRes,
    published: true,
  },
  // Ingest policies (docs/operations.md "Redaction and sampling"): the gateway applies them, so it keeps them.
  ingestSamplingSettingsRead: {
    path: '/project/ingest_sampling_settings/read',
    summary: "A project's ingest sampling: the share of new traces stored (decided per trace id), and whether it is a dry run",
    auth: 'basic',
    service: 'gateway',
    request: projectSettingsReadReq,
    response: ingestSamplingSettingsRes,
    published: true,
  },
  ingestSamplingSettingsUpdate: {
    path: '/project/ingest_sampling_settings/update',
    summary: "Sets a project's ingest sampling rate for new traces (1: keep all), or a dry run that only counts",
    auth: 'basic',
    service: 'gateway',
    request: ingestSamplingSettingsUpdateReq,
    response: ingestSamplingSettingsRes,
    published: true,
  },
  sensitiveDataSettingsRead: {
    path: '/project/sensitive_data_settings',
    method: 'GET',
    urlMembers: true,
    summary: "A project's sensitive-data policy: off, or pii-v1 (new calls' sensitive values redacted on the server)",
    auth: 'basic',
    service: 'gateway',
    request: projectSettingsReadReq,
    response: sensitiveDataSettingsRes,
    published: true,
  },
  sensitiveDataSettingsUpdate: {
    path: '/project/sensitive_data_settings/update',
    summary: "Sets a project's sensitive-data policy (pii-v1: redact e-mail addresses, phone and card numbers… in new calls; off)",
    auth: 'basic',
    service: 'gateway',
    request: sensitiveDataSettingsUpdateReq,
    response: sensitiveDataSettingsRes,
    published: true,
  },
  tableExport: {
    path: '/table/export',
    summary: "A table's rows (a dataset's) as a download: JSONL, CSV or Parquet, streamed",
    auth: 'basic',
    service: 'query',
    request: tableExportReq,
    response: z.string().describe('the file: application/jsonl, text/csv or application/vnd.apache.parquet'),
    stream: 'file',
    published: true,
    lane: 'heavy',
  },
  tableDiff: {
    path: '/table/diff',
    summary: "Two versions of a table (a dataset's rows) compared by row digest: rows added, removed and changed, paged",
    auth: 'basic',
    service: 'query',
    request: tableDiffReq,
    response: tableDiffRes,
    published: true,
  },
  usersReadBatch: {
    path: '/users/read_batch',
    summary: "Names of user ids (svc_user_id): the members, present or past, of the project's entity, and the caller",
    auth: 'basic',
    service: 'query',
    request: usersReadBatchReq,
    response: usersReadBatchRes,
    published: true,
  },
  analyticsQuery: {
    path: '/analytics/query',
    summary: 'Metrics over calls grouped by dimensions and time (counts, errors, latency quantiles, tokens, cost)',
    auth: 'basic',
    service: 'query',
    request: analyticsQueryReq,
    response: analyticsQueryRes,
    published: true,
    lane: 'heavy',
  },
  // Annotation queues at the paths the Weave SDK calls (0.52.29's client, 0.54's vendored one).
  annotationQueueCreate: {
    path: '/annotation_queues',
    summary: 'Create an annotation queue',
    auth: 'basic',
    service: 'query',
    request: annotationQueueCreateReq,
    response: annotationQueueCreateRes,
    published: true,
  },
  annotationQueuesQuery: {
    path: '/annotation_queues/query',
    summary: "A project's annotation queues (JSONL), by name part, sorted, paged",
    auth: 'basic',
    service: 'query',
    request: annotationQueuesQueryReq,
    response: annotationQueue,
    stream: 'jsonl',
    published: true,
  },
  annotationQueuesStats: {
    path: '/annotation_queues/stats',
    summary: 'Items and completed items of annotation queues',
    auth: 'basic',
    service: 'query',
    request: annotationQueuesStatsReq,
    response: annotationQueuesStatsRes,
    published: true,
  },
  annotationQueueRead: {
    path: '/annotation_queues/:queue_id',
    method: 'GET',
    urlMembers: true,
    summary: 'Read an annotation queue',
    auth: 'basic',
    service: 'query',
    request: annotationQueueReadReq,
    response: annotationQueueRes,
    published: true,
  },
  annotationQueueUpdate: {
    path: '/annotation_queues/:queue_id',
    method: 'PUT',
    urlMembers: true,
    summary: "Change an annotation queue's name, description or scorers",
    auth: 'basic',
    service: 'query',
    request: annotationQueueUpdateReq,
    response: annotationQueueRes,
    published: true,
  },
  annotationQueueDelete: {
    path: '/annotation_queues/:queue_id',
    method: 'DELETE',
    urlMembers: true,
    summary: 'Delete an annotation queue (soft: its deleted_at is set)',
    auth: 'basic',
    service: 'query',
    request: annotationQueueDeleteReq,
    response: annotationQueueRes,
    published: true,
  },
  annotationQueueAddCalls: {
    path: '/annotation_queues/:queue_id/items',
    urlMembers: true,
    summary: 'Add calls to an annotation queue (calls already in it are skipped)',
    auth: 'basic',
    service: 'query',
    request: annotationQueueAddCallsReq,
    response: annotationQueueAddCallsRes,
    published: true,
  },
  annotationQueueItemsQuery: {
    path: '/annotation_queues/:queue_id/items/query',
    urlMembers: true,
    summary: "An annotation queue's items with their annotation state, filtered, sorted, paged",
    auth: 'basic',
    service: 'query',
    request: annotationQueueItemsQueryReq,
    response: annotationQueueItemsQueryRes,
    published: true,
  },
  annotatorProgressUpdate: {
    path: '/annotation_queues/:queue_id/items/:item_id/progress',
    urlMembers: true,
    summary: "Set the caller's annotation state of a queue item (in_progress, completed, skipped)",
    auth: 'basic',
    service: 'query',
    request: annotatorProgressUpdateReq,
    response: annotatorProgressUpdateRes,
    published: true,
  },
  actionsExecuteBatch: {
    path: '/actions/execute_batch',
    summary: "Run an ActionSpec (contains_words, llm_judge) on calls; each result is stored as the call's feedback",
    auth: 'basic',
    service: 'inference',
    request: actionsExecuteBatchReq,
    response: emptyObject,
    published: true,
  },
  evaluationsEvaluateModel: {
    path: '/evaluations/evaluate_model',
    summary: 'Run an Evaluation against an LLMStructuredCompletionModel on the server; answers the root call id at once',
    auth: 'basic',
    service: 'inference',
    request: evaluateModelReq,
    response: evaluateModelRes,
    published: true,
  },
  evaluationsStatus: {
    path: '/evaluations/status',
    summary: 'Progress of a server-side evaluation: not_found, running (rows done of total), failed, or complete with its summary',
    auth: 'basic',
    service: 'inference',
    request: evaluationStatusReq,
    response: evaluationStatusRes,
    published: true,
  },
  evaluationsCancel: {
    path: '/evaluations/cancel',
    summary:
      "weft's own: cancel a server-side evaluation (no row starts after it; the run ends failed, saying who cancelled); answers its status",
    auth: 'basic',
    service: 'inference',
    request: evaluationCancelReq,
    response: evaluationStatusRes,
    published: true,
  },
  evaluationsReplay: {
    path: '/evaluations/replay',
    summary:
      "weft's own: replay the calls a filter matches through a model object: they become a Dataset (inputs, original output, source call) and an Evaluation with the scorers, run as evaluate_model runs it",
    auth: 'basic',
    service: 'inference',
    request: evaluationReplayReq,
    response: evaluationReplayRes,
    published: true,
  },
  // Weave's V2 object and evaluation APIs (libs/api/src/v2-objects.ts, docs/api.md "V2 object and evaluation APIs").
  v2OpCreate: {
    path: '/v2/:entity/:project/ops',
    urlMembers: true,
    summary: 'Create an op (its source code stored as its obj.py file); a new version when the name exists',
    auth: 'basic',
    service: 'gateway',
    request: v2.opCreateReq,
    response: v2.opCreateRes,
    published: true,
  },
  v2OpList: {
    path: '/v2/:entity/:project/ops',
    method: 'GET',
    urlMembers: true,
    summary: 'The ops of a project (every live version, with its code), paged (JSONL)',
    auth: 'basic',
    service: 'gateway',
    request: v2.v2ListReq,
    response: v2.opRes,
    stream: 'jsonl',
    published: true,
  },
  v2OpRead: {
    path: '/v2/:entity/:project/ops/:object_id/versions/:digest',
    method: 'GET',
    urlMembers: true,
    summary: 'Read one version of an op (404; deleted: 404 with deleted_at)',
    auth: 'basic',
    service: 'gateway',
    request: v2.v2VersionReadReq,
    response: v2.opRes,
    published: true,
  },
  v2OpDelete: {
    path: '/v2/:entity/:project/ops/:object_id',
    method: 'DELETE',
    urlMembers: true,
    summary: 'Delete versions of an op (digests; absent: every version)',
    auth: 'basic',
    service: 'gateway',
    request: v2.v2VersionsDeleteReq,
    response: v2.v2DeleteRes,
    published: true,
  },
  v2DatasetCreate: {
    path: '/v2/:entity/:project/datasets',
    urlMembers: true,
    summary: 'Create a Dataset (its rows stored as a table); a new version when the name exists',
    auth: 'basic',
    service: 'gateway',
    request: v2.datasetCreateReq,
    response: v2.datasetCreateRes,
    published: true,
  },
  v2DatasetList: {
    path: '/v2/:entity/:project/datasets',
    method: 'GET',
    urlMembers: true,
    summary: 'The Datasets of a project (every live version; rows as a table ref), paged (JSONL)',
    auth: 'basic',
    service: 'gateway',
    request: v2.v2ListReq,
    response: v2.datasetRes,
    stream: 'jsonl',
    published: true,
  },
  v2DatasetRead: {
    path: '/v2/:entity/:project/datasets/:object_id/versions/:digest',
    method: 'GET',
    urlMembers: true,
    summary: 'Read one version of a Dataset (404; deleted: 404 with deleted_at)',
    auth: 'basic',
    service: 'gateway',
    request: v2.v2VersionReadReq,
    response: v2.datasetRes,
    published: true,
  },
  v2DatasetDelete: {
    path: '/v2/:entity/:project/datasets/:object_id',
    method: 'DELETE',
    urlMembers: true,
    summary: 'Delete versions of a Dataset (digests; absent: every version)',
    auth: 'basic',
    service: 'gateway',
    request: v2.v2VersionsDeleteReq,
    response: v2.v2DeleteRes,
    published: true,
  },
  v2ScorerCreate: {
    path: '/v2/:entity/:project/scorers',
    urlMembers: true,
    summary: 'Create a Scorer (its score op from the source given, a default summarize op); a new version when the name exists',
    auth: 'basic',
    service: 'gateway',
    request: v2.scorerCreateReq,
    response: v2.scorerCreateRes,
    published: true,
  },
  v2ScorerList: {
    path: '/v2/:entity/:project/scorers',
    method: 'GET',
    urlMembers: true,
    summary: 'The Scorers of a project (every live version), paged (JSONL)',
    auth: 'basic',
    service: 'gateway',
    request: v2.v2ListReq,
    response: v2.scorerRes,
    stream: 'jsonl',
    published: true,
  },
  v2ScorerRead: {
    path: '/v2/:entity/:project/scorers/:object_id/versions/:digest',
    method: 'GET',
    urlMembers: true,
    summary: 'Read one version of a Scorer (404; deleted: 404 with deleted_at)',
    auth: 'basic',
    service: 'gateway',
    request: v2.v2VersionReadReq,
    response: v2.scorerRes,
    published: true,
  },
  v2ScorerDelete: {
    path: '/v2/:entity/:project/scorers/:object_id',
    method: 'DELETE',
    urlMembers: true,
    summary: 'Delete versions of a Scorer (digests; absent: every version)',
    auth: 'basic',
    service: 'gateway',
    request: v2.v2VersionsDeleteReq,
    response: v2.v2DeleteRes,
    published: true,
  },
  v2EvaluationCreate: {
    path: '/v2/:entity/:project/evaluations',
    urlMembers: true,
    summary:
      'Create an Evaluation of a dataset with scorers (placeholder evaluate, predict_and_score and summarize ops); a new version when the name exists',
    auth: 'basic',
    service: 'gateway',
    request: v2.evaluationCreateReq,
    response: v2.evaluationCreateRes,
    published: true,
  },
  v2EvaluationList: {
    path: '/v2/:entity/:project/evaluations',
    method: 'GET',
    urlMembers: true,
    summary: 'The Evaluations of a project (every live version), paged (JSONL)',
    auth: 'basic',
    service: 'gateway',
    request: v2.v2ListReq,
    response: v2.evaluationRes,
    stream: 'jsonl',
    published: true,
  },
  v2EvaluationRead: {
    path: '/v2/:entity/:project/evaluations/:object_id/versions/:digest',
    method: 'GET',
    urlMembers: true,
    summary: 'Read one version of an Evaluation of a dataset with scorers (404; deleted: 404 with deleted_at)',
    auth: 'basic',
    service: 'gateway',
    request: v2.v2VersionReadReq,
    response: v2.evaluationRes,
    published: true,
  },
  v2EvaluationDelete: {
    path: '/v2/:entity/:project/evaluations/:object_id',
    method: 'DELETE',
    urlMembers: true,
    summary: 'Delete versions of an Evaluation of a dataset with scorers (digests; absent: every version)',
    auth: 'basic',
    service: 'gateway',
    request: v2.v2VersionsDeleteReq,
    response: v2.v2DeleteRes,
    published: true,
  },
  v2ModelCreate: {
    path: '/v2/:entity/:project/models',
    urlMembers: true,
    summary: 'Create a Model (its source code stored as its obj.py file, its attributes as members); a new version when the name exists',
    auth: 'basic',
    service: 'gateway',
    request: v2.modelCreateReq,
    response: v2.modelCreateRes,
    published: true,
  },
  v2ModelList: {
    path: '/v2/:entity/:project/models',
    method: 'GET',
    urlMembers: true,
    summary: 'The Models of a project (every live version, with source and attributes), paged (JSONL)',
    auth: 'basic',
    service: 'gateway',
    request: v2.v2ListReq,
    response: v2.modelRes,
    stream: 'jsonl',
    published: true,
  },
  v2ModelRead: {
    path: '/v2/:entity/:project/models/:object_id/versions/:digest',
    method: 'GET',
    urlMembers: true,
    summary: 'Read one version of a Model (404; deleted: 404 with deleted_at)',
    auth: 'basic',
    service: 'gateway',
    request: v2.v2VersionReadReq,
    response: v2.modelRes,
    published: true,
  },
  v2ModelDelete: {
    path: '/v2/:entity/:project/models/:object_id',
    method: 'DELETE',
    urlMembers: true,
    summary: 'Delete versions of a Model (digests; absent: every version)',
    auth: 'basic',
    service: 'gateway',
    request: v2.v2VersionsDeleteReq,
    response: v2.v2DeleteRes,
    published: true,
  },
  v2EvaluationRunCreate: {
    path: '/v2/:entity/:project/evaluation_runs',
    urlMembers: true,
    summary: 'Start an evaluation run of a model (an Evaluation.evaluate call)',
    auth: 'basic',
    service: 'gateway',
    request: v2.evaluationRunCreateReq,
    response: v2.evaluationRunCreateRes,
    published: true,
  },
  v2EvaluationRunList: {
    path: '/v2/:entity/:project/evaluation_runs',
    method: 'GET',
    urlMembers: true,
    summary: 'Evaluation runs of a project, by evaluation, model or id, paged (JSONL)',
    auth: 'basic',
    service: 'gateway',
    request: v2.evaluationRunListReq,
    response: v2.evaluationRunRes,
    stream: 'jsonl',
    published: true,
  },
  v2EvaluationRunDelete: {
    path: '/v2/:entity/:project/evaluation_runs',
    method: 'DELETE',
    urlMembers: true,
    summary: 'Delete evaluation runs (their calls and descendants)',
    auth: 'basic',
    service: 'gateway',
    request: v2.evaluationRunDeleteReq,
    response: v2.v2DeleteRes,
    published: true,
  },
  v2EvaluationRunRead: {
    path: '/v2/:entity/:project/evaluation_runs/:evaluation_run_id',
    method: 'GET',
    urlMembers: true,
    summary: 'Read an evaluation run: its refs, status, times and summary',
    auth: 'basic',
    service: 'gateway',
    request: v2.evaluationRunReadReq,
    response: v2.evaluationRunRes,
    published: true,
  },
  v2EvaluationRunFinish: {
    path: '/v2/:entity/:project/evaluation_runs/:evaluation_run_id/finish',
    urlMembers: true,
    summary: "Finish an evaluation run: a summarize call with the scorers' means, then the run's end",
    auth: 'basic',
    service: 'gateway',
    request: v2.evaluationRunFinishReq,
    response: v2.v2SuccessRes,
    published: true,
  },
  v2PredictionCreate: {
    path: '/v2/:entity/:project/predictions',
    urlMembers: true,
    summary: "Record a model's prediction (a <model>.predict call; in a run, under a predict_and_score call)",
    auth: 'basic',
    service: 'gateway',
    request: v2.predictionCreateReq,
    response: v2.predictionCreateRes,
    published: true,
  },
  v2PredictionList: {
    path: '/v2/:entity/:project/predictions',
    method: 'GET',
    urlMembers: true,
    summary: 'Predictions of a project or of one evaluation run, paged (JSONL)',
    auth: 'basic',
    service: 'gateway',
    request: v2.predictionListReq,
    response: v2.predictionRes,
    stream: 'jsonl',
    published: true,
  },
  v2PredictionDelete: {
    path: '/v2/:entity/:project/predictions',
    method: 'DELETE',
    urlMembers: true,
    summary: 'Delete predictions (their calls)',
    auth: 'basic',
    service: 'gateway',
    request: v2.predictionDeleteReq,
    response: v2.v2DeleteRes,
    published: true,
  },
  v2PredictionRead: {
    path: '/v2/:entity/:project/predictions/:prediction_id',
    method: 'GET',
    urlMembers: true,
    summary: 'Read a prediction',
    auth: 'basic',
    service: 'gateway',
    request: v2.predictionReadReq,
    response: v2.predictionRes,
    published: true,
  },
  v2PredictionFinish: {
    path: '/v2/:entity/:project/predictions/:prediction_id/finish',
    urlMembers: true,
    summary: 'Finish a prediction; in a run, also its predict_and_score call (output, scores, model latency)',
    auth: 'basic',
    service: 'gateway',
    request: v2.predictionFinishReq,
    response: v2.v2SuccessRes,
    published: true,
  },
  v2ScoreCreate: {
    path: '/v2/:entity/:project/scores',
    urlMembers: true,
    summary: "Record a scorer's score of a prediction (a <scorer>.score call, and feedback on the prediction)",
    auth: 'basic',
    service: 'gateway',
    request: v2.scoreCreateReq,
    response: v2.scoreCreateRes,
    published: true,
  },
  v2ScoreList: {
    path: '/v2/:entity/:project/scores',
    method: 'GET',
    urlMembers: true,
    summary: 'Scores of a project or of one evaluation run, paged (JSONL)',
    auth: 'basic',
    service: 'gateway',
    request: v2.scoreListReq,
    response: v2.scoreRes,
    stream: 'jsonl',
    published: true,
  },
  v2ScoreDelete: {
    path: '/v2/:entity/:project/scores',
    method: 'DELETE',
    urlMembers: true,
    summary: 'Delete scores (their calls)',
    auth: 'basic',
    service: 'gateway',
    request: v2.scoreDeleteReq,
    response: v2.v2DeleteRes,
    published: true,
  },
  v2ScoreRead: {
    path: '/v2/:entity/:project/scores/:score_id',
    method: 'GET',
    urlMembers: true,
    summary: 'Read a score',
    auth: 'basic',
    service: 'gateway',
    request: v2.scoreReadReq,
    response: v2.scoreRes,
    published: true,
  },
} as const satisfies Record<string, ExtraEndpointSpec>;

/** /file/create (multipart/form-data: `project_id`, a `file` part) has no JSON body; its path is here for routing. */
export const FILE_CREATE_PATH = '/file/create';

export type ExtraEndpointName = keyof typeof extraEndpoints;
export type ExtraRequestOf<N extends ExtraEndpointName> = z.infer<(typeof extraEndpoints)[N]['request']>;

/** The extra endpoints /openapi.json lists (tagged `extra`): those marked `published`, with their response. */
export function publishedExtraEndpoints(): [ExtraEndpointName, ExtraEndpointSpec & { response: z.ZodType }][] {
  return (Object.entries(extraEndpoints) as [ExtraEndpointName, ExtraEndpointSpec][]).flatMap(([name, spec]) =>
    spec.published && spec.response
      ? [[name, { ...spec, response: spec.response }] as [ExtraEndpointName, ExtraEndpointSpec & { response: z.ZodType }]]
      : [],
  );
}
