// What other packages use (tests and benches included); the package's own tests import its modules directly.
export { embeddedSessionCount, openStore, type InsertSettings, type RawRowFormat, type Store } from './connection';
export { keepOutdatedParts } from './parts-lifetime';
export type { StoreStatements } from './statements';
export { isRowRejection } from './errors';
export {
  BASELINE_VERSION,
  PRE_1_0_MIGRATIONS,
  RETIRED_TABLES,
  latestMigration,
  loadMigrations,
  migrate,
  waitForMigrations,
} from './migrate';
export { deleteStatement, localTable, physicalDeleteStatement } from './cluster-ddl';
export { CALL_PART_COLUMNS, type CallPartRow } from './call-part-row';
export {
  endPart,
  insertCallParts,
  isEndPart,
  isStartPart,
  isWholeCallPart,
  startPart,
  wholeCallPart,
  type EncodedCallParts,
} from './call-parts';
export {
  callPartRowBinaryEnd,
  callPartRowBinaryFacts,
  CallPartRowBinaryEncoder,
  decodeCallPartRowBinary,
  encodeCallPartsRowBinary,
  type CallPartFacts,
} from './call-part-rowbinary';
export { jsonLinesToParquet, jsonlToParquet } from './parquet';
export { backupDataDir, restoreDataDir } from './backup';
