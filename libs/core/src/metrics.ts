import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The process's Prometheus metrics, served by every service at GET /metrics. One registry
 * per process: the all-in-one mode shows the gateway's and the writer's metrics together.
 */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry, prefix: 'weft_process_' });

const registers = [metricsRegistry];
const latencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export const metrics = {
  httpRequests: new Counter({
    name: 'weft_http_requests_total',
    help: 'HTTP requests answered, by route and status code',
    labelNames: ['route', 'status'] as const,
    registers,
  }),
  httpRequestBytes: new Counter({
    name: 'weft_http_request_bytes_total',
    help: 'Request body bytes received, by route',
    labelNames: ['route'] as const,
    registers,
  }),
  httpResponseBytes: new Counter({
    name: 'weft_http_response_bytes_total',
    help: 'Response body bytes sent where the length is known, by route',
    labelNames: ['route'] as const,
    registers,
  }),
  callPartsAccepted: new Counter({
    name: 'weft_call_parts_accepted_total',
    help: 'Call parts (starts and ends) acknowledged to clients as durable',
    registers,
  }),
  busPending: new Gauge({
    name: 'weft_bus_pending_messages',
    help: 'Messages handed to the bus and not yet acknowledged',
    registers,
  }),
  ingestLogUnstoredBytes: new Gauge({
    name: 'weft_ingest_log_unstored_bytes',
    help: 'All-in-one (WEFT_ACK_AFTER=log): bytes of call parts acknowledged from the ingest log and not yet stored',
    registers,
  }),
  busRejected: new Counter({
    name: 'weft_bus_rejected_total',
    help: 'Publishes refused (overload, timeout, broker down); the client got 503',
    labelNames: ['reason'] as const,
    registers,
  }),
  admissionRefused: new Counter({
    name: 'weft_admission_refused_total',
    help: 'Requests refused with 503 before their body was read (in-flight bounds, bus full or down)',
    labelNames: ['reason'] as const,
    registers,
  }),
  refusedBodies: new Counter({
    name: 'weft_refused_bodies_total',
    help: 'Bodies of requests refused before they were read: drained (read and discarded), closed unread (over the drain bound), cut (deadline or bound reached while draining)',
    labelNames: ['outcome'] as const,
    registers,
  }),
  refusedBodyBytesDrained: new Counter({
    name: 'weft_refused_body_bytes_drained_total',
    help: 'Bytes of refused request bodies read and discarded',
    registers,
  }),
  requestTimeouts: new Counter({
    name: 'weft_request_timeouts_total',
    help: 'Requests cut by a timeout, by phase (headers, body, whole request)',
    labelNames: ['phase'] as const,
    registers,
  }),
  streamsAborted: new Counter({
    name: 'weft_streams_aborted_total',
    help: 'Streamed responses that ended before their last row (client gone or error)',
    labelNames: ['reason'] as const,
    registers,
  }),
  retentionRowsRemoved: new Counter({
    name: 'weft_retention_rows_removed_total',
    help: 'Rows of calls, feedback and alert history removed by retention, by table',
    labelNames: ['table'] as const,
    registers,
  }),
  analyticsFactsDays: new Gauge({
    name: 'weft_analytics_facts_days',
    help: 'Days of calls (all projects) with analytics facts read, as of the last build pass',
    registers,
  }),
  analyticsFactsBuiltCalls: new Counter({
    name: 'weft_analytics_facts_built_calls_total',
    help: 'Calls written into analytics facts by segment builds (a call built again when its segment is merged or touched counts again)',
    registers,
  }),
  analyticsFactsBuildSeconds: new Histogram({
    name: 'weft_analytics_facts_build_seconds',
    help: 'Time to build one segment of analytics facts (a range of one day of a project)',
    buckets: [0.1, 0.5, 1, 5, 10, 30, 60, 300],
    registers,
  }),
  analyticsQueries: new Counter({
    name: 'weft_analytics_queries_total',
    help: '/analytics/query answers, by where their calls were read (facts: some days from analytics facts; patched: facts less the calls written to since their build; calls: none)',
    labelNames: ['source'] as const,
    registers,
  }),
  monitorScoreLag: new Histogram({
    name: 'weft_monitor_score_lag_seconds',
    help: "Time from a call's end to its monitor scores being stored",
    buckets: [0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600],
    registers,
  }),
  workerPassSeconds: new Histogram({
    name: 'weft_worker_pass_seconds',
    help: 'Time one pass of a background worker took (failed passes too), by worker (retention, monitors, analytics-facts, evaluations, alerts)',
    labelNames: ['worker'] as const,
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900],
    registers,
  }),
  workerPassFailures: new Counter({
    name: 'weft_worker_pass_failures_total',
    help: 'Passes of a background worker that failed (logged; the next pass tries again), by worker',
    labelNames: ['worker'] as const,
    registers,
  }),
  alertPassSeconds: new Histogram({
    name: 'weft_alert_pass_seconds',
    help: "Time one pass of the alert worker took to evaluate every AlertSpec (the lease holder's passes only)",
    buckets: [0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
    registers,
  }),
  alertTransitions: new Counter({
    name: 'weft_alert_transitions_total',
    help: 'Alert transitions recorded, by the state entered (firing, resolved)',
    labelNames: ['state'] as const,
    registers,
  }),
  alertDeliveries: new Counter({
    name: 'weft_alert_delivery_attempts_total',
    help: 'Attempts to deliver an alert notification, by outcome (sent, retry: failed and tried again, failed: given up)',
    labelNames: ['outcome'] as const,
    registers,
  }),
  stageBatchItems: new Histogram({
    name: 'weft_stage_batch_items',
    help: 'Items per batch the batching stage sent, by transport (ingest-log, ack-after-insert, kafka-producer, kafka-consumer) and lane (a topic, a partition)',
    labelNames: ['transport', 'lane'] as const,
    buckets: [1, 10, 100, 500, 1000, 2500, 5000, 10000, 25000, 50000],
    registers,
  }),
  stageSendSeconds: new Histogram({
    name: 'weft_stage_send_seconds',
    help: "Time one send of the batching stage took (its sender's insert or request, each attempt), by transport, lane and outcome (ok, failed)",
    labelNames: ['transport', 'lane', 'outcome'] as const,
    buckets: latencyBuckets,
    registers,
  }),
  stageSendRetries: new Counter({
    name: 'weft_stage_send_retries_total',
    help: 'Failed sends of the batching stage tried again (the ingest log retries until stored), by transport and lane',
    labelNames: ['transport', 'lane'] as const,
    registers,
  }),
  stagePendingItems: new Gauge({
    name: 'weft_stage_pending_items',
    help: 'Items offered to the batching stage and not yet answered, by transport',
    labelNames: ['transport'] as const,
    registers,
  }),
  stagePendingBytes: new Gauge({
    name: 'weft_stage_pending_bytes',
    help: 'Bytes offered to the batching stage and not yet answered, by transport',
    labelNames: ['transport'] as const,
    registers,
  }),
  producerLatency: new Histogram({
    name: 'weft_producer_latency_seconds',
    help: 'Time from publish to acknowledgement by the bus (Kafka: all in-sync replicas)',
    buckets: latencyBuckets,
    registers,
  }),
  writerBatchRows: new Histogram({
    name: 'weft_writer_batch_rows',
    help: 'Rows per ClickHouse insert made by the writer',
    buckets: [1, 10, 100, 500, 1000, 2500, 5000, 10000, 25000, 50000],
    registers,
  }),
  insertLatency: new Histogram({
    name: 'weft_writer_insert_latency_seconds',
    help: 'Duration of the writer inserts into ClickHouse',
    buckets: latencyBuckets,
    registers,
  }),
  storeStatementSeconds: new Histogram({
    name: 'weft_store_statement_seconds',
    help: "Duration of the store's typed statements (rows, streams to their last chunk, commands, inserts), by statement name and outcome (ok or the failure kind)",
    labelNames: ['statement', 'outcome'] as const,
    buckets: latencyBuckets,
    registers,
  }),
  laneRunning: new Gauge({
    name: 'weft_lane_running',
    help: 'Engine statements running now, by lane (ingest, interactive, heavy, background)',
    labelNames: ['lane'] as const,
    registers,
  }),
  laneQueued: new Gauge({
    name: 'weft_lane_queued',
    help: 'Engine statements waiting for a connection of their lane, by lane',
    labelNames: ['lane'] as const,
    registers,
  }),
  laneWaitSeconds: new Histogram({
    name: 'weft_lane_wait_seconds',
    help: 'Time a statement waited for a connection of its lane before it ran, by lane',
    labelNames: ['lane'] as const,
    buckets: latencyBuckets,
    registers,
  }),
  laneYielded: new Counter({
    name: 'weft_lane_yield_total',
    help: "Statements of a lane with a nice value (WEFT_LANE_NICE), by lane and whether they ran at it (yielded: another lane's work was there) or at the process's own",
    labelNames: ['lane', 'yielded'] as const,
    registers,
  }),
  laneCancelled: new Counter({
    name: 'weft_lane_cancelled_total',
    help: 'Statements cancelled because their caller went away (waiting or running), by lane',
    labelNames: ['lane'] as const,
    registers,
  }),
  laneRefused: new Counter({
    name: 'weft_lane_refused_total',
    help: "Statements or heavy requests refused: past the lane's queue wait, a project's or key's heavy cap (429), or a lane's time/memory/row cap, by lane and reason",
    labelNames: ['lane', 'reason'] as const,
    registers,
  }),
  consumerLag: new Gauge({
    name: 'weft_consumer_lag_messages',
    help: 'Messages not yet written to the store (the high watermark as of the last fetch, minus the next offset to write), per topic and partition this process holds',
    labelNames: ['topic', 'partition'] as const,
    registers,
  }),
  otlpSpansAccepted: new Counter({
    name: 'weft_otlp_spans_accepted_total',
    help: 'OTLP spans acknowledged as calls, by entrance (http, grpc, trace endpoint)',
    labelNames: ['transport'] as const,
    registers,
  }),
  otlpSpansRejected: new Counter({
    name: 'weft_otlp_spans_rejected_total',
    help: 'OTLP spans refused (reported in partial_success or by the request error), by reason and entrance',
    labelNames: ['reason', 'transport'] as const,
    registers,
  }),
  otlpLogRecordsAccepted: new Counter({
    name: 'weft_otlp_log_records_accepted_total',
    help: 'OTLP log records stored, by entrance (http, grpc)',
    labelNames: ['transport'] as const,
    registers,
  }),
  otlpLogRecordsRejected: new Counter({
    name: 'weft_otlp_log_records_rejected_total',
    help: 'OTLP log records refused (reported in partial_success or by the request error), by reason and entrance',
    labelNames: ['reason', 'transport'] as const,
    registers,
  }),
  deadLettered: new Counter({
    name: 'weft_dead_lettered_total',
    help: 'Messages moved to the dead-letter topic, by reason kind',
    labelNames: ['kind'] as const,
    registers,
  }),
};
