import { runWeft } from '@weft/runtime';
import { inferenceRole } from './role';

/** The inference service alone (traces its calls through the bus: Kafka in the distributed mode). */
runWeft('inference', [inferenceRole]);
