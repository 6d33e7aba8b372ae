// What other packages use (tests and benches included).
export { type BatchOutcome, type Bus, BusUnavailableError, type Subscription } from './bus';
export { type BusMessage, TOPICS } from './messages';
export { BatchingStage, type BatchingStageOptions, type StageErrors } from './batching-stage';
export { type ReadYourWrites } from './read-your-writes';
export { InProcessBus } from './in-process';
export { LocalLog } from './local-log';
export { LogBus, type LogBusOptions } from './log-bus';
export { type DeadLetterEntry, DeadLetters } from './dead-letters';
export { type EnvelopeCodec, UndecodableMessageError } from './codec';
export { KafkaBus } from './kafka';
export { DEAD_LETTER_HEADERS } from './kafka-consumer';
export { createTransport, type ServiceBus } from './create';
export { type KafkaDeadLetterRecord } from './kafka-dead-letters';
