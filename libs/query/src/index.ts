// What other packages use, by name (a package that needs more adds it here).
export { Params } from './params';
export { compileQuery, type FieldRef, type FieldResolver, jsonFieldRef, sortTerms, splitFieldPath } from './expr';
export { buildCallsStatsQuery, callSizesSql, CallsQueryPlan, type Cursor, type PageSpec, type StartSpan, traceSizesSql } from './calls';
export { CallFieldResolver } from './call-fields';
export { callCosts, createCosts, modelPriced, purgeCosts, queryCosts, usageCost, type UsageEntry } from './costs';
export { buildThreadsQuery, threadCandidatesQuery } from './threads';
export { CallsAggregatePlan } from './aggregates';
export { FRONT_OP_NAMES } from './own-usage';
export { CALL_FIGURES, type CallFigure, callWindowSql, callWindowsRowsSql, type CallWindowReq } from './call-values';
export { buildOwnUsageRowsQuery, type OwnUsageRow, rollUpUsage, type UsageByModel } from './usage-rollup';
export { callStatsGranularity, CallStatsPlan } from './call-stats';
export { countExpiredRows, expiredRowsSql, removeExpiredRows, type RetentionCutoffs, type RetentionTable } from './retention';
// Analytics (analytics/): the planner of /analytics/query over the catalogue (@weft/analytics), and its facts.
export { chooseBucketSeconds, MetricsQueryPlan } from './analytics/planner';
export { answerFrom, checkBatchQuery, planBatch, type BatchGroup } from './analytics/batch';
export { FactsKeeper, type FactsKeeperOptions } from './analytics/facts-keeper';
export { gapsOf, type FactSegment, type FactsCoverage } from './analytics/facts';
export { dayStartUs, planDay, splitByCalls, type DayToPlan, type SegmentState } from './analytics/fact-segments';
export {
  CALL_RETENTION,
  callProgress,
  callRefsSql,
  CALLS_OF_USER_SQL,
  CALLS_OF_USER_WHERE,
  callsStorageBytesSql,
  callStartAndEnded,
  endRowCount,
  expiredCallRefsSql,
  liveCallBodies,
  liveCallsForQueue,
  liveCallsInTracesOf,
  projectCallActivitySql,
  type TableRows,
  traceIdsOf,
  USER_CALL_ROWS,
} from './repositories/calls';
export {
  deleteStepRows,
  pendingMutations,
  PROJECT_ROWS_WHERE,
  readDeletionJob,
  recordDeletionJob,
  stepRowsLeft,
  tablesWithProjectRows,
  type DeletionJobRow,
  type DeletionKind,
} from './repositories/deletion-jobs';
export { callInputsAndOutputs, callStorageSizes, matchedCallsOldestFirst, traceCalls, type TraceCallRow } from './call-reads';
export { insertLogRecords, projectHasSpanEvents, queryLogRecords, spanEvents } from './repositories/otel-logs';
export {
  agentTotals,
  agentTraceSpans,
  conversationTraces,
  otelSpanBuckets,
  otelSpansIn,
  spansContaining,
  type AgentSpanRow,
  type AgentTotalsRow,
} from './repositories/agents';
