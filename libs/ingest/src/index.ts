// What other packages use, by name (a package that needs more adds it here).
export {
  callHalves,
  callPartCodec,
  type CallPartEnvelope,
  callPartFacts,
  callPartIdentity,
  callPartInsertable,
  callPartMessage,
  encodedCallPartMessages,
  enteredCallPartMessage,
  projectOfCallPartKey,
} from './envelope';
export { CallIngest } from './call-ingest';
export {
  callBatchError,
  type CallBatchRefused,
  type CallBatchTask,
  callEndPart,
  callStartPart,
  coalesceCallParts,
  encodeCallBatch,
  type EncodedCallBatch,
  encodeCallPartRows,
  upsertBatchParts,
} from './call-batch';
export { redactCallPart, redactJsonText, redactText } from './redaction';
export { type SamplingSetting, traceFraction, traceKept } from './sampling';
export { INGEST_SAMPLING_SETTING, IngestSettings, ingestSettingsFor, isPiiPolicy, PII_POLICY_SETTING } from './ingest-settings';
export { type OtlpPayload, spansToParts } from './otlp-spans';
export {
  type CallBatchConverter,
  convertersFor,
  IngestConversions,
  inlineSpanConverter,
  type SpanConverter,
  workerSpanConverter,
} from './conversions';
export { ingestWorkerCount, IngestWorkers, ingestWorkersFor } from './ingest-workers';
export { type DeadLetterAction, firstDeadLetterActions, recordDeadLetterAction } from './dead-letter-actions';
