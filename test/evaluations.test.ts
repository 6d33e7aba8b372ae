import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from './helpers/client';
import { weftCli } from './helpers/cli';
import { createKey, clientFor, type TestKey } from './helpers/keys';
import { startModelServer, type ModelServer } from './helpers/model-server';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';
import { runWeaveScript } from './helpers/weave-sdk';

/**
 * Server-side evaluations: the real Weave SDK publishes an Evaluation (a Dataset of five
 * questions, an LLM judge and a JSON check) and LLMStructuredCompletionModels; weft runs it on
 * /evaluations/evaluate_model, recording the call tree Evaluation.evaluate makes, and the SDK
 * reads the run back as an evaluation. The answering model and the judge are the model
 * stand-in, scripted.
 */
const P = 'evals/app';
const ANSWER = 'answer-mini';
const JUDGE = 'judge-mini';
let upstream: ModelServer;
let weft: RunningWeft;
let api: Client;
let key: TestKey;
let as: Client;
const asked: string[] = [];
const judged: string[] = [];
/** How long the answering model takes (a slow model, for cancelling and crashing mid-run). */
let answerDelayMs = 0;
let refs: { evaluation: string; model: string; unserved: string; dataset: string };

const runScript = (args: string[], url = weft.url): Promise<any> =>
  runWeaveScript('evaluation.py', args, {
    baseUrl: url,
    apiKey: key.key,
    project: P,
    extraEnv: { JUDGE_MODEL: JUDGE, ANSWER_MODEL: ANSWER },
  });

beforeAll(async () => {
  upstream = await startModelServer();
  const dir = newDataDir('evaluations');
  const file = join(dir, 'upstreams.json');
  writeFileSync(file, JSON.stringify({ upstreams: [{ name: 'models', base_url: `${upstream.url}/vllm/v1`, models: [ANSWER, JUDGE] }] }));
  weft = await startWeft({ dataDir: dir, env: { WEFT_UPSTREAMS_FILE: file, WEFT_MONITORS_INTERVAL_MS: '0', WEFT_RATE_LIMIT_MAX: '0' } });
  api = new Client(weft.url);
  expect((await api.post('/admin/entities/create', { name: 'evals' })).status).toBe(200);
  key = await createKey(api, 'evals-alice', ['evals']);
  as = clientFor(api, key);
  upstream.script((body) => {
    const system = body.messages?.[0]?.content;
    const prompt = String(body.messages?.[1]?.content ?? '');
    if (system === 'Answer briefly.') {
      asked.push(prompt);
      const q = prompt.replace('Question: ', '');
      return { content: q === 'json' ? '{"answer": "JSON"}' : `The answer is ${q.toUpperCase()}`, delayMs: answerDelayMs };
    }
    if (system === 'You grade answers.') {
      judged.push(prompt);
      // A boolean (true_count/true_fraction) and a number (mean) in each verdict.
      return { content: JSON.stringify({ helpful: !prompt.includes('question: rude'), length: prompt.length }) };
    }
    return undefined;
  });
  refs = await runScript([]);
}, 600_000);
afterAll(async () => {
  await weft?.stop();
  await upstream?.close();
});

type Call = {
  id: string;
  op_name: string;
  parent_id: string | null;
  trace_id: string;
  inputs: Record<string, any>;
  output: any;
  exception: string | null;
  ended_at: string | null;
  attributes: Record<string, any>;
};

async function runToEnd(modelRef: string): Promise<{ callId: string; final: any; seen: any[] }> {
  const r = await as.post('/evaluations/evaluate_model', { project_id: P, evaluation_ref: refs.evaluation, model_ref: modelRef });
  expect(r.status, r.text).toBe(200);
  const callId = r.body.call_id as string;
  return { callId, ...(await waitForEnd(as, callId)) };
}

async function waitForEnd(as: Client, callId: string): Promise<{ final: any; seen: any[] }> {
  const seen: any[] = [];
  await expect
    .poll(
      async () => {
        const s = await as.post('/evaluations/status', { project_id: P, call_id: callId });
        expect(s.status, s.text).toBe(200);
        seen.push(s.body.status);
        return s.body.status.code;
      },
      { timeout: 120_000, interval: 200 },
    )
    .not.toBe('running');
  return { final: seen.at(-1), seen };
}

const shortOp = (c: Call) => c.op_name.split('/').pop()!.split(':')[0]!;

async function traceOf(root: string, client = as): Promise<Call[]> {
  const [first] = await client.jsonl<Call>('/calls/stream_query', { project_id: P, filter: { call_ids: [root] } });
  return client.jsonl<Call>('/calls/stream_query', { project_id: P, filter: { trace_ids: [first!.trace_id] } });
}

describe('server-side evaluations (/evaluations/evaluate_model)', () => {
  it("runs each row through the model and the scorers, recording Evaluation.evaluate's call tree; the summary is the rows' scores summarized", async () => {
    const { callId, final, seen } = await runToEnd(refs.model);
    expect(final.code).toBe('complete');
    // Progress counts rows of the five, never backwards.
    const running = seen.filter((s) => s.code === 'running');
    for (const s of running) expect(s.total_rows).toBe(5);
    const done = running.map((s) => s.completed_rows as number);
    expect(done).toEqual([...done].sort((a, b) => a - b));

    const calls = await traceOf(callId);
    const root = calls.find((c) => c.id === callId)!;
    const evaluation = (await as.post('/obj/read', { project_id: P, object_id: 'capitals-eval', digest: refs.evaluation.split(':').pop() }))
      .body.obj.val;
    // The ops the SDK published with the Evaluation.
    expect(root.op_name).toBe(evaluation.evaluate);
    expect(root.parent_id).toBeNull();
    expect(root.inputs).toEqual({ self: refs.evaluation, model: refs.model });
    expect(root.attributes._weave_eval_meta).toEqual({ evaluate_model_worker: true });

    const rows = calls.filter((c) => c.parent_id === callId && c.op_name === evaluation.predict_and_score);
    expect(rows).toHaveLength(5);
    const examples = rows.map((r) => r.inputs.example as string);
    expect(new Set(examples).size).toBe(5);
    for (const row of rows) {
      expect(row.inputs.self).toBe(refs.evaluation);
      expect(row.inputs.model).toBe(refs.model);
      expect(row.inputs.example).toMatch(new RegExp(`^${refs.dataset}/attr/rows/id/[A-Za-z0-9]+$`));
      const kids = calls.filter((c) => c.parent_id === row.id);
      expect(kids.map(shortOp).sort()).toEqual([
        'LLMAsAJudgeScorer.score',
        'LLMStructuredCompletionModel.predict',
        'ValidJSONScorer.score',
      ]);
      const predict = kids.find((c) => shortOp(c) === 'LLMStructuredCompletionModel.predict')!;
      const q = predict.inputs.template_vars.q as string;
      expect(predict.inputs).toEqual({ self: refs.model, template_vars: { q, expected: q.toUpperCase() } });
      expect(predict.output).toBe(q === 'json' ? '{"answer": "JSON"}' : `The answer is ${q.toUpperCase()}`);
      const judge = kids.find((c) => shortOp(c) === 'LLMAsAJudgeScorer.score')!;
      expect(judge.inputs.output).toBe(predict.output);
      expect(judge.output.helpful).toBe(q !== 'rude');
      // The ValidJSONScorer ref carries its score op, which the call names.
      const jsonCheck = kids.find((c) => shortOp(c) === 'ValidJSONScorer.score')!;
      expect(jsonCheck.op_name).toMatch(/^weave:\/\/\/evals\/app\/op\/ValidJSONScorer\.score:/);
      expect(row.output).toEqual({
        output: predict.output,
        scores: { helpful: judge.output, ValidJSONScorer: { json_valid: q === 'json' } },
        model_latency: expect.any(Number),
      });
    }
    // The model saw the row's columns in its template; the judge, the scorer's prompt with the output and the row.
    expect(asked.sort()).toEqual(['Question: berlin', 'Question: json', 'Question: paris', 'Question: rome', 'Question: rude']);
    expect(judged).toContain('Grade: The answer is PARIS (question: paris, expected: PARIS)');

    // The summary, from the rows' own outputs.
    const outs = rows.map((r) => r.output);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const expected = {
      helpful: {
        helpful: { true_count: outs.filter((o) => o.scores.helpful.helpful).length, true_fraction: 0.8 },
        length: { mean: mean(outs.map((o) => o.scores.helpful.length)) },
      },
      ValidJSONScorer: { json_valid: { true_count: 1, true_fraction: 0.2 } },
      model_latency: { mean: mean(outs.map((o) => o.model_latency)) },
    };
    expect(expected.helpful.helpful.true_count).toBe(4);
    const summarize = calls.find((c) => c.parent_id === callId && c.op_name === evaluation.summarize)!;
    expect(summarize.inputs).toEqual({ self: refs.evaluation });
    for (const got of [root.output, summarize.output, final.output]) {
      expect(Object.keys(got)).toEqual(['helpful', 'ValidJSONScorer', 'model_latency']);
      expect(got.helpful.helpful).toEqual(expected.helpful.helpful);
      expect(got.helpful.length.mean).toBeCloseTo(expected.helpful.length.mean, 9);
      expect(got.ValidJSONScorer).toEqual(expected.ValidJSONScorer);
      expect(got.model_latency.mean).toBeCloseTo(expected.model_latency.mean, 9);
    }

    // The SDK finds the run as any run of that Evaluation and reads its tree.
    const read = await runScript(['read', refs.evaluation, callId]);
    expect(read.evaluate_calls).toContain(callId);
    expect(read.output).toEqual(root.output);
    expect(read.children.filter((n: string) => n === 'Evaluation.predict_and_score')).toHaveLength(5);
    expect(read.children.at(-1)).toBe('Evaluation.summarize');
  }, 600_000);

  it('a model no upstream serves: every row recorded with its error, no scores, and the run completes', async () => {
    const before = judged.length;
    const { callId, final } = await runToEnd(refs.unserved);
    expect(final).toEqual({
      code: 'complete',
      output: { helpful: null, ValidJSONScorer: null, model_latency: { mean: expect.any(Number) } },
    });
    const calls = await traceOf(callId);
    const predicts = calls.filter((c) => shortOp(c) === 'LLMStructuredCompletionModel.predict');
    expect(predicts).toHaveLength(5);
    for (const p of predicts) {
      expect(p.output).toBeNull();
      expect(JSON.parse(p.exception!).message).toBe('Model nobody-serves-this is not served here: no configured upstream lists it');
    }
    const rows = calls.filter((c) => shortOp(c) === 'Evaluation.predict_and_score');
    expect(rows).toHaveLength(5);
    for (const r of rows) expect(r.output).toEqual({ output: null, scores: {}, model_latency: expect.any(Number) });
    // No row was scored.
    expect(calls.filter((c) => shortOp(c).endsWith('.score'))).toEqual([]);
    expect(judged.length).toBe(before);
  }, 300_000);

  it('refuses what it cannot run with a 4xx naming the field; an unknown run is not_found', async () => {
    const post = (body: Record<string, unknown>) => as.post('/evaluations/evaluate_model', { project_id: P, ...body });
    const swapped = await post({ evaluation_ref: refs.model, model_ref: refs.model });
    expect(swapped.status).toBe(400);
    expect(swapped.text).toContain('evaluation_ref');
    expect(swapped.text).toContain('not an Evaluation');
    const notModel = await post({ evaluation_ref: refs.evaluation, model_ref: refs.dataset });
    expect(notModel.status).toBe(400);
    expect(notModel.text).toContain('model_ref');
    const missing = await post({ evaluation_ref: refs.evaluation, model_ref: `weave:///${P}/object/nothing:abc` });
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('model_ref');
    const otherProject = await post({ evaluation_ref: refs.evaluation.replace(`/${P}/`, '/evals/other/'), model_ref: refs.model });
    expect(otherProject.status).toBe(400);
    expect(otherProject.text).toContain('evaluation_ref');
    const noRef = await post({ model_ref: refs.model });
    expect(noRef.status).toBe(422); // schema validation, as for every endpoint
    expect(noRef.text).toContain('evaluation_ref');

    const unknown = await as.post('/evaluations/status', { project_id: P, call_id: '0199aaaa-0000-7000-8000-000000000000' });
    expect(unknown.body).toEqual({ status: { code: 'not_found' } });
    // A call that is not a server-side run's root (a row of one) has no status either.
    const { callId } = await runToEnd(refs.unserved);
    const row = (await traceOf(callId)).find((c) => c.parent_id === callId)!;
    expect((await as.post('/evaluations/status', { project_id: P, call_id: row.id })).body).toEqual({ status: { code: 'not_found' } });
  }, 120_000);
});

describe('server-side evaluations: cancel, cost cap, resume after a crash', () => {
  const start = async (client: Client, body: Record<string, unknown> = {}) => {
    const r = await client.post('/evaluations/evaluate_model', {
      project_id: P,
      evaluation_ref: refs.evaluation,
      model_ref: refs.model,
      ...body,
    });
    expect(r.status, r.text).toBe(200);
    return r.body.call_id as string;
  };

  it('cancel: the rows under way end, no other row starts, and the run ends failed saying who cancelled', async () => {
    answerDelayMs = 1500;
    try {
      const before = asked.length;
      const callId = await start(as);
      // Four rows run at once: the fifth has not started when the cancel comes.
      await expect.poll(() => asked.length - before, { timeout: 30_000, interval: 50 }).toBe(4);
      const r = await as.post('/evaluations/cancel', { project_id: P, call_id: callId });
      expect(r.status, r.text).toBe(200);
      expect(r.body.status).toEqual({ code: 'failed', error: `cancelled by ${key.user_id} after 4 of 5 rows` });
      expect(asked.length - before).toBe(4);
      const rows = (await traceOf(callId)).filter((c) => shortOp(c) === 'Evaluation.predict_and_score');
      expect(rows).toHaveLength(4);
      for (const row of rows) expect(row.ended_at).not.toBeNull();
      // Cancelling again, or a finished run, answers its status and changes nothing.
      expect((await as.post('/evaluations/cancel', { project_id: P, call_id: callId })).body.status.code).toBe('failed');
      const unknown = await as.post('/evaluations/cancel', { project_id: P, call_id: '0199aaaa-0000-7000-8000-000000000000' });
      expect(unknown.body).toEqual({ status: { code: 'not_found' } });
    } finally {
      answerDelayMs = 0;
    }
  }, 120_000);

  it('max_cost_usd: refused for a model without a price; with prices, no row starts once the requests cost that much', async () => {
    const unpriced = await as.post('/evaluations/evaluate_model', {
      project_id: P,
      evaluation_ref: refs.evaluation,
      model_ref: refs.model,
      max_cost_usd: 0.03,
    });
    expect(unpriced.status).toBe(400);
    expect(unpriced.text).toContain('max_cost_usd');
    expect(unpriced.text).toContain(ANSWER);
    const price = { prompt_token_cost: 0.001, completion_token_cost: 0.001 };
    expect((await as.post('/cost/create', { project_id: P, costs: { [ANSWER]: price, [JUDGE]: price } })).status).toBe(200);

    const before = asked.length;
    const callId = await start(as, { max_cost_usd: 0.01 });
    const { final } = await waitForEnd(as, callId);
    // The first four rows start before anything is spent; each model answer costs $0.01, so the fifth never starts.
    expect(final.code).toBe('failed');
    expect(final.error).toMatch(/^cost cap reached: \$[0-9.]+ spent of max_cost_usd \$0.01 after 4 of 5 rows$/);
    expect(asked.length - before).toBe(4);
    // The spend it names is what the stored calls cost.
    const calls = await traceOf(callId);
    const costs = await as.post('/calls/stream_query', { project_id: P, filter: { trace_ids: [calls[0]!.trace_id] }, include_costs: true });
    const stored = costs.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .flatMap((c) => Object.values(c.summary?.weave?.costs ?? {}) as any[])
      .reduce((sum, m) => sum + m.prompt_tokens_total_cost + m.completion_tokens_total_cost, 0);
    // Four answers and four judge verdicts at 7 + 3 tokens × $0.001.
    expect(stored).toBeCloseTo(0.08, 9);
    expect(Number(/\$([0-9.]+) spent/.exec(final.error)![1])).toBeCloseTo(stored, 6);
  }, 120_000);

  it('a SIGKILL mid-run: the restarted server takes the run up, keeps its finished rows, finishes the interrupted one, and completes', async () => {
    const dir = newDataDir('evaluations-resume');
    const file = join(dir, 'upstreams.json');
    writeFileSync(file, JSON.stringify({ upstreams: [{ name: 'models', base_url: `${upstream.url}/vllm/v1`, models: [ANSWER, JUDGE] }] }));
    const env = {
      WEFT_UPSTREAMS_FILE: file,
      WEFT_MONITORS_INTERVAL_MS: '0',
      WEFT_RATE_LIMIT_MAX: '0',
      WEFT_EVALUATION_HEARTBEAT_MS: '300',
    };
    let first: RunningWeft | null = await startWeft({ dataDir: dir, env });
    let second: RunningWeft | null = null;
    try {
      const admin = new Client(first.url);
      expect((await admin.post('/admin/entities/create', { name: 'evals' })).status).toBe(200);
      const k = await createKey(admin, 'evals-bob', ['evals']);
      const refs2: typeof refs = await runWeaveScript('evaluation.py', [], {
        baseUrl: first.url,
        apiKey: k.key,
        project: P,
        extraEnv: { JUDGE_MODEL: JUDGE, ANSWER_MODEL: ANSWER },
      });
      answerDelayMs = 1500;
      const before = asked.length;
      const callId = await start(clientFor(admin, k), { evaluation_ref: refs2.evaluation, model_ref: refs2.model });
      // Killed while the fifth row waits on the model, the first four finished.
      await expect.poll(() => asked.length - before, { timeout: 60_000, interval: 50 }).toBe(5);
      await first.kill();
      first = null;
      answerDelayMs = 0;
      second = await startWeft({ dataDir: dir, env });
      const as2 = clientFor(new Client(second.url), k);
      const { final } = await waitForEnd(as2, callId);
      expect(final.code, JSON.stringify(final)).toBe('complete');
      const calls = await traceOf(callId, as2);
      const rows = calls.filter((c) => shortOp(c) === 'Evaluation.predict_and_score');
      // Five rows, each once, each ended: the interrupted row was finished, not started again.
      expect(rows).toHaveLength(5);
      expect(new Set(rows.map((r) => r.inputs.example)).size).toBe(5);
      for (const r of rows) expect(r.ended_at).not.toBeNull();
      const predicts = calls.filter((c) => shortOp(c) === 'LLMStructuredCompletionModel.predict');
      expect(predicts).toHaveLength(5);
      // The four finished rows' questions were asked once; only the request lost with the process was asked again.
      const mine = asked.slice(before);
      const counts = new Map<string, number>();
      for (const q of mine) counts.set(q, (counts.get(q) ?? 0) + 1);
      expect([...counts.values()].sort()).toEqual([1, 1, 1, 1, 2]);
      expect(final.output.ValidJSONScorer).toEqual({ json_valid: { true_count: 1, true_fraction: 0.2 } });
      expect(final.output.helpful.helpful).toEqual({ true_count: 4, true_fraction: 0.8 });
    } finally {
      answerDelayMs = 0;
      await first?.kill();
      await second?.stop();
    }
  }, 600_000);

  it('replay: the calls a filter matches become a Dataset and an Evaluation, run through the model with the scorers', async () => {
    const start = (q: string, op: string) => ({
      start: { project_id: P, op_name: op, started_at: new Date().toISOString(), inputs: { q }, attributes: {} },
    });
    const ids: string[] = [];
    for (const [q, op] of [
      ['paris', 'ask'],
      ['rome', 'ask'],
      ['json', 'ask'],
      ['ignored', 'other'],
    ] as const) {
      const r = await as.post('/call/start', start(q, op));
      expect(r.status, r.text).toBe(200);
      ids.push(r.body.id);
      const end = await as.post('/call/end', {
        end: { project_id: P, id: r.body.id, ended_at: new Date().toISOString(), output: `old answer to ${q}`, summary: {} },
      });
      expect(end.status, end.text).toBe(200);
    }
    const evaluation = (await as.post('/obj/read', { project_id: P, object_id: 'capitals-eval', digest: refs.evaluation.split(':').pop() }))
      .body.obj.val;
    const r = await as.post('/evaluations/replay', {
      project_id: P,
      model_ref: refs.model,
      scorer_refs: evaluation.scorers,
      filter: { op_names: ['ask'] },
      name: 'ask-replay',
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.dataset_ref).toMatch(new RegExp(`^weave:///${P}/object/ask-replay:`));
    expect(r.body.evaluation_ref).toMatch(new RegExp(`^weave:///${P}/object/ask-replay-evaluation:`));
    const { final } = await waitForEnd(as, r.body.call_id);
    expect(final.code, JSON.stringify(final)).toBe('complete');
    expect(final.output.ValidJSONScorer).toEqual({ json_valid: { true_count: 1, true_fraction: 1 / 3 } });

    // The dataset: one row per matched call, oldest first, its inputs, original output and ref.
    const dataset = (await as.post('/obj/read', { project_id: P, object_id: 'ask-replay', digest: r.body.dataset_ref.split(':').pop() }))
      .body.obj.val;
    expect(dataset._class_name).toBe('Dataset');
    const table = await as.post('/table/query', { project_id: P, digest: dataset.rows.split('/').pop() });
    expect(table.body.rows.map((x: any) => x.val)).toEqual(
      ['paris', 'rome', 'json'].map((q, i) => ({ q, original_output: `old answer to ${q}`, source_call: `weave:///${P}/call/${ids[i]}` })),
    );
    // The run is an ordinary evaluation of that Evaluation: its rows name the dataset's.
    const rows = (await traceOf(r.body.call_id)).filter((c) => shortOp(c) === 'Evaluation.predict_and_score');
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row.inputs.example).toMatch(new RegExp(`^${r.body.dataset_ref}/attr/rows/id/`));
    const predicts = (await traceOf(r.body.call_id)).filter((c) => shortOp(c) === 'LLMStructuredCompletionModel.predict');
    expect(predicts.map((c) => c.output).sort()).toEqual(['The answer is PARIS', 'The answer is ROME', '{"answer": "JSON"}'].sort());

    const none = await as.post('/evaluations/replay', { project_id: P, model_ref: refs.model, filter: { op_names: ['never-called'] } });
    expect(none.status).toBe(400);
    expect(none.text).toContain('filter');
    const badScorer = await as.post('/evaluations/replay', {
      project_id: P,
      model_ref: refs.model,
      scorer_refs: [`weave:///evals/other/object/x:abc`],
      filter: { op_names: ['ask'] },
    });
    expect(badScorer.status).toBe(400);
    expect(badScorer.text).toContain('scorer_refs');
  }, 180_000);

  it("weft evaluate runs an evaluation to its end (--wait), and reads a run's status", async () => {
    const env = { WEFT_URL: weft.url, WEFT_API_KEY: key.key };
    const r = await weftCli(['evaluate', P, '--evaluation', refs.evaluation, '--model', refs.model, '--wait'], env);
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out);
    expect(out.status.code).toBe('complete');
    expect(out.status.output.ValidJSONScorer).toEqual({ json_valid: { true_count: 1, true_fraction: 0.2 } });
    expect(r.err).toContain(`evaluation ${out.call_id}: complete`);
    const s = await weftCli(['evaluate', P, 'status', out.call_id], env);
    expect(JSON.parse(s.out)).toEqual({ call_id: out.call_id, status: out.status });
    const missing = await weftCli(['evaluate', P, '--model', refs.model], env);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('--evaluation');
  }, 180_000);
});
