import type { FastifyInstance } from 'fastify';
import { addRoute, type Authenticator } from '@weft/http';
import type { Store } from '@weft/store';
import { exportEvaluations } from './evaluation-export';
import { exportCalls } from './export';
import { exportTable } from './table-export';

export interface ExportRouteDeps {
  store: Store;
  auth: Authenticator;
  /** Rows per ClickHouse query when streaming calls (see StreamOptions). */
  pageRows: number;
}

/** A download is read to its end: pages four times as large, a quarter of the round trips. */
const EXPORT_PAGE_FACTOR = 4;

/** Downloads, streamed: the calls a query matches, a table's rows, evaluation runs compared. */
export async function exportRoutes(app: FastifyInstance, deps: ExportRouteDeps): Promise<void> {
  const { store, auth, pageRows } = deps;
  addRoute(app, auth, 'callsExport', async (body, { reply }) => {
    await exportCalls(store, body, reply, { pageRows: pageRows * EXPORT_PAGE_FACTOR });
    return undefined;
  });
  addRoute(app, auth, 'tableExport', async (body, { reply }) => {
    await exportTable(store, body, reply);
    return undefined;
  });
  addRoute(app, auth, 'evaluationsExport', async (body, { caller, reply }) => {
    await exportEvaluations(store, body, caller, reply, { pageRows });
    return undefined;
  });
}
