import { runWeft } from '@weft/runtime';
import { queryRole } from './role';

/** The query service alone: every read endpoint, answered from ClickHouse. */
runWeft('query', [queryRole]);
