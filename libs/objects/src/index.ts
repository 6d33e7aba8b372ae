// What other packages use; the package's own tests import its modules directly.
export { callRef, objectRef, parseRef, tableRef } from './refs';
export { splitDotted } from './json-path';
export { isDict } from './object-classes';
export {
  createObject,
  deleteObjectVersions,
  objectsOfClass,
  objectsStorageBytesSql,
  projectObjectActivitySql,
  queryObjects,
  readObject,
  type ObjectVersionOut,
} from './objects';
export {
  createTable,
  createTableFromDigests,
  queryTableRows,
  tableRowCount,
  tableStats,
  tablesStorageBytesSql,
  updateTable,
} from './tables';
export { diffTables } from './table-diff';
export {
  FEEDBACK_RETENTION,
  USER_FEEDBACK_ROWS,
  createFeedback,
  feedbackForRefs,
  feedbackInWindow,
  type FeedbackWindowRow,
  monitorScoresWindowSql,
  purgeFeedback,
  queryFeedback,
  refsWithTriggeredFeedbackSql,
  replaceFeedback,
} from './feedback';
export { resolveRefs } from './resolve';
export {
  USER_QUEUE_ITEM_ROWS,
  addCalls,
  createQueue,
  deleteQueue,
  queryItems,
  queryQueues,
  queuesStats,
  readQueue,
  updateProgress,
  updateQueue,
} from './annotation-queues';
export { createFile, filesStats, filesStorageBytesSql, readFile, readFiles } from './files';
export { listProjectSetting, listProjectSettings, readProjectSetting, writeProjectSetting } from './project-settings';
export { addTags, aliasDigest, labelsOf, listAliases, listTags, removeAliases, removeTags, setAliases } from './object-labels';
export { linkDatasetSources, queryDatasetSources, sourceDatasets } from './dataset-sources';
