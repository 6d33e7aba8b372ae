// The ingest worker threads' entry (ingest-workers.ts). piscina first tries require() and imports
// only when that fails; required, tsx would compile the TypeScript modules to CommonJS (every
// imported name read through a getter: ~1.5× the CPU per span). The top-level await makes
// require() refuse this file, and tsImport loads the TypeScript as ECMAScript modules, as the
// serving thread has them.
import { tsImport } from 'tsx/esm/api';

const tasks = await tsImport('./ingest-worker.ts', import.meta.url);
export const convertSpans = tasks.convertSpans;
export const convertCallBatch = tasks.convertCallBatch;
