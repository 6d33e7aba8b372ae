import { runWeft } from '@weft/runtime';
import { gatewayRole } from './role';

/** The gateway alone (the distributed mode's write side, WEFT_BUS=kafka). */
runWeft('gateway', [gatewayRole]);
