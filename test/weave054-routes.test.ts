import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useWeft } from './helpers/fixture';
import { REPO_ROOT } from './helpers/paths';

/**
 * Weave 0.54's interface (issue 49): every route its vendored server client calls answers
 * (never "no such endpoint"), and the routes weft added for it answer with the client's shapes.
 * The route list is read from the installed 0.54 wheel when its venv is there
 * (scripts/conformance/weave-client-routes.py), else from the list that script printed.
 */

const { api } = useWeft();

const ok = <T extends { status: number; text: string }>(r: T): T => {
  expect(r.status, r.text).toBe(200);
  return r;
};

const FIXTURE = join(REPO_ROOT, 'test', 'fixtures', 'weave054-routes.json');
const fixed = JSON.parse(readFileSync(FIXTURE, 'utf8')) as { method: string; path: string }[];

function clientRoutes(): { method: string; path: string }[] {
  const site = join(REPO_ROOT, '.cache', 'weave-sdk-0.54.0', 'lib', 'python3.11', 'site-packages', 'weave');
  if (!existsSync(join(site, 'vendor', 'weave_server_sdk'))) return fixed;
  const out = execFileSync('python3', [join(REPO_ROOT, 'scripts', 'conformance', 'weave-client-routes.py'), site], { encoding: 'utf8' });
  return out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { method: string; path: string });
}

const P = 'acme/weave054';
const PARAMS: Record<string, string> = {
  entity: 'acme',
  project: 'weave054',
  object_id: 'thing',
  digest: 'latest',
  queue_id: '00000000-0000-0000-0000-000000000000',
  item_id: '00000000-0000-0000-0000-000000000001',
  evaluation_run_id: 'nope',
  prediction_id: 'nope',
  score_id: 'nope',
  runtime_name: 'r',
};

describe("Weave 0.54's routes", () => {
  it('the checked-in list is what the vendored client calls (when its venv is here)', () => {
    expect(clientRoutes()).toEqual(fixed);
    expect(fixed.length).toBeGreaterThan(100);
  });

  it('every route of the vendored client answers: none is "no such endpoint"', async () => {
    const missing: string[] = [];
    const failed: string[] = [];
    for (const r of clientRoutes()) {
      const path = r.path.replace(/\{(\w+)\}/g, (_, k: string) => encodeURIComponent(PARAMS[k] ?? 'x'));
      const body = r.method === 'GET' || r.method === 'DELETE' ? undefined : JSON.stringify({ project_id: P });
      const url = r.method === 'GET' || r.method === 'DELETE' ? `${path}?project_id=${encodeURIComponent(P)}` : path;
      const reply = await api.request(r.method, url, body);
      if (reply.status === 405 || (reply.status === 404 && String(reply.text).includes('no such endpoint')))
        missing.push(`${r.method} ${r.path}`);
      // A request that does not fit, or names nothing, is refused (4xx), never a failure of the server.
      if (reply.status >= 500) failed.push(`${r.method} ${r.path}: ${reply.status} ${reply.text}`);
    }
    expect(missing).toEqual([]);
    expect(failed).toEqual([]);
  });

  it('object aliases and tags: set, list, move, remove; on a version of the object only', async () => {
    const v1 = ok(await api.post('/obj/create', { obj: { project_id: P, object_id: 'prompt', val: { text: 'one' } } })).body.digest;
    const v2 = ok(await api.post('/obj/create', { obj: { project_id: P, object_id: 'prompt', val: { text: 'two' } } })).body.digest;
    const put = (path: string, body: unknown) => api.request('PUT', path, JSON.stringify(body));
    ok(await put('/objs/prompt/aliases', { project_id: P, digest: v1, aliases: ['production', 'stable'] }));
    ok(await put(`/objs/prompt/versions/${v2}/tags`, { project_id: P, tags: ['reviewed', 'fast'] }));
    ok(await put(`/objs/prompt/versions/v0/tags`, { project_id: P, tags: ['reviewed'] }));
    expect(ok(await api.request('GET', `/aliases?project_id=${encodeURIComponent(P)}`)).body).toEqual({
      aliases: ['production', 'stable'],
    });
    expect(ok(await api.request('GET', `/tags?project_id=${encodeURIComponent(P)}`)).body).toEqual({ tags: ['fast', 'reviewed'] });
    // An alias moves; removing one leaves the others.
    ok(await put('/objs/prompt/aliases', { project_id: P, digest: v2, aliases: ['production'] }));
    ok(await api.post('/objs/prompt/aliases/remove', { project_id: P, aliases: ['stable'] }));
    ok(await api.post(`/objs/prompt/versions/${v2}/tags/remove`, { project_id: P, tags: ['fast'] }));
    expect(ok(await api.request('GET', `/aliases?project_id=${encodeURIComponent(P)}`)).body).toEqual({ aliases: ['production'] });
    expect(ok(await api.request('GET', `/tags?project_id=${encodeURIComponent(P)}`)).body).toEqual({ tags: ['reviewed'] });
    // An alias reads as a version name; the labels come with include_tags_and_aliases.
    const read = ok(
      await api.post('/obj/read', { project_id: P, object_id: 'prompt', digest: 'production', include_tags_and_aliases: true }),
    ).body.obj;
    expect([read.digest, read.val, read.tags, read.aliases]).toEqual([v2, { text: 'two' }, ['reviewed'], ['production']]);
    const objs = ok(await api.post('/objs/query', { project_id: P, filter: { object_ids: ['prompt'] }, include_tags_and_aliases: true }))
      .body.objs;
    expect(objs.map((o: { tags: string[]; aliases: string[] }) => [o.tags, o.aliases])).toEqual([
      [['reviewed'], []],
      [['reviewed'], ['production']],
    ]);
    expect(ok(await api.post('/obj/read', { project_id: P, object_id: 'prompt', digest: v1 })).body.obj.tags).toBeUndefined();
    expect((await put('/objs/prompt/aliases', { project_id: P, digest: 'nope', aliases: ['x'] })).status).toBe(404);
    expect((await put('/objs/prompt/aliases', { project_id: P, digest: v1, aliases: ['latest'] })).status).toBe(400);
  });

  it('a V2 runtime is stored as a custom provider and its models', async () => {
    const put = await api.request(
      'PUT',
      '/v2/acme/weave054/runtimes/my%20vllm',
      JSON.stringify({
        base_url: 'http://127.0.0.1:9/v1',
        runtime_ids: [{ id: 'qwen/q3', max_tokens: 8192 }],
        api_key_secret: 'VLLM_KEY',
        headers: { 'x-a': 'b' },
      }),
    );
    expect(ok(put).body).toEqual({
      name: 'my vllm',
      base_url: 'http://127.0.0.1:9/v1',
      api_key_secret: 'VLLM_KEY',
      headers: { 'x-a': 'b' },
      runtime_ids: [{ id: 'qwen/q3', max_tokens: 8192, playground_id: 'custom::my_vllm::qwen/q3' }],
    });
    const provider = ok(await api.post('/obj/read', { project_id: P, object_id: 'my_vllm', digest: 'latest' })).body.obj;
    expect(provider.base_object_class).toBe('Provider');
    expect(provider.val).toMatchObject({ base_url: 'http://127.0.0.1:9/v1', api_key_name: 'VLLM_KEY', extra_headers: { 'x-a': 'b' } });
    const model = ok(await api.post('/obj/read', { project_id: P, object_id: 'my_vllm-qwen_q3', digest: 'latest' })).body.obj;
    expect([model.base_object_class, model.val.name, model.val.provider, model.val.max_tokens]).toEqual([
      'ProviderModel',
      'qwen/q3',
      'my_vllm',
      8192,
    ]);
  });

  it('tables from row digests, projects info, files stats and URLs', async () => {
    const t = ok(await api.post('/table/create', { table: { project_id: P, rows: [{ a: 1 }, { a: 2 }] } })).body;
    const again = ok(await api.post('/table/create_from_digests', { project_id: P, row_digests: [...t.row_digests].reverse() })).body;
    const rows = ok(await api.post('/table/query', { project_id: P, digest: again.digest })).body.rows;
    expect(rows.map((r: { val: { a: number } }) => r.val.a)).toEqual([2, 1]);
    expect(ok(await api.post('/table/create_from_digests', { project_id: P, row_digests: t.row_digests })).body.digest).toBe(t.digest);
    expect((await api.post('/table/create_from_digests', { project_id: P, row_digests: ['nope'] })).status).toBe(400);
    expect(ok(await api.post('/service/projects_info', { project_ids: [P] })).body).toEqual([
      { external_project_id: P, internal_project_id: P },
    ]);
    expect(ok(await api.post('/files/query_stats', { project_id: 'acme/no-files' })).body).toEqual({ total_size_bytes: 0 });
    expect(ok(await api.post('/files/resolve_url', { project_id: P, uris: ['a'] })).body).toEqual({
      download_urls: [''],
      expires_at: null,
    });
  });

  it('dataset sources: link rows to calls and conversations, query both ways', async () => {
    ok(
      await api.post('/call/start', {
        start: { project_id: P, id: 'src-1', trace_id: 'src-t', op_name: 'answer', started_at: '2025-01-01T00:00:00Z', inputs: {} },
      }),
    );
    const link = {
      row_digest: 'row-a',
      sources: [
        { source_id: 'src-1', source_kind: 'call', source_trace_id: 'src-t' },
        { source_id: 'conv-9', source_kind: 'conversation', source_trace_id: '' },
      ],
    };
    const first = ok(
      await api.post('/dataset_sources/link', {
        project_id: P,
        dataset_object_id: 'ds',
        dataset_digest: 'd1',
        links: [link],
        include_created_status: true,
      }),
    ).body;
    expect(first.entries.map((e: { created: boolean }) => e.created)).toEqual([true, true]);
    const second = ok(
      await api.post('/dataset_sources/link', {
        project_id: P,
        dataset_object_id: 'ds',
        dataset_digest: 'd1',
        links: [link],
        include_created_status: true,
      }),
    ).body;
    expect(second.entries).toEqual(first.entries.map((e: { link_id: string }) => ({ link_id: e.link_id, created: false })));
    const q = ok(await api.post('/dataset_sources/query', { project_id: P, dataset_object_id: 'ds' })).body.links;
    expect(q.map((l: Record<string, unknown>) => [l.source_kind, l.source_id, l.source_display_name, l.row_digest]).sort()).toEqual([
      ['call', 'src-1', 'answer', 'row-a'],
      ['conversation', 'conv-9', 'conv-9', 'row-a'],
    ]);
    const m = ok(
      await api.post('/dataset_sources/source_datasets_query', {
        project_id: P,
        sources: [{ source_id: 'src-1', source_kind: 'call', source_trace_id: 'src-t' }],
      }),
    ).body;
    expect(m.memberships).toMatchObject([
      { dataset_object_id: 'ds', source_id: 'src-1', row_digests: ['row-a'], row_digests_total_count: 1, row_digests_truncated: false },
    ]);
  });

  it('feedback payload schema, stats and aggregate', async () => {
    const at = new Date().toISOString();
    for (const [score, passed] of [
      [0.5, true],
      [1.5, false],
    ] as const)
      ok(
        await api.post('/feedback/create', {
          project_id: P,
          weave_ref: `weave:///${P}/call/src-1`,
          feedback_type: 'wandb.runnable.judge',
          runnable_ref: `weave:///${P}/object/judge:abc`,
          payload: { output: { score, passed, label: 'x' }, scorer_ratings: { quality: score }, scorer_tags: ['t1'] },
        }),
      );
    const start = new Date(Date.now() - 3_600_000).toISOString();
    const schema = ok(await api.post('/feedback/payload_schema', { project_id: P, start })).body.paths;
    expect(schema).toContainEqual({ json_path: 'output.score', value_type: 'numeric' });
    expect(schema).toContainEqual({ json_path: 'output.passed', value_type: 'boolean' });
    expect(schema).toContainEqual({ json_path: 'output.label', value_type: 'categorical' });
    const stats = ok(
      await api.post('/feedback/stats', {
        project_id: P,
        start,
        end: new Date(Date.now() + 60_000).toISOString(),
        metrics: [
          { json_path: 'output.score', aggregations: ['avg', 'max', 'count'] },
          { json_path: 'output.passed', value_type: 'boolean' },
        ],
      }),
    ).body;
    expect(stats.window_stats).toEqual({ output_score: { avg: 1, max: 1.5, count: 2 }, output_passed: { count_true: 1, count_false: 1 } });
    expect(stats.buckets.reduce((n: number, b: { count: number }) => n + b.count, 0)).toBe(2);
    expect(at).toBeTruthy();
    const agg = ok(
      await api.post('/feedback/aggregate', {
        project_id: P,
        after_ms: Date.now() - 3_600_000,
        before_ms: Date.now() + 60_000,
        group_by: ['scorer_id'],
      }),
    ).body;
    expect(agg.buckets).toEqual([
      {
        group: { scorer_id: 'judge' },
        time_bucket_start_ms: null,
        total_count: 2,
        scored_count: 2,
        rating_counts: { quality: 2 },
        rating_sums: { quality: 2 },
        tag_counts: { t1: 2 },
      },
    ]);
  });

  it('/calls/score stores each scorer’s result as the call’s runnable feedback', async () => {
    ok(
      await api.post('/call/start', {
        start: { project_id: P, id: 'scored', trace_id: 'scored', op_name: 'op', started_at: '2025-01-01T00:00:00Z', inputs: {} },
      }),
    );
    ok(
      await api.post('/call/end', {
        end: { project_id: P, id: 'scored', ended_at: '2025-01-01T00:00:01Z', output: '{"a": 1}', summary: {} },
      }),
    );
    const scorer = ok(
      await api.post('/obj/create', {
        obj: {
          project_id: P,
          object_id: 'json-check',
          val: { _type: 'ValidJSONScorer', _class_name: 'ValidJSONScorer', _bases: ['Scorer', 'Object', 'BaseModel'], name: 'json-check' },
        },
      }),
    ).body;
    const ref = `weave:///${P}/object/json-check:${scorer.digest}`;
    ok(await api.post('/calls/score', { project_id: P, call_ids: ['scored'], scorer_refs: [ref] }));
    const fb = ok(
      await api.post('/feedback/query', {
        project_id: P,
        query: { $expr: { $eq: [{ $getField: 'feedback_type' }, { $literal: 'wandb.runnable.json-check' }] } },
      }),
    ).body.result;
    expect(fb).toHaveLength(1);
    expect(fb[0].runnable_ref).toBe(ref);
    expect(fb[0].payload).toEqual({ output: { json_valid: true } });
    expect(
      (await api.post('/calls/score', { project_id: P, call_ids: ['scored'], scorer_refs: ['weave:///acme/elsewhere/object/x:1'] })).status,
    ).toBe(400);
  });

  it('the agents family reads OTLP GenAI spans: agents, versions, a trace as a chat, a conversation, its spans, search', async () => {
    const AP = 'acme/agents054';
    const traceId = 'ab'.repeat(16);
    const at = (ms: number) => String(BigInt(Date.UTC(2025, 0, 1)) * 1_000_000n + BigInt(ms) * 1_000_000n);
    const attr = (key: string, v: string | number) => ({
      key,
      value: typeof v === 'number' ? { intValue: String(v) } : { stringValue: v },
    });
    const span = (id: string, parent: string | null, name: string, ms: number, attrs: [string, string | number][]) => ({
      traceId,
      spanId: id.repeat(8),
      ...(parent ? { parentSpanId: parent.repeat(8) } : {}),
      name,
      kind: 1,
      startTimeUnixNano: at(ms),
      endTimeUnixNano: at(ms + 100),
      status: { code: 1 },
      attributes: attrs.map(([k, v]) => attr(k, v)),
    });
    const common: [string, string][] = [['gen_ai.conversation.id', 'conv-1']];
    const spans = [
      span('01', null, 'invoke_agent weather', 0, [
        ...common,
        ['gen_ai.operation.name', 'invoke_agent'],
        ['gen_ai.agent.name', 'weather'],
        ['gen_ai.agent.version', '2'],
      ]),
      span('02', '01', 'chat gpt-4o', 10, [
        ...common,
        ['gen_ai.operation.name', 'chat'],
        ['gen_ai.request.model', 'gpt-4o'],
        ['gen_ai.usage.input_tokens', 70],
        ['gen_ai.usage.output_tokens', 7],
        ['gen_ai.input.messages', JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] }])],
        [
          'gen_ai.output.messages',
          JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'Sunny in Paris.' }], finish_reason: 'stop' }]),
        ],
      ]),
    ];
    const body = { resourceSpans: [{ scopeSpans: [{ scope: { name: 't' }, spans }] }] };
    ok(await api.raw('/otel/v1/traces', JSON.stringify(body), { 'content-type': 'application/json', project_id: AP }));

    const agents = ok(await api.post('/agents/query', { project_id: AP })).body;
    expect(agents.total_count).toBe(1);
    expect(agents.agents[0]).toMatchObject({
      project_id: AP,
      agent_name: 'weather',
      invocation_count: 1,
      error_count: 0,
      span_count: 2,
      total_input_tokens: 70,
      total_output_tokens: 7,
      total_duration_ms: 100,
    });
    const versions = ok(await api.post('/agents/agent-versions/query', { project_id: AP, agent_name: 'weather' })).body;
    expect(versions.versions.map((v: { agent_version: string }) => v.agent_version)).toEqual(['2']);

    const chat = ok(await api.post('/agents/traces/chat', { project_id: AP, trace_id: traceId })).body;
    expect(chat.messages.map((m: { type: string }) => m.type)).toEqual(['agent_start', 'user_message', 'assistant_message']);
    expect(chat.messages[1].user_message.text).toBe('Weather in Paris?');
    expect(chat.messages[2].assistant_message).toMatchObject({ text: 'Sunny in Paris.', input_tokens: 70, output_tokens: 7 });
    expect(chat).toMatchObject({ trace_id: traceId, agent_name: 'weather', agent_version: '2', total_input_tokens: 70, status_code: 'OK' });

    const conv = ok(await api.post('/agents/conversations/chat', { project_id: AP, conversation_id: 'conv-1' })).body;
    expect(conv).toMatchObject({ conversation_id: 'conv-1', total_turns: 1, has_more: false });
    expect(conv.turns[0].trace_id).toBe(traceId);
    const cspans = ok(await api.post('/agents/conversations/spans', { project_id: AP, conversation_ids: ['conv-1'] })).body;
    expect(cspans.conversations[0].spans.map((s: { operation_name: string }) => s.operation_name)).toEqual(['invoke_agent', 'chat']);
    const found = ok(await api.post('/agents/search', { project_id: AP, query: 'paris' })).body;
    expect(found.total_conversations).toBe(1);
    expect(found.results[0]).toMatchObject({ conversation_id: 'conv-1', agent_name: 'weather' });
    const listed = ok(await api.post('/agents/spans/query', { project_id: AP })).body;
    expect(listed.total_count).toBe(2);
    const stats = ok(
      await api.post('/agents/spans/stats', { project_id: AP, start: '2025-01-01T00:00:00Z', end: '2025-01-01T01:00:00Z' }),
    ).body;
    expect(stats.rows).toHaveLength(1);
    expect(stats.rows[0]).toMatchObject({ span_count: 2, invocation_count: 1, input_tokens: 70 });
  });
});
