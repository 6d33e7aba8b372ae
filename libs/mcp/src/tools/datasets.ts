import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { budgetNote, clipped, DETAIL_CLIP, fitPage, fitValue } from '../budget';
import { ArgumentError, decodeCursor, encodeCursor } from '../cursor';
import { WeftApiError } from '../weft-api';
import { answer, cursorArg, limitArg, maxCharsArg, projectIdArg, type ApiCall, type ToolContext } from './shared';

interface ObjectVersion {
  object_id: string;
  digest: string;
  version_index: number;
  created_at: string;
  base_object_class: string | null;
  val: unknown;
}

const tableRef = (projectId: string, digest: string) => `weave:///${projectId}/table/${digest}`;

/** The table digest a Dataset version's `rows` points at, or null when the value is not a dataset's. */
export function rowsDigest(val: unknown): string | null {
  const rows = val && typeof val === 'object' ? (val as Record<string, unknown>).rows : null;
  const m = typeof rows === 'string' ? /^weave:\/\/\/[^/]+\/[^/]+\/table\/([^/]+)$/.exec(rows) : null;
  return m ? m[1]! : null;
}

/** A dataset's version (`latest` unless a digest is given); null when no such object exists. */
async function readDataset(ctx: ToolContext, projectId: string, objectId: string, digest = 'latest'): Promise<ObjectVersion | null> {
  try {
    const { obj } = await ctx.api.post<{ obj: ObjectVersion }>('/obj/read', { project_id: projectId, object_id: objectId, digest });
    return obj;
  } catch (e) {
    if (e instanceof WeftApiError && e.status === 404) return null;
    throw e;
  }
}

const objectIdArg = z.string().min(1).max(128).describe("the dataset's name (its object_id)");

export function registerDatasetTools(server: McpServer, ctx: ToolContext): void {
  const listArgs = { project_id: projectIdArg, limit: limitArg(50, 500, 'datasets'), cursor: cursorArg, max_chars: maxCharsArg };
  server.registerTool(
    'list_datasets',
    {
      title: 'List datasets',
      description:
        "The project's datasets (latest versions, newest first): name, version, digest, row count. Read rows with get_dataset_rows.",
      inputSchema: listArgs,
      annotations: { readOnlyHint: true },
    },
    async (a) => {
      const offset = decodeCursor('list_datasets', a, a.cursor);
      const { objs } = await ctx.api.post<{ objs: ObjectVersion[] }>('/objs/query', {
        project_id: a.project_id,
        filter: { base_object_classes: ['Dataset'], latest_only: true },
        sort_by: [{ field: 'created_at', direction: 'desc' }],
        limit: a.limit + 1,
        offset,
      });
      const page = objs.slice(0, a.limit);
      const digests = page.map((o) => rowsDigest(o.val)).filter((d): d is string => !!d);
      const { tables } = digests.length
        ? await ctx.api.post<{ tables: { digest: string; count: number }[] }>('/table/query_stats_batch', {
            project_id: a.project_id,
            digests,
          })
        : { tables: [] };
      const counts = new Map(tables.map((t) => [t.digest, t.count]));
      const lines = page.map((o) => ({
        object_id: o.object_id,
        version: o.version_index,
        digest: o.digest,
        created_at: o.created_at,
        rows: counts.get(rowsDigest(o.val) ?? '') ?? null,
        url: ctx.links.object(a.project_id, o.object_id, o.digest),
      }));
      const head = { project_id: a.project_id, offset };
      return answer(
        fitPage(head, lines, a.max_chars, (n) => {
          const more = n < lines.length || objs.length > a.limit;
          return {
            ...head,
            datasets: lines.slice(0, n),
            ...(more ? { next_cursor: encodeCursor('list_datasets', a, offset + n) } : {}),
            budget: budgetNote(a.max_chars, false),
          };
        }),
      );
    },
  );

  const rowsArgs = {
    project_id: projectIdArg,
    object_id: objectIdArg,
    digest: z.string().min(1).optional().describe("a version's digest (default: the latest version)"),
    limit: limitArg(50, 500, 'rows'),
    cursor: cursorArg,
    max_chars: maxCharsArg,
  };
  server.registerTool(
    'get_dataset_rows',
    {
      title: 'Get dataset rows',
      description:
        "A dataset version's rows in order, each with its index and digest (long values clipped), and the row count. Page with next_cursor.",
      inputSchema: rowsArgs,
      annotations: { readOnlyHint: true },
    },
    async (a) => {
      const offset = decodeCursor('get_dataset_rows', a, a.cursor);
      const version = await readDataset(ctx, a.project_id, a.object_id, a.digest);
      if (!version)
        throw new ArgumentError(
          a.digest ? 'digest' : 'object_id',
          `no dataset ${a.object_id}${a.digest ? `:${a.digest}` : ''} in ${a.project_id}`,
        );
      const table = rowsDigest(version.val);
      if (!table) throw new ArgumentError('object_id', `${a.object_id} is not a dataset (its value has no rows table)`);
      const [{ count }, { rows }] = await Promise.all([
        ctx.api.post<{ count: number }>('/table/query_stats', { project_id: a.project_id, digest: table }),
        ctx.api.post<{ rows: { digest: string; val: unknown }[] }>('/table/query', {
          project_id: a.project_id,
          digest: table,
          limit: a.limit,
          offset,
        }),
      ]);
      const lines = rows.map((r, i) => ({ index: offset + i, digest: r.digest, val: fitValue(r.val, 1_500, DETAIL_CLIP) }));
      const head = {
        object_id: version.object_id,
        version: version.version_index,
        digest: version.digest,
        row_count: count,
        offset,
        url: ctx.links.object(a.project_id, version.object_id, version.digest),
      };
      return answer(
        fitPage(head, lines, a.max_chars, (n) => {
          const next = offset + n;
          return {
            ...head,
            rows: lines.slice(0, n),
            ...(next < count ? { next_cursor: encodeCursor('get_dataset_rows', a, next) } : {}),
            budget: budgetNote(a.max_chars, clipped(lines.slice(0, n))),
          };
        }),
      );
    },
  );

  const addArgs = {
    project_id: projectIdArg,
    object_id: objectIdArg.describe('the dataset to append to (created when there is none of that name)'),
    call_ids: z.array(z.string().min(1)).min(1).max(100).describe('the calls to add, one row each'),
  };
  server.registerTool(
    'add_calls_to_dataset',
    {
      title: 'Add calls to a dataset',
      description:
        "Append one row per call to a dataset, as a new version (the dataset is created when missing): each row holds the call's inputs " +
        '(all but `self`) and its `output`. Answers the new version and its row count. Writes.',
      inputSchema: addArgs,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    },
    async (a) => {
      if (new Set(a.call_ids).size !== a.call_ids.length) throw new ArgumentError('call_ids', 'a call is named twice');
      // Everything is read and checked before the first write.
      const calls = await ctx.api.lines<ApiCall>('/calls/stream_query', {
        project_id: a.project_id,
        filter: { call_ids: a.call_ids },
        columns: ['id', 'inputs', 'output'],
        limit: a.call_ids.length,
      });
      const byId = new Map(calls.map((c) => [c.id, c]));
      const missing = a.call_ids.filter((id) => !byId.has(id));
      if (missing.length) throw new ArgumentError('call_ids', `no call ${missing.join(', ')} in project ${a.project_id}`);
      const rows = a.call_ids.map((id) => {
        const c = byId.get(id)!;
        const { self: _self, ...inputs } = c.inputs ?? {};
        return { ...inputs, output: c.output ?? null };
      });
      const current = await readDataset(ctx, a.project_id, a.object_id);
      if (current && current.base_object_class !== 'Dataset')
        throw new ArgumentError('object_id', `${a.object_id} is a ${current.base_object_class ?? 'object'}, not a Dataset`);
      const base = current ? rowsDigest(current.val) : null;
      if (current && !base) throw new ArgumentError('object_id', `${a.object_id} has no rows table`);
      let table: string;
      let val: Record<string, unknown>;
      if (current && base) {
        ({ digest: table } = await ctx.api.post<{ digest: string }>('/table/update', {
          project_id: a.project_id,
          base_digest: base,
          updates: rows.map((row) => ({ append: { row } })),
        }));
        val = { ...(current.val as Record<string, unknown>), rows: tableRef(a.project_id, table) };
      } else {
        ({ digest: table } = await ctx.api.post<{ digest: string }>('/table/create', { table: { project_id: a.project_id, rows } }));
        // As weave.publish(weave.Dataset(name=…, rows=…)) stores it, so the SDK reads it back.
        val = {
          _type: 'Dataset',
          name: a.object_id,
          description: null,
          rows: tableRef(a.project_id, table),
          _class_name: 'Dataset',
          _bases: ['Object', 'BaseModel'],
        };
      }
      const { digest } = await ctx.api.post<{ digest: string }>('/obj/create', {
        obj: { project_id: a.project_id, object_id: a.object_id, val },
      });
      const { count } = await ctx.api.post<{ count: number }>('/table/query_stats', { project_id: a.project_id, digest: table });
      return answer({
        object_id: a.object_id,
        created: !current,
        digest,
        rows_added: rows.length,
        row_count: count,
        ref: `weave:///${a.project_id}/object/${a.object_id}:${digest}`,
        url: ctx.links.object(a.project_id, a.object_id, digest),
      });
    },
  );
}
