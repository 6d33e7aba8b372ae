import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { TOOL_NAMES } from '@weft/mcp';
import type { Client } from './helpers/client';
import { useWeft } from './helpers/fixture';
import { clientFor, createKey, type TestKey } from './helpers/keys';
import { REPO_ROOT } from './helpers/paths';
import { runMcpPythonClient } from './helpers/python-clients';
import { runWeaveScript } from './helpers/weave-sdk';
import { weftCli } from './helpers/cli';

// Issue 52: weft's MCP server. The official clients (TypeScript over Streamable HTTP, Python's
// `mcp`, and `weft mcp` over stdio) call every tool on a project the Weave SDK wrote; each answer
// is checked against the HTTP API's answer to the same question.

const PROJECT = 'acme/agents';

interface Written {
  ok_call_id: string;
  ok_trace_id: string;
  thread_id: string;
  turn_ids: string[];
  spec_ref: string;
}

let member: TestKey;
let rival: TestKey;
let sdk: Written;
let http: Client;
// Refused bodies are drained for this long (the in-process requests' test waits it out).
const DRAIN_MS = 1000;
const { weft } = useWeft({ env: { WEFT_REFUSED_BODY_DRAIN_MS: String(DRAIN_MS) } }, async (admin, w) => {
  member = await createKey(admin, 'alice', ['acme']);
  rival = await createKey(admin, 'mallory', ['rival']);
  http = clientFor(admin, member);
  sdk = await runWeaveScript<Written>('mcp-project.py', [], { baseUrl: w.url, apiKey: member.key, project: PROJECT });
});

type Answer = { isError: boolean; text: string; json: any };

async function connect(key: string): Promise<McpClient> {
  const client = new McpClient({ name: 'weft-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', weft.url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  return client;
}

async function call(client: McpClient, name: string, args: Record<string, unknown>): Promise<Answer> {
  const r = await client.callTool({ name, arguments: args });
  const text = (r.content as { type: string; text: string }[]).map((c) => c.text).join('');
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // An error's text.
  }
  return { isError: r.isError === true, text, json };
}

async function ok(client: McpClient, name: string, args: Record<string, unknown>): Promise<any> {
  const a = await call(client, name, args);
  expect(a.isError, `${name}: ${a.text}`).toBe(false);
  return a.json;
}

const link = (view: string) => `${weft.url}/#/p/acme/agents/${view}`;

describe('the TypeScript SDK client over Streamable HTTP', () => {
  let mcp: McpClient;
  beforeAll(async () => {
    mcp = await connect(member.key);
  });
  afterAll(async () => {
    await mcp?.close();
  });

  it('lists the twelve tools, each described, its arguments under the HTTP API names', async () => {
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    for (const t of tools) {
      expect(t.description!.length, t.name).toBeGreaterThan(60);
      const props = Object.keys((t.inputSchema as { properties: Record<string, unknown> }).properties);
      if (t.name !== 'list_projects') expect(props, t.name).toContain('project_id');
    }
    const props = (name: string) => Object.keys((tools.find((t) => t.name === name)!.inputSchema as any).properties);
    expect(props('get_call')).toEqual(expect.arrayContaining(['call_id', 'field']));
    expect(props('get_trace')).toEqual(expect.arrayContaining(['trace_id', 'limit', 'cursor', 'max_chars']));
    expect(props('get_thread')).toEqual(expect.arrayContaining(['thread_id', 'limit', 'cursor']));
    expect(tools.find((t) => t.name === 'add_feedback')!.annotations?.readOnlyHint).toBe(false);
    expect(tools.find((t) => t.name === 'search_calls')!.annotations?.readOnlyHint).toBe(true);
  });

  it('list_projects: the projects /projects/list gives the key, with their counts and links', async () => {
    const a = await ok(mcp, 'list_projects', {});
    const expected = (await http.post('/projects/list', {})).body.projects;
    expect(a.projects.map((p: any) => [p.project_id, p.call_count, p.object_count])).toEqual(
      expected.map((p: any) => [p.project_id, p.call_count, p.object_count]),
    );
    expect(a.projects.find((p: any) => p.project_id === PROJECT).url).toBe(link('calls'));
  });

  it('search_calls: the count and ids of /calls/query_stats and /calls/stream_query, with filters and pages', async () => {
    const all = await ok(mcp, 'search_calls', { project_id: PROJECT, op_name: 'lookup' });
    const filter = { op_names: [`weave:///${PROJECT}/op/lookup:*`] };
    const count = (await http.post('/calls/query_stats', { project_id: PROJECT, filter })).body.count;
    const calls = await http.jsonl('/calls/stream_query', {
      project_id: PROJECT,
      filter,
      sort_by: [{ field: 'started_at', direction: 'desc' }],
    });
    // Oslo, Lima; Oslo, Atlantis; Paris three times.
    expect(count).toBe(7);
    expect(all.total).toBe(count);
    expect(all.calls.map((c: any) => c.id)).toEqual(calls.map((c) => c.id));
    const failed = calls.filter((c) => c.exception);
    expect(failed).toHaveLength(1);
    const atlantis = all.calls.find((c: any) => c.id === failed[0].id);
    expect(atlantis).toMatchObject({ status: 'error', op: 'lookup', inputs: { city: 'Atlantis' }, url: link(`call/${failed[0].id}`) });
    expect(atlantis.exception).toContain('no weather station in Atlantis');

    const errors = await ok(mcp, 'search_calls', { project_id: PROJECT, status: 'error' });
    const erroredIds = (await http.jsonl('/calls/stream_query', { project_id: PROJECT })).filter((c) => c.exception).map((c) => c.id);
    expect(errors.calls.map((c: any) => c.id).sort()).toEqual(erroredIds.sort());
    expect(erroredIds.length).toBe(2); // the lookup and the agent above it

    const text = await ok(mcp, 'search_calls', { project_id: PROJECT, text: 'atlantis', op_name: 'lookup' });
    expect(text.calls.map((c: any) => c.id)).toEqual([failed[0].id]);

    const roots = await ok(mcp, 'search_calls', { project_id: PROJECT, op_name: 'agent', trace_roots_only: true, limit: 2 });
    expect(roots.total).toBe(5);
    expect(roots.calls).toHaveLength(2);
    const page2 = await ok(mcp, 'search_calls', {
      project_id: PROJECT,
      op_name: 'agent',
      trace_roots_only: true,
      limit: 2,
      cursor: roots.next_cursor,
    });
    const page3 = await ok(mcp, 'search_calls', {
      project_id: PROJECT,
      op_name: 'agent',
      trace_roots_only: true,
      limit: 2,
      cursor: page2.next_cursor,
    });
    expect(page3.next_cursor).toBeUndefined();
    const paged = [...roots.calls, ...page2.calls, ...page3.calls].map((c: any) => c.id);
    const agents = await http.jsonl('/calls/stream_query', {
      project_id: PROJECT,
      filter: { op_names: [`weave:///${PROJECT}/op/agent:*`], trace_roots_only: true },
      sort_by: [{ field: 'started_at', direction: 'desc' }],
    });
    expect(paged).toEqual(agents.map((c) => c.id));

    const inThread = await ok(mcp, 'search_calls', { project_id: PROJECT, thread_id: sdk.thread_id, op_name: 'agent' });
    expect(inThread.calls.map((c: any) => c.id).sort()).toEqual([...sdk.turn_ids].sort());
  });

  it('get_call: the call /call/read answers, its tokens, and one field read whole', async () => {
    const chat = (
      await http.jsonl('/calls/stream_query', {
        project_id: PROJECT,
        filter: { op_names: [`weave:///${PROJECT}/op/chat:*`], trace_ids: [sdk.ok_trace_id] },
      })
    )[0];
    const a = await ok(mcp, 'get_call', { project_id: PROJECT, call_id: chat.id });
    const read = (await http.post('/call/read', { project_id: PROJECT, id: chat.id })).body.call;
    expect(a).toMatchObject({
      id: read.id,
      op_name: read.op_name,
      op: 'chat',
      trace_id: read.trace_id,
      parent_id: read.parent_id,
      started_at: read.started_at,
      ended_at: read.ended_at,
      status: 'success',
      children: 0,
      inputs: read.inputs,
      output: read.output,
      url: link(`call/${chat.id}`),
      trace_url: link(`trace/${read.trace_id}?call=${chat.id}`),
    });
    expect(a.tokens.total_tokens).toBe(16);

    const whole = await ok(mcp, 'get_call', { project_id: PROJECT, call_id: chat.id, field: 'output.choices.0.message.content' });
    expect(whole.text).toBe(read.output.choices[0].message.content);
    const missing = await call(mcp, 'get_call', { project_id: PROJECT, call_id: chat.id, field: 'output.nothing' });
    expect(missing.isError).toBe(true);
    expect(missing.text).toContain('"field"');
    const none = await call(mcp, 'get_call', { project_id: PROJECT, call_id: 'no-such-call' });
    expect(none.isError).toBe(true);
    expect(none.text).toContain('no call no-such-call');
  });

  it('get_trace: the tree depth first, timings and errors, tokens rolled up as /trace/usage', async () => {
    const a = await ok(mcp, 'get_trace', { project_id: PROJECT, trace_id: sdk.ok_trace_id });
    const calls = await http.jsonl('/calls/stream_query', { project_id: PROJECT, filter: { trace_ids: [sdk.ok_trace_id] } });
    const usage = (await http.post('/trace/usage', { project_id: PROJECT, filter: { trace_ids: [sdk.ok_trace_id] } })).body.call_usage;
    expect(a.trace).toMatchObject({
      trace_id: sdk.ok_trace_id,
      root_call_id: sdk.ok_call_id,
      root_op: 'agent',
      calls: calls.length,
      errors: 0,
    });
    expect(a.calls.map((c: any) => c.id).sort()).toEqual(calls.map((c) => c.id).sort());
    // agent ─ lookup(Oslo), lookup(Lima), chat
    expect(a.calls.map((c: any) => [c.op, c.depth])).toEqual([
      ['agent', 0],
      ['lookup', 1],
      ['lookup', 1],
      ['chat', 1],
    ]);
    const rootTokens = Object.values(usage[sdk.ok_call_id] as Record<string, { total_tokens: number }>).reduce(
      (s, u) => s + u.total_tokens,
      0,
    );
    expect(rootTokens).toBe(16);
    expect(a.calls[0].tokens).toBe(rootTokens);
    expect(a.trace.tokens).toBe(rootTokens);
    for (const c of a.calls) expect(c.duration_ms).toBeGreaterThanOrEqual(0);
    expect(a.calls[1].inputs).toEqual({ city: 'Oslo' });

    const failedTrace = (
      await http.jsonl('/calls/stream_query', {
        project_id: PROJECT,
        query: { $expr: { $contains: { input: { $getField: 'inputs.cities' }, substr: { $literal: 'Atlantis' } } } },
      })
    )[0];
    const f = await ok(mcp, 'get_trace', { project_id: PROJECT, trace_id: failedTrace.trace_id });
    expect(f.trace.errors).toBe(2);
    expect(f.calls.find((c: any) => c.op === 'lookup' && c.status === 'error').error).toContain('no weather station');
  });

  it('get_thread: the turns /threads/stream_query counts, in order', async () => {
    const a = await ok(mcp, 'get_thread', { project_id: PROJECT, thread_id: sdk.thread_id });
    const [thread] = await http.jsonl('/threads/stream_query', { project_id: PROJECT, filter: { thread_ids: [sdk.thread_id] } });
    expect(a.thread).toMatchObject({ thread_id: sdk.thread_id, turn_count: thread.turn_count, url: link(`threads/${sdk.thread_id}`) });
    expect(thread.turn_count).toBe(3);
    expect(a.turns.map((t: any) => t.id)).toEqual(sdk.turn_ids);
    expect(a.turns.map((t: any) => t.inputs.question)).toEqual(['hello', 'where is my order?', 'thanks']);
    const first = await ok(mcp, 'get_thread', { project_id: PROJECT, thread_id: sdk.thread_id, limit: 2 });
    const rest = await ok(mcp, 'get_thread', { project_id: PROJECT, thread_id: sdk.thread_id, limit: 2, cursor: first.next_cursor });
    expect([...first.turns, ...rest.turns].map((t: any) => t.id)).toEqual(sdk.turn_ids);
    expect(rest.next_cursor).toBeUndefined();
  });

  it('query_metrics: the rows and totals of /analytics/query', async () => {
    const body = {
      metrics: ['count', 'errors', 'total_tokens'],
      dimensions: ['op_name'],
      order_by: [{ field: 'count', direction: 'desc' }],
    };
    const a = await ok(mcp, 'query_metrics', { project_id: PROJECT, ...body });
    const r = (await http.post('/analytics/query', { project_id: PROJECT, ...body, limit: 200, totals: true })).body;
    expect(a.rows).toEqual(r.rows);
    expect(a.totals).toEqual(r.totals);
    const lookup = a.rows.find((row: any) => String(row.op_name).includes('/op/lookup:'));
    expect(lookup).toMatchObject({ count: 7, errors: 1 });
    const bad = await call(mcp, 'query_metrics', { project_id: PROJECT, metrics: ['nonsense'] });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain('nonsense');
  });

  it('list_evaluations and compare_evaluations: the runs, their scores, and the rows that regressed', async () => {
    const list = await ok(mcp, 'list_evaluations', { project_id: PROJECT });
    const runs = await http.jsonl('/calls/stream_query', {
      project_id: PROJECT,
      filter: { op_names: [`weave:///${PROJECT}/op/Evaluation.evaluate:*`] },
      sort_by: [{ field: 'started_at', direction: 'desc' }],
    });
    expect(runs).toHaveLength(2);
    expect(list.total).toBe(2);
    expect(list.evaluations.map((e: any) => e.call_id)).toEqual(runs.map((r) => r.id));
    const [hasty, careful] = list.evaluations;
    expect([careful.model, hasty.model]).toEqual(['careful', 'hasty']);
    expect(careful.evaluation).toBe('sums-eval');
    expect(careful.scores['exact.correct.true_fraction']).toBe(runs[1].output.exact.correct.true_fraction);
    expect(hasty.scores['exact.correct.true_fraction']).toBe(0.5);

    const cmp = await ok(mcp, 'compare_evaluations', { project_id: PROJECT, call_ids: [careful.call_id, hasty.call_id] });
    const metric = cmp.metrics.find((m: any) => m.metric === 'exact.correct.true_fraction');
    expect(metric).toMatchObject({ baseline: 1, runs: [{ value: 0.5, delta: -0.5, verdict: 'worse' }] });
    expect(cmp.rows_compared).toBe(4);
    expect(cmp.rows_regressed).toBe(2);
    expect(cmp.regressed_rows.map((r: any) => r.example.question).sort()).toEqual(['3 + 5', '6 + 6']);
    expect(cmp.regressed_rows[0].runs[1].worse).toEqual(['exact.correct']);
    expect(cmp.url).toBe(link(`evaluations/compare?runs=${encodeURIComponent(`${careful.call_id},${hasty.call_id}`)}`));
  });

  it('list_datasets and get_dataset_rows: the datasets /objs/query lists and the rows of /table/query', async () => {
    const list = await ok(mcp, 'list_datasets', { project_id: PROJECT });
    const sums = list.datasets.find((d: any) => d.object_id === 'sums');
    const { objs } = (
      await http.post('/objs/query', { project_id: PROJECT, filter: { base_object_classes: ['Dataset'], latest_only: true } })
    ).body;
    expect(list.datasets.map((d: any) => d.object_id).sort()).toEqual(objs.map((o: any) => o.object_id).sort());
    expect(sums).toMatchObject({ rows: 4, digest: objs.find((o: any) => o.object_id === 'sums').digest });
    const rows = await ok(mcp, 'get_dataset_rows', { project_id: PROJECT, object_id: 'sums', limit: 3 });
    const table = objs
      .find((o: any) => o.object_id === 'sums')
      .val.rows.split('/')
      .pop();
    const expected = (await http.post('/table/query', { project_id: PROJECT, digest: table })).body.rows;
    expect(rows.row_count).toBe(4);
    expect(rows.rows.map((r: any) => r.val)).toEqual(expected.slice(0, 3).map((r: any) => r.val));
    const more = await ok(mcp, 'get_dataset_rows', { project_id: PROJECT, object_id: 'sums', limit: 3, cursor: rows.next_cursor });
    expect(more.rows.map((r: any) => [r.index, r.digest])).toEqual([[3, expected[3].digest]]);
  });

  it('add_feedback: a note, a reaction and a score of the AnnotationSpec, stored as /feedback/query reads them', async () => {
    const ref = `weave:///${PROJECT}/call/${sdk.ok_call_id}`;
    const note = await ok(mcp, 'add_feedback', { project_id: PROJECT, call_id: sdk.ok_call_id, note: 'loops on the second lookup' });
    await ok(mcp, 'add_feedback', { project_id: PROJECT, call_id: sdk.ok_call_id, emoji: '👎' });
    const score = await ok(mcp, 'add_feedback', { project_id: PROJECT, call_id: sdk.ok_call_id, annotation_spec: 'quality', value: 2 });
    expect(score.feedback_type).toBe('wandb.annotation.quality');
    const { result } = (
      await http.post('/feedback/query', { project_id: PROJECT, query: { $expr: { $eq: [{ $getField: 'svc_ref' }, { $literal: ref }] } } })
    ).body;
    const byType = Object.fromEntries(result.map((f: any) => [f.feedback_type, f]));
    expect(byType['wandb.note.1']).toMatchObject({ id: note.feedback_id, payload: { note: 'loops on the second lookup' } });
    expect(byType['wandb.reaction.1'].payload.emoji).toBe('👎');
    expect(byType['wandb.annotation.quality']).toMatchObject({ payload: { value: 2 }, annotation_ref: sdk.spec_ref });
    // search_calls finds the call by it.
    const found = await ok(mcp, 'search_calls', {
      project_id: PROJECT,
      feedback: { type: 'wandb.reaction.1', path: 'emoji', equals: '👎' },
    });
    expect(found.calls.map((c: any) => c.id)).toEqual([sdk.ok_call_id]);

    // A score outside the spec's schema is the HTTP API's refusal, and nothing is stored.
    const off = await call(mcp, 'add_feedback', { project_id: PROJECT, call_id: sdk.ok_call_id, annotation_spec: 'quality', value: 9 });
    expect(off.isError).toBe(true);
    expect(off.text).toContain('payload.value');
    const after = (
      await http.post('/feedback/query', { project_id: PROJECT, query: { $expr: { $eq: [{ $getField: 'svc_ref' }, { $literal: ref }] } } })
    ).body.result;
    expect(after).toHaveLength(result.length);
  });

  it('add_calls_to_dataset: a new dataset version holding the calls, as the HTTP API reads it', async () => {
    const lookups = await http.jsonl('/calls/stream_query', {
      project_id: PROJECT,
      filter: { op_names: [`weave:///${PROJECT}/op/lookup:*`] },
      limit: 2,
    });
    const created = await ok(mcp, 'add_calls_to_dataset', {
      project_id: PROJECT,
      object_id: 'lookups',
      call_ids: lookups.map((c) => c.id),
    });
    expect(created).toMatchObject({ created: true, rows_added: 2, row_count: 2 });
    const again = await ok(mcp, 'add_calls_to_dataset', { project_id: PROJECT, object_id: 'lookups', call_ids: [lookups[0].id] });
    expect(again).toMatchObject({ created: false, rows_added: 1, row_count: 3 });
    const { obj } = (await http.post('/obj/read', { project_id: PROJECT, object_id: 'lookups', digest: 'latest' })).body;
    expect(obj).toMatchObject({ digest: again.digest, version_index: 1, base_object_class: 'Dataset' });
    const rows = (await http.post('/table/query', { project_id: PROJECT, digest: obj.val.rows.split('/').pop() })).body.rows;
    expect(rows.map((r: any) => r.val)).toEqual(
      [lookups[0], lookups[1], lookups[0]].map((c) => ({ city: c.inputs.city, output: c.output ?? null })),
    );
    const unknown = await call(mcp, 'add_calls_to_dataset', { project_id: PROJECT, object_id: 'lookups', call_ids: ['nope'] });
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toContain('"call_ids"');
    const still = (await http.post('/obj/read', { project_id: PROJECT, object_id: 'lookups', digest: 'latest' })).body.obj;
    expect(still.digest).toBe(again.digest);
  });

  it("the project overview: a resource per project and a prompt, with the ops' figures of /analytics/query", async () => {
    const { resources } = await mcp.listResources();
    expect(resources.map((r) => r.uri)).toContain(`weft://projects/${PROJECT}/overview`);
    const read = await mcp.readResource({ uri: `weft://projects/${PROJECT}/overview` });
    const overview = JSON.parse((read.contents[0] as { text: string }).text);
    expect(overview.ops_7d.find((o: any) => o.op_name === 'lookup')).toMatchObject({ count: 7, errors: 1 });
    expect(overview.latest_evaluations).toHaveLength(2);
    const prompt = await mcp.getPrompt({ name: 'project_overview', arguments: { project_id: PROJECT } });
    expect((prompt.messages[0]!.content as { text: string }).text).toContain('"op_name":"lookup"');
  });
});

describe('the Python mcp client (pinned)', () => {
  it('lists the tools and calls each read tool; its answers are the TypeScript client’s', async () => {
    const calls: [string, Record<string, unknown>][] = [
      ['list_projects', {}],
      ['search_calls', { project_id: PROJECT, op_name: 'lookup' }],
      ['get_call', { project_id: PROJECT, call_id: sdk.ok_call_id }],
      ['get_trace', { project_id: PROJECT, trace_id: sdk.ok_trace_id }],
      ['get_thread', { project_id: PROJECT, thread_id: sdk.thread_id }],
      ['query_metrics', { project_id: PROJECT, metrics: ['count', 'errors'], dimensions: ['op_name'] }],
      ['list_evaluations', { project_id: PROJECT }],
      ['list_datasets', { project_id: PROJECT }],
      ['get_dataset_rows', { project_id: PROJECT, object_id: 'sums' }],
    ];
    const r = await runMcpPythonClient(`${weft.url}/mcp`, member.key, calls, { timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
    expect(out.server).toBe('weft');
    expect([...out.tools].sort()).toEqual([...TOOL_NAMES].sort());
    const mcp = await connect(member.key);
    try {
      for (const [i, [name, args]] of calls.entries()) {
        const mine = await call(mcp, name, args);
        expect(out.results[i].is_error, `${name}: ${out.results[i].text}`).toBe(false);
        expect(JSON.parse(out.results[i].text), name).toEqual(mine.json);
      }
      // compare_evaluations and the writes, through the Python client too.
      const [careful, hasty] = (await ok(mcp, 'list_evaluations', { project_id: PROJECT })).evaluations.reverse();
      const writes = await runMcpPythonClient(`${weft.url}/mcp`, member.key, [
        ['compare_evaluations', { project_id: PROJECT, call_ids: [careful.call_id, hasty.call_id] }],
        ['add_feedback', { project_id: PROJECT, call_id: sdk.turn_ids[0], note: 'from python' }],
        ['add_calls_to_dataset', { project_id: PROJECT, object_id: 'from-python', call_ids: [sdk.turn_ids[0]] }],
      ]);
      expect(writes.code, writes.stderr).toBe(0);
      const [cmp, fb, ds] = JSON.parse(writes.stdout.trim().split('\n').pop()!).results.map((x: any) => JSON.parse(x.text));
      expect(cmp.rows_regressed).toBe(2);
      expect(fb.feedback_type).toBe('wandb.note.1');
      expect(ds).toMatchObject({ created: true, row_count: 1 });
    } finally {
      await mcp.close();
    }
  });
});

describe('stdio: weft mcp --url --api-key', () => {
  it('needs a key, and says so', async () => {
    const r = await weftCli(['mcp', '--url', weft.url], { WEFT_API_KEY: '' });
    expect(r.code).toBe(2);
    expect(r.err).toContain('weft mcp needs a key');
  });

  it('serves the same tools and answers as /mcp', async () => {
    const client = new McpClient({ name: 'weft-stdio-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(REPO_ROOT, 'services/cli/bin/weft.mjs'), 'mcp', '--url', weft.url, '--api-key', member.key],
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH ?? '' },
        stderr: 'pipe',
      }),
    );
    const mcp = await connect(member.key);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual((await mcp.listTools()).tools.map((t) => t.name));
      const runs = (await ok(mcp, 'list_evaluations', { project_id: PROJECT })).evaluations.map((e: any) => e.call_id).reverse();
      // Every read tool: the same answer either way.
      for (const [name, args] of [
        ['list_projects', {}],
        ['search_calls', { project_id: PROJECT, op_name: 'agent' }],
        ['get_call', { project_id: PROJECT, call_id: sdk.ok_call_id }],
        ['get_trace', { project_id: PROJECT, trace_id: sdk.ok_trace_id }],
        ['get_thread', { project_id: PROJECT, thread_id: sdk.thread_id }],
        ['query_metrics', { project_id: PROJECT, metrics: ['count', 'errors'], dimensions: ['op_name'] }],
        ['list_evaluations', { project_id: PROJECT }],
        ['compare_evaluations', { project_id: PROJECT, call_ids: runs }],
        ['list_datasets', { project_id: PROJECT }],
        ['get_dataset_rows', { project_id: PROJECT, object_id: 'sums' }],
      ] as const) {
        const viaStdio = await call(client, name, args);
        expect(viaStdio.isError, viaStdio.text).toBe(false);
        expect(viaStdio.json, name).toEqual((await call(mcp, name, args)).json);
      }
      // And the writes, read back over HTTP.
      const fb = await ok(client, 'add_feedback', { project_id: PROJECT, call_id: sdk.turn_ids[1], note: 'via stdio' });
      const { result } = (
        await http.post('/feedback/query', {
          project_id: PROJECT,
          query: { $expr: { $eq: [{ $getField: 'id' }, { $literal: fb.feedback_id }] } },
        })
      ).body;
      expect(result.map((f: any) => f.payload.note)).toEqual(['via stdio']);
      const ds = await ok(client, 'add_calls_to_dataset', { project_id: PROJECT, object_id: 'via-stdio', call_ids: [sdk.turn_ids[1]] });
      expect((await http.post('/obj/read', { project_id: PROJECT, object_id: 'via-stdio', digest: 'latest' })).body.obj.digest).toBe(
        ds.digest,
      );
      const denied = await call(client, 'search_calls', { project_id: 'rival/x' });
      expect(denied.isError).toBe(true);
      expect(denied.text).toContain('403');
    } finally {
      await client.close();
      await mcp.close();
    }
  });
});

describe('tenancy', () => {
  it("another entity's key sees no project, call or trace of acme, and is told why", async () => {
    const mcp = await connect(rival.key);
    try {
      const projects = await ok(mcp, 'list_projects', {});
      expect(projects.projects.map((p: any) => p.project_id)).not.toContain(PROJECT);
      for (const [name, args] of [
        ['search_calls', { project_id: PROJECT }],
        ['get_call', { project_id: PROJECT, call_id: sdk.ok_call_id }],
        ['get_trace', { project_id: PROJECT, trace_id: sdk.ok_trace_id }],
        ['get_thread', { project_id: PROJECT, thread_id: sdk.thread_id }],
        ['query_metrics', { project_id: PROJECT, metrics: ['count'] }],
        ['list_datasets', { project_id: PROJECT }],
        ['add_feedback', { project_id: PROJECT, call_id: sdk.ok_call_id, note: 'sneaky' }],
      ] as const) {
        const a = await call(mcp, name, args);
        expect(a.isError, name).toBe(true);
        expect(a.text, name).toContain('403');
        expect(a.text, name).toContain('not a member of entity "acme"');
        expect(a.text, name).not.toContain('Oslo');
      }
      const notes = (
        await http.post('/feedback/query', {
          project_id: PROJECT,
          query: { $expr: { $eq: [{ $getField: 'payload.note' }, { $literal: 'sneaky' }] } },
        })
      ).body.result;
      expect(notes).toEqual([]);
    } finally {
      await mcp.close();
    }
    // No key, or a wrong one: the endpoint itself refuses (401), before any tool.
    await expect(connect('weft_not-a-key')).rejects.toThrow(/401|nauthori/);
    const bare = await fetch(new URL('/mcp', weft.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(bare.status).toBe(401);
  });
});

describe('bad input', () => {
  it('a malformed tool call gets the protocol’s error naming the argument, and nothing is written', async () => {
    const mcp = await connect(member.key);
    const feedbackCount = async () => (await http.post('/feedback/query', { project_id: PROJECT })).body.result.length as number;
    const datasets = async () =>
      (await http.post('/objs/query', { project_id: PROJECT, filter: { base_object_classes: ['Dataset'] } })).body.objs.length as number;
    try {
      const [fb0, ds0] = [await feedbackCount(), await datasets()];
      for (const [name, args, argument] of [
        ['add_feedback', { project_id: PROJECT, call_id: 42, note: 'x' }, 'call_id'],
        ['add_feedback', { call_id: sdk.ok_call_id, note: 'x' }, 'project_id'],
        ['add_feedback', { project_id: 'no-slash', call_id: sdk.ok_call_id, note: 'x' }, 'project_id'],
        ['add_feedback', { project_id: PROJECT, call_id: sdk.ok_call_id, note: 'x', emoji: '👍' }, 'note'],
        ['add_calls_to_dataset', { project_id: PROJECT, object_id: 'x', call_ids: [] }, 'call_ids'],
        ['add_calls_to_dataset', { project_id: PROJECT, object_id: 'x', call_ids: 'abc' }, 'call_ids'],
        ['search_calls', { project_id: PROJECT, limit: 'ten' }, 'limit'],
        ['search_calls', { project_id: PROJECT, status: 'broken' }, 'status'],
        ['get_trace', { project_id: PROJECT, trace_id: sdk.ok_trace_id, cursor: 'garbage' }, 'cursor'],
      ] as const) {
        const a = await call(mcp, name, args);
        expect(a.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
        expect(a.text, `${name} ${JSON.stringify(args)}`).toContain(argument);
      }
      // The schema's refusals are the protocol's invalid-params error (-32602).
      expect((await call(mcp, 'search_calls', { project_id: PROJECT, limit: 'ten' })).text).toContain('-32602');
      // A cursor of another question is refused, not answered with the wrong page.
      const page = await ok(mcp, 'search_calls', { project_id: PROJECT, limit: 1 });
      const wrong = await call(mcp, 'search_calls', { project_id: PROJECT, limit: 1, op_name: 'chat', cursor: page.next_cursor });
      expect(wrong.isError).toBe(true);
      expect(wrong.text).toContain('cursor');
      // An unknown tool.
      expect((await call(mcp, 'drop_tables', {})).isError).toBe(true);
      expect([await feedbackCount(), await datasets()]).toEqual([fb0, ds0]);
    } finally {
      await mcp.close();
    }
  });
});

describe("the tools' in-process requests", () => {
  it('leave the server sound: refused ones drain nothing and crash nothing, streams end unaborted', async () => {
    const mcp = await connect(member.key);
    try {
      // Refusals of the inner requests: a 404 (no such dataset), a 400 (unknown metric), a 403 (another entity).
      expect((await call(mcp, 'get_dataset_rows', { project_id: PROJECT, object_id: 'no-such-dataset' })).isError).toBe(true);
      expect((await call(mcp, 'query_metrics', { project_id: PROJECT, metrics: ['nonsense'] })).isError).toBe(true);
      expect((await call(mcp, 'search_calls', { project_id: 'rival/x' })).isError).toBe(true);
      // JSONL streams read in-process.
      await ok(mcp, 'get_thread', { project_id: PROJECT, thread_id: sdk.thread_id });
    } finally {
      await mcp.close();
    }
    // Past the drain deadline, the server still runs and answers.
    await new Promise((r) => setTimeout(r, DRAIN_MS + 1000));
    expect(weft.proc.exitCode).toBeNull();
    expect((await fetch(new URL('/health', weft.url))).status).toBe(200);
    const aborted = (weft.logs as { msg?: string }[]).filter((l) => typeof l.msg === 'string' && l.msg.startsWith('stream aborted'));
    expect(aborted).toEqual([]);
  });
});
