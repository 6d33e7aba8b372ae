import { type z } from 'zod';
import * as calls from './calls';
import * as objects from './objects';
import * as tables from './tables';
import * as feedback from './feedback';
import * as costs from './costs';
import * as inference from './inference';
import { jsonObject } from './common';
import type { EndpointSpec } from './spec';

/** The 20 endpoints of the interface, in its order. The contract lives here, once. */
export const endpoints = {
  feedbackReplace: {
    path: '/feedback/replace',
    summary: 'Replace a feedback record',
    auth: 'basic',
    service: 'gateway',
    request: feedback.feedbackReplaceReq,
    response: feedback.feedbackReplaceRes,
  },
  feedbackQuery: {
    path: '/feedback/query',
    summary: 'Query feedback',
    auth: 'basic',
    service: 'query',
    request: feedback.feedbackQueryReq,
    response: feedback.feedbackQueryRes,
  },
  chatCompletions: {
    path: '/v1/chat/completions/',
    summary: 'Create a chat completion (OpenAI-compatible)',
    auth: 'bearer',
    service: 'inference',
    request: inference.chatCompletionReq,
    response: inference.chatCompletionRes,
    stream: 'sse',
    aliases: ['/v1/chat/completions'],
  },
  callsStreamQuery: {
    path: '/calls/stream_query',
    summary: 'Stream calls (JSONL)',
    auth: 'basic',
    service: 'query',
    request: calls.callsStreamQueryReq,
    response: calls.call,
    stream: 'jsonl',
  },
  callsQueryStats: {
    path: '/calls/query_stats',
    summary: 'Count calls',
    auth: 'basic',
    service: 'query',
    request: calls.callsQueryStatsReq,
    response: calls.callsQueryStatsRes,
  },
  objsQuery: {
    path: '/objs/query',
    summary: 'Query object versions',
    auth: 'basic',
    service: 'query',
    request: objects.objsQueryReq,
    response: objects.objsQueryRes,
  },
  objRead: {
    path: '/obj/read',
    summary: 'Read one object version',
    auth: 'basic',
    service: 'query',
    request: objects.objReadReq,
    response: objects.objReadRes,
  },
  objCreate: {
    path: '/obj/create',
    summary: 'Create an object version',
    auth: 'basic',
    service: 'gateway',
    request: objects.objCreateReq,
    response: objects.objCreateRes,
  },
  tableQuery: {
    path: '/table/query',
    summary: 'Query table rows',
    auth: 'basic',
    service: 'query',
    request: tables.tableQueryReq,
    response: tables.tableQueryRes,
  },
  tableQueryStream: {
    path: '/table/query_stream',
    summary: 'Stream table rows (JSONL)',
    auth: 'basic',
    service: 'query',
    request: tables.tableQueryReq,
    response: tables.tableRow,
    stream: 'jsonl',
  },
  tableUpdate: {
    path: '/table/update',
    summary: 'Update a table',
    auth: 'basic',
    service: 'gateway',
    request: tables.tableUpdateReq,
    response: tables.tableUpdateRes,
  },
  costQuery: {
    path: '/cost/query',
    summary: 'Query costs',
    auth: 'basic',
    service: 'query',
    request: costs.costQueryReq,
    response: costs.costQueryRes,
  },
  completionsCreate: {
    path: '/completions/create',
    summary: 'Project-scoped completion',
    auth: 'basic',
    service: 'inference',
    request: inference.completionsCreateReq,
    response: inference.completionsCreateRes,
  },
  completionsCreateStream: {
    path: '/completions/create_stream',
    summary: 'Streamed project-scoped completion (JSONL)',
    auth: 'basic',
    service: 'inference',
    request: inference.completionsCreateReq,
    response: jsonObject,
    stream: 'jsonl',
  },
  threadsStreamQuery: {
    path: '/threads/stream_query',
    summary: 'Stream thread statistics (JSONL)',
    auth: 'basic',
    service: 'query',
    request: calls.threadsStreamQueryReq,
    response: calls.thread,
    stream: 'jsonl',
  },
  callStart: {
    path: '/call/start',
    summary: 'Start a call',
    auth: 'basic',
    service: 'gateway',
    request: calls.callStartReq,
    response: calls.callStartRes,
  },
  callEnd: {
    path: '/call/end',
    summary: 'End a call',
    auth: 'basic',
    service: 'gateway',
    request: calls.callEndReq,
    response: calls.callEndRes,
  },
  callUpsertBatch: {
    path: '/call/upsert_batch',
    summary: 'Start and end calls in a batch',
    auth: 'basic',
    service: 'gateway',
    request: calls.callUpsertBatchReq,
    response: calls.callUpsertBatchRes,
  },
  otelTrace: {
    path: '/otel/v1/trace',
    summary: 'Ingest OTLP trace data (JSON mapping inside a body)',
    auth: 'basic',
    service: 'gateway',
    request: calls.otelExportReq,
    response: calls.otelExportRes,
  },
  modelCreate: {
    path: '/v1/preview/models',
    summary: 'Create a model record',
    auth: 'bearer',
    service: 'inference',
    request: inference.modelCreateReq,
    response: inference.modelRecord,
  },
} as const satisfies Record<string, EndpointSpec>;

export type EndpointName = keyof typeof endpoints;
export type RequestOf<N extends EndpointName> = z.infer<(typeof endpoints)[N]['request']>;
export type ResponseOf<N extends EndpointName> = z.infer<(typeof endpoints)[N]['response']>;
