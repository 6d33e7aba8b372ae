import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerAuth, Client } from './helpers/client';
import { startModelServer, type ModelServer } from './helpers/model-server';
import { REPO_ROOT, TEST_ROOT } from './helpers/paths';
import { ensureInstrumentationClients, runInstrumentedClient } from './helpers/python-clients';
import { ensurePythonVenv } from './helpers/python-venv';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';
import { weaveUserEnv } from './helpers/weave-sdk';

/**
 * One LLM request recorded twice — by the caller's tracing and by weft's /v1 front, in the same
 * project — counts once in analytics and in the usage roll-ups (issue 53, item 2): the Weave SDK
 * with its OpenAI integration (pinned, real) and the Agents SDK traced by OpenInference, each
 * with x-project-id on its client; the front's records stay, linked by the response id.
 */
const WEAVE_OPENAI = ['weave==0.54.0', 'openai==3.54.0'];
const ensureWeaveOpenAi = () => ensurePythonVenv('weave-openai-0.54.0-3.54.0', WEAVE_OPENAI);

let upstream: ModelServer;
let weft: RunningWeft;
let api: Client;

beforeAll(async () => {
  upstream = await startModelServer();
  const dir = newDataDir('one-request-once');
  const file = join(dir, 'upstreams.json');
  writeFileSync(file, JSON.stringify({ upstreams: [{ name: 'vllm', base_url: `${upstream.url}/vllm/v1`, models: ['m-vllm'] }] }));
  [weft] = await Promise.all([
    startWeft({ dataDir: dir, env: { WEFT_UPSTREAMS_FILE: file } }),
    ensureWeaveOpenAi(),
    ensureInstrumentationClients(),
  ]);
  api = new Client(weft.url, bearerAuth('test-key'));
}, 900_000);
afterAll(async () => {
  await weft?.stop();
  await upstream?.close();
});

async function runWeaveOpenAi(project: string): Promise<any> {
  const python = await ensureWeaveOpenAi();
  const scratch = mkdtempSync(join(TEST_ROOT, 'one-request-once-'));
  const env = weaveUserEnv({ scratch, baseUrl: weft.url, apiKey: 'test-key', project });
  return new Promise((resolve, reject) => {
    const child = spawn(python, [join(REPO_ROOT, 'test', 'weave-sdk', 'openai-through-front.py')], { cwd: scratch, env });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => {
      const last = out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .pop();
      if (code !== 0 || !last) reject(new Error(`openai-through-front.py exited ${code}: ${out.slice(-4000)}`));
      else resolve(JSON.parse(last));
    });
  });
}

const calls = (project: string) => api.jsonl<any>('/calls/stream_query', { project_id: project });
const totals = async (project: string) => {
  const q = await api.post('/analytics/query', {
    project_id: project,
    metrics: ['requests', 'prompt_tokens', 'completion_tokens', 'total_tokens'],
  });
  expect(q.status, q.text).toBe(200);
  return q.body.totals ?? q.body.rows[0];
};

describe('one request recorded by the caller and by the front counts once', () => {
  it('Weave SDK OpenAI integration + the front with x-project-id: analytics, /calls/aggregate and the usage roll-ups count each request once', async () => {
    const P = 'acme/weave-openai-front';
    const out = await runWeaveOpenAi(P);
    expect(out.versions).toEqual({ weave: '0.54.0', openai: '3.54.0' });
    const all = await calls(P);
    const front = all.filter((c) => c.op_name.startsWith('weave.') && !c.op_name.includes('/'));
    // Both records are kept: the front's four, and the SDK's (ops and integration calls).
    expect(front.map((c) => c.op_name).sort()).toEqual([
      'weave.chat_completions_create',
      'weave.chat_completions_create',
      'weave.chat_completions_create',
      'weave.responses_create',
    ]);
    expect(front.map((c) => c.output.id).sort()).toEqual([...out.ids].sort());
    // Four requests, 7 + 3 tokens each: counted once, not twice.
    expect(await totals(P)).toMatchObject({ requests: 4, prompt_tokens: 28, completion_tokens: 12, total_tokens: 40 });
    const agg = await api.post('/calls/aggregate', { project_id: P });
    expect(agg.status, agg.text).toBe(200);
    expect(agg.body.totals).toMatchObject({ prompt_tokens: 28, completion_tokens: 12, total_tokens: 40 });
    // The calls list's roll-up of each op: its one request.
    const ops = all.filter((c) => c.parent_id === null && c.op_name.includes('/op/ask'));
    expect(ops).toHaveLength(4);
    const usage = await api.post('/calls/usage', { project_id: P, call_ids: ops.map((c) => c.id) });
    expect(usage.status, usage.text).toBe(200);
    for (const c of ops) expect(usage.body.call_usage[c.id]['m-vllm']).toMatchObject({ requests: 1, total_tokens: 10 });
    // The front's records count nothing of their own: each one's usage is in the SDK's record.
    const frontUsage = await api.post('/calls/usage', { project_id: P, call_ids: front.map((c) => c.id) });
    for (const c of front) expect(frontUsage.body.call_usage[c.id]).toEqual({});
  }, 300_000);

  it('openai-agents (OpenInference, no traceparent) with x-project-id on its client: its Responses model requests count once', async () => {
    const P = 'acme/agents-front';
    const dump = join(TEST_ROOT, 'agents-front.json');
    const r = await runInstrumentedClient('instrumented_openai.py', ['agents-bare', weft.url, 'test-key', P, dump, '', P], {
      timeoutMs: 180_000,
    });
    if (r.code !== 0) throw new Error(`instrumented_openai.py exited ${r.code}\n${r.stderr}`);
    const all = await calls(P);
    // Two agents, two model requests each: recorded by the spans and by the front.
    expect(all.filter((c) => c.attributes.kind === 'LLM')).toHaveLength(4);
    const front = all.filter((c) => c.op_name.startsWith('weave.'));
    expect(front).toHaveLength(4);
    // The Responses agent's spans hold the response (output.value.id): its front records are linked.
    const linked = front.filter((c) => c.op_name === 'weave.responses_create');
    expect(linked).toHaveLength(2);
    const usage = await api.post('/calls/usage', { project_id: P, call_ids: front.map((c) => c.id) });
    expect(usage.status, usage.text).toBe(200);
    for (const c of linked) expect(usage.body.call_usage[c.id]).toEqual({});
    // The chat completions model's spans carry no response id (only the message): those two
    // requests cannot be told apart from others and count twice (docs/inference.md says so).
    for (const c of front.filter((x) => x.op_name === 'weave.chat_completions_create'))
      expect(usage.body.call_usage[c.id]['m-vllm']).toMatchObject({ requests: 1 });
    expect(await totals(P)).toMatchObject({ requests: 6, prompt_tokens: 42, completion_tokens: 18, total_tokens: 60 });
  }, 300_000);
});
