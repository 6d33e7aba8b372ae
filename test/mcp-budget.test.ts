import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DEFAULT_BUDGET } from '@weft/mcp';
import type { Client } from './helpers/client';
import { useWeft } from './helpers/fixture';
import { clientFor, createKey, type TestKey } from './helpers/keys';

// Issue 52, budgets: a trace of 2,000 calls with 100 KB inputs (200 MB of inputs) answered by the
// MCP tools within their budget, with a cursor to its end. A server of its own: the data is big.

const BIG = 'acme/big';

let member: TestKey;
let http: Client;
const { weft } = useWeft({}, async (admin) => {
  member = await createKey(admin, 'alice', ['acme']);
  http = clientFor(admin, member);
});

let mcp: McpClient;
afterAll(async () => {
  await mcp?.close();
});

type Answer = { isError: boolean; text: string; json: any };

async function call(name: string, args: Record<string, unknown>): Promise<Answer> {
  const r = await mcp.callTool({ name, arguments: args });
  const text = (r.content as { type: string; text: string }[]).map((c) => c.text).join('');
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // An error's text.
  }
  return { isError: r.isError === true, text, json };
}

async function ok(name: string, args: Record<string, unknown>): Promise<any> {
  const a = await call(name, args);
  expect(a.isError, `${name}: ${a.text}`).toBe(false);
  return a.json;
}

describe('budgets', () => {
  const CALLS = 2000;
  const INPUT = 100 * 1024;
  let rootId: string;
  beforeAll(async () => {
    // A trace of 2,000 calls with 100 KB inputs, written over HTTP: a root, 40 steps, 49 tool calls under each.
    const t0 = Date.parse('2026-03-01T10:00:00Z');
    const ids: { id: string; parent: string | null; i: number }[] = [];
    rootId = 'big-root';
    ids.push({ id: rootId, parent: null, i: 0 });
    for (let s = 0; s < 40; s++) {
      ids.push({ id: `step-${s}`, parent: rootId, i: ids.length });
      for (let k = 0; k < 49 && ids.length < CALLS; k++) ids.push({ id: `tool-${s}-${k}`, parent: `step-${s}`, i: ids.length });
    }
    expect(ids).toHaveLength(CALLS);
    const big = (i: number) => `${i}:`.padEnd(INPUT, 'lorem ipsum dolor sit amet ');
    for (let b = 0; b < ids.length; b += 100) {
      const batch = ids.slice(b, b + 100).flatMap(({ id, parent, i }) => [
        {
          mode: 'start',
          req: {
            start: {
              project_id: BIG,
              id,
              trace_id: 'big-trace',
              parent_id: parent,
              op_name: parent === null ? 'run' : parent === rootId ? 'step' : 'tool',
              started_at: new Date(t0 + i).toISOString(),
              inputs: { prompt: big(i) },
              attributes: {},
            },
          },
        },
        {
          mode: 'end',
          req: {
            end: {
              project_id: BIG,
              id,
              ended_at: new Date(t0 + i + 5).toISOString(),
              output: { ok: true },
              exception: i % 500 === 7 ? 'tool failed' : null,
              summary: {},
            },
          },
        },
      ]);
      const r = await http.post('/call/upsert_batch', { batch });
      expect(r.status, r.text).toBe(200);
    }
  }, 600_000);

  it('a trace of 2,000 calls with 100 KB inputs answers within its budget, page by page to its end', async () => {
    mcp = new McpClient({ name: 'weft-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', weft.url), { requestInit: { headers: { authorization: `Bearer ${member.key}` } } }),
    );
    {
      const first = await call('get_trace', { project_id: BIG, trace_id: 'big-trace' });
      expect(first.isError, first.text).toBe(false);
      expect(first.text.length).toBeLessThanOrEqual(DEFAULT_BUDGET);
      expect(first.json.trace).toMatchObject({ calls: CALLS, errors: 4, root_call_id: rootId });
      expect(first.json.calls[0].inputs.prompt).toMatch(/^0:lorem.*…\[\+\d+ chars\]$/);
      expect(first.json.next_cursor).toBeDefined();
      // Every page within the budget; every call once, depth first.
      const seen: string[] = [];
      let page = first;
      let pages = 0;
      const max_chars = 60_000;
      page = await call('get_trace', { project_id: BIG, trace_id: 'big-trace', max_chars });
      for (;;) {
        expect(page.isError, page.text).toBe(false);
        expect(page.text.length).toBeLessThanOrEqual(max_chars);
        seen.push(...page.json.calls.map((c: any) => c.id));
        pages++;
        if (!page.json.next_cursor) break;
        page = await call('get_trace', { project_id: BIG, trace_id: 'big-trace', max_chars, cursor: page.json.next_cursor });
      }
      expect(pages).toBeGreaterThan(5);
      expect(seen).toHaveLength(CALLS);
      expect(new Set(seen).size).toBe(CALLS);
      expect(seen.slice(0, 3)).toEqual([rootId, 'step-0', 'tool-0-0']);

      // One input whole: get_call clips it, its `field` pages it out entire.
      const one = await call('get_call', { project_id: BIG, call_id: 'tool-3-4' });
      expect(one.text.length).toBeLessThanOrEqual(DEFAULT_BUDGET);
      let text = '';
      let cursor: string | undefined;
      do {
        const part = await ok('get_call', {
          project_id: BIG,
          call_id: 'tool-3-4',
          field: 'inputs.prompt',
          ...(cursor ? { cursor } : {}),
        });
        expect(JSON.stringify(part).length).toBeLessThanOrEqual(DEFAULT_BUDGET);
        text += part.text;
        cursor = part.next_cursor;
      } while (cursor);
      const stored = (await http.post('/call/read', { project_id: BIG, id: 'tool-3-4' })).body.call.inputs.prompt;
      expect(text).toBe(stored);
      expect(text).toHaveLength(INPUT);

      // The search over them is within budget too, and pages.
      const search = await call('search_calls', { project_id: BIG, limit: 100 });
      expect(search.text.length).toBeLessThanOrEqual(DEFAULT_BUDGET);
      expect(search.json.total).toBe(CALLS);
      expect(search.json.next_cursor).toBeDefined();
    }
  }, 300_000);
});
