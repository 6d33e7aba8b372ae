// What other packages use (tests and benches included).
export {
  ApiError,
  badRequest,
  conflict,
  forbidden,
  headerSafe,
  invalidField,
  isApiError,
  notFound,
  payloadTooLarge,
  unauthorized,
  unavailable,
} from './errors';
export { mapConcurrently } from './concurrency';
export { generateId } from './ids';
export {
  clickHouseToIso,
  clickHouseToMicros,
  microsToClickHouse,
  microsToIso,
  nanosToMicros,
  nowMicros,
  parseTimestampMicros,
} from './time';
export { createLogger, type Logger } from './logger';
export {
  type Config,
  ConfigError,
  configSchema,
  ingestLogConfig,
  kafkaConfig,
  type KafkaConfig,
  laneConfig,
  type LaneConfig,
  loadConfig,
  publishStageConfig,
  type PublishStageConfig,
  writerConfig,
  type WriterConfig,
} from './config';
export { type AuthScheme, type Caller, parseAuthorization, parseProjectId } from './auth';
export { extractRefs, REF_PREFIX } from './refs';
export { metrics, metricsRegistry } from './metrics';
export { type Component, type HealthProbe } from './health';
export { VERSION } from './version';
export {
  isLimitExceeded,
  isPermanent,
  isRetryable,
  LimitExceededError,
  markPermanent,
  markUnavailable,
  retryAfterOf,
  RetryableError,
} from './failure';
export { inLane, type Lane, LANES, type StatementContext, statementContext } from './lanes';
export { processAlive } from './process-alive';
export { ENGINE_THREAD_POOL_SIZE, threadPoolSize, withEngineThreadPool } from './thread-pool';
export { StartupError } from './startup-error';
export { delivery, deliveryProjectOf, type Entrance, ENTRANCES, type StoredEntrance, totalCounts, withDeliveryProject } from './delivery';
export { DIST_URL } from './build-output';
export { FIGURE_SIGNIFICANT_DIGITS, roundFigure } from './figures';
