// What other packages use, by name (a package that needs more adds it here).
export { type CallFilter, isJsonObject, jsonObject, projectId } from './common';
export {
  type Call,
  callEndBody,
  type CallEndBody,
  type CallsQueryStatsReq,
  type CallsStreamQueryReq,
  callStartBody,
  type CallStartBody,
  type CompletedCall,
  thread,
  type ThreadsStreamQueryReq,
} from './calls';
export { objectVersion } from './objects';
export { tableRow, MAX_TABLE_DIFF_ROWS, type TableDiffEntry, type TableDiffReq, type TableDiffRes } from './tables';
export type { CostCreateReq } from './costs';
export { FILE_CREATE_PATH } from './files';
export type { ChatCompletionReq, CompletionsCreateReq, EmbeddingReq, ResponsesReq, TextCompletionReq } from './inference';
export { type EndpointName, endpoints, type RequestOf, type ResponseOf } from './endpoints';
export type { EndpointSpec, RouteSpec } from './spec';
export { INVALID_BODY_STATUS, parseBody } from './validate';
export { buildOpenApiDocument, type DocumentedRoute, openApiPath, ROUTE_TAGS, type RouteDoc } from './openapi';
export { extraEndpoints, publishedExtraEndpoints, type RouteName, type RouteRequestOf, type RouteResponseOf, routeSpecs } from './routes';
export {
  type AnalyticsBatchReq,
  type AnalyticsBatchRes,
  analyticsQueryReq,
  type AnalyticsQueryReq,
  type AnalyticsQueryRes,
  CALL_EXPORT_COLUMNS,
  type CallExportColumn,
  type CallsAggregateReq,
  callsAggregateRes,
  type CallsAggregateRes,
  type CallsExportReq,
  METRIC_BUCKETS,
  type ProjectsListReq,
  projectSummary,
  type ProjectSummary,
  type TableExportReq,
} from './analytics';
export { svcAliasOf } from './reference-requests';
export { CALL_METRICS, STAT_AGGREGATIONS, USAGE_METRICS } from './call-stats';
export type { OtelLogRecord, OtelLogsQueryReq } from './otel-logs';
export { ttlSettingsRes, ttlSettingsUpdateReq } from './project-settings';
export { deletionStatusRes } from './deletions';
export { projectDeliveryRes } from './delivery';
export { type AnnotationQueue, type AnnotationQueueItem, QUEUE_ITEM_SORT_FIELDS, QUEUE_SORT_FIELDS } from './annotation-queues';
export { type ActionConfig, actionSpec } from './actions';
export type { EvaluationStatus, EvaluationsExportReq } from './evaluations';
export { v2ProjectOf } from './v2-objects';
