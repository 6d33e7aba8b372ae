// What other packages use, by name (a package that needs more adds it here).
export { uiRoutes } from './routes';
// The evaluation comparison's model (DOM-free): the query role's /evaluations/export computes
// what the compare view shows with it.
export {
  exampleKeys,
  exportedComparison,
  exportedRows,
  loadComparison,
  predictAndScoreOp,
  scorePaths,
  type ComparisonSource,
  type ExportedRow,
} from '../app/eval-compare';
export { parseRef } from '../app/ref-uri';
