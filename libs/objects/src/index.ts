// What other packages use; the package's own tests import its modules directly.
export { callRef, objectRef, parseRef, tableRef } from './refs';
export { splitDotted } from './json-path';
export { isDict } from './object-classes';
export { createObject, deleteObjectVersions, objectsOfClass, queryObjects, readObject, type ObjectVersionOut } from './objects';
export { createTable, createTableFromDigests, queryTableRows, tableRowCount, tableStats, updateTable } from './tables';
export { diffTables } from './table-diff';
export {
  FEEDBACK_RETENTION,
  USER_FEEDBACK_ROWS,
  createFeedback,
  feedbackForRefs,
  feedbackInWindow,
  type FeedbackWindowRow,
  monitorScoresRowsSql,
  monitorScoresWindowSql,
  purgeFeedback,
  queryFeedback,
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
export { createFile, filesStats, readFile, readFiles } from './files';
export { listProjectSetting, listProjectSettings, readProjectSetting, writeProjectSetting } from './project-settings';
export { addTags, aliasDigest, labelsOf, listAliases, listTags, removeAliases, removeTags, setAliases } from './object-labels';
export { linkDatasetSources, queryDatasetSources, sourceDatasets } from './dataset-sources';
export {
  RECENT_FIGURES,
  activeMutes,
  ALERT_RETENTION,
  allStates,
  channelsByIds,
  channelsFor,
  channelsOf,
  deleteChannel,
  deliveriesOfEvents,
  dueDeliveries,
  eventsWithDeliveries,
  existingEvents,
  eventsByIds,
  insertChannel,
  insertEvent,
  insertEvents,
  logAttempts,
  measureWindow,
  queryEvents,
  readAlertLease,
  statesOf,
  writeAlertLease,
  writeDeliveries,
  writeMute,
  writeStates,
  type AlertAggregation,
  type AlertStateName,
  type ChannelFormat,
  type ChannelRow,
  type DeliveryRow,
  type DeliveryStatus,
  type EventRow,
  type StateRow,
} from './alerts';
export { measureWindows, type BatchFigure, type BatchWindow } from './alert-windows';
export { monitorCallsToScore, monitorGroupsToScore, readMonitorLease, writeMonitorLease, type MonitorCallsPick } from './monitors';
export { runCancels, runHolder, runOwner, staleRuns, writeRunBeats, writeRunCancel, type RunKey } from './evaluation-runs';
export { findModel, insertModel, type ModelRecord } from './models';
export { projectsByActivity, projectStorageBytes, type ProjectActivityRow } from './projects';
