import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client, HARNESS_API_KEY } from '@weft/harness';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';

// Issue 52, the distributed deployment: /mcp is served by the query role, which has no gateway
// routes. Its reads work; its writes answer a plain error naming the way round, and write nothing.
// The data is written by a whole weft first, then the same data directory is served by a process
// running the query role alone.

const PROJECT = 'acme/split';
let weft: RunningWeft;
let mcp: McpClient;
beforeAll(async () => {
  const dataDir = newDataDir('mcp-query-role');
  const whole = await startWeft({ dataDir });
  try {
    const now = Date.now();
    const r = await new Client(whole.url).post('/call/upsert_batch', {
      batch: [
        {
          mode: 'start',
          req: {
            start: {
              project_id: PROJECT,
              id: 'c1',
              trace_id: 't1',
              op_name: 'answer',
              started_at: new Date(now).toISOString(),
              inputs: { q: 'hi' },
              attributes: {},
            },
          },
        },
        {
          mode: 'end',
          req: { end: { project_id: PROJECT, id: 'c1', ended_at: new Date(now + 5).toISOString(), output: 'hello', summary: {} } },
        },
      ],
    });
    expect(r.status, r.text).toBe(200);
  } finally {
    await whole.stop();
  }
  weft = await startWeft({ dataDir, env: { WEFT_ROLES: 'query' } });
  mcp = new McpClient({ name: 'weft-test', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', weft.url), {
      requestInit: { headers: { authorization: `Bearer ${HARNESS_API_KEY}` } },
    }),
  );
}, 180_000);
afterAll(async () => {
  await mcp?.close();
  await weft?.stop();
});

const text = (r: Awaited<ReturnType<McpClient['callTool']>>) => (r.content as { text: string }[]).map((c) => c.text).join('');

describe('/mcp on a query process alone', () => {
  it('reads, and refuses the writes it cannot route with a clear error', async () => {
    const found = await mcp.callTool({ name: 'search_calls', arguments: { project_id: PROJECT } });
    expect(found.isError, text(found)).toBeFalsy();
    expect(JSON.parse(text(found)).calls.map((c: { id: string }) => c.id)).toEqual(['c1']);

    const note = await mcp.callTool({ name: 'add_feedback', arguments: { project_id: PROJECT, call_id: 'c1', note: 'x' } });
    expect(note.isError).toBe(true);
    expect(text(note)).toContain('/feedback/create answered 501: this query process does not serve /feedback/create');
    expect(text(note)).toContain('weft mcp --url <front proxy>');
    const rows = await mcp.callTool({ name: 'add_calls_to_dataset', arguments: { project_id: PROJECT, object_id: 'd', call_ids: ['c1'] } });
    expect(rows.isError).toBe(true);
    expect(text(rows)).toContain('does not serve /table/create');
    const feedback = await new Client(weft.url).post('/feedback/query', { project_id: PROJECT });
    expect(feedback.body.result).toEqual([]);
  });
});
