import { runWeft } from '@weft/runtime';
import { writerRole } from './role';

/**
 * The writer alone: consumes the call-parts topic (WEFT_BUS=kafka) into ClickHouse; serves
 * /health, /ready and /metrics. Run several with one KAFKA_GROUP_ID to share partitions.
 */
runWeft('writer', [writerRole]);
