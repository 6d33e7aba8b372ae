import { describe, expect, it } from 'vitest';
import { clientFor, createKey, type TestKey } from './helpers/keys';
import type { Client, Reply } from './helpers/client';
import { useWeft } from './helpers/fixture';
import { runWeaveScript } from './helpers/weave-sdk';

// Weave's V2 object and evaluation APIs over HTTP, as the Weave SDK calls them (0.52.29's
// RemoteHTTPTraceServer, 0.54's vendored client): the project in the path, GET and DELETE with
// their members in the query string, lists as JSONL.

const ENTITY = 'acme';
const PROJECT = 'v2';
const P = `${ENTITY}/${PROJECT}`;
const BASE = `/v2/${ENTITY}/${PROJECT}`;

let alice: TestKey;
let outsider: TestKey;
const { weft, api } = useWeft({}, async (admin) => {
  alice = await createKey(admin, 'alice', [ENTITY]);
  outsider = await createKey(admin, 'mallory', ['globex']);
});

/** A request with any method, as the SDK's httpx client makes it. */
const send = (client: Client, method: string, path: string, body?: unknown) =>
  client.request(method, path, body === undefined ? undefined : JSON.stringify(body));
const as = (key: TestKey) => clientFor(api, key);
const ok = async (r: Promise<Reply>): Promise<any> => {
  const reply = await r;
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
};
const lines = (r: Reply): any[] => {
  expect(r.status, r.text).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/jsonl/);
  return r.text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
};
const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/);

describe('V2 objects', () => {
  it('ops: create versions, read one with its code, list paged, delete one version then all', async () => {
    const c = as(alice);
    const v0 = await ok(send(c, 'POST', `${BASE}/ops`, { name: 'My Op', source_code: 'def f():\n    return 0\n' }));
    expect(v0).toEqual({ digest: expect.any(String), object_id: 'my_op', version_index: 0 });
    const v1 = await ok(send(c, 'POST', `${BASE}/ops`, { name: 'My Op', source_code: 'def f():\n    return 1\n', project_id: P }));
    expect(v1.version_index).toBe(1);
    // No source: the placeholder.
    const anon = await ok(send(c, 'POST', `${BASE}/ops`, {}));
    expect(anon.object_id).toBe('Op');

    const read = await ok(send(c, 'GET', `${BASE}/ops/my_op/versions/${v0.digest}`));
    expect(read).toEqual({ object_id: 'my_op', digest: v0.digest, version_index: 0, created_at: ISO, code: 'def f():\n    return 0\n' });
    expect((await ok(send(c, 'GET', `${BASE}/ops/Op/versions/${anon.digest}`))).code).toContain('Code-capture unavailable');
    // Under /traces/… too (the SDK's trace-server URL under WANDB_BASE_URL).
    expect(await ok(send(c, 'GET', `/traces${BASE}/ops/my_op/versions/${v0.digest}`))).toEqual(read);

    const all = lines(await send(c, 'GET', `${BASE}/ops`));
    expect(all.map((o) => `${o.object_id}:${o.version_index}`)).toEqual(['Op:0', 'my_op:1', 'my_op:0']);
    const page = lines(await send(c, 'GET', `${BASE}/ops?limit=1&offset=1`));
    expect(page.map((o) => o.digest)).toEqual([v1.digest]);

    expect(await ok(send(c, 'DELETE', `${BASE}/ops/my_op?digests=${v0.digest}`))).toEqual({ num_deleted: 1 });
    const gone = await send(c, 'GET', `${BASE}/ops/my_op/versions/${v0.digest}`);
    expect(gone.status).toBe(404);
    expect(gone.body.deleted_at).toEqual(ISO);
    expect(await ok(send(c, 'DELETE', `${BASE}/ops/my_op`))).toEqual({ num_deleted: 1 });
    expect((await send(c, 'DELETE', `${BASE}/ops/my_op`)).status).toBe(404);
    expect((await send(c, 'GET', `${BASE}/ops/nope/versions/abc`)).status).toBe(404);
    expect(lines(await send(c, 'GET', `${BASE}/ops`)).map((o) => o.object_id)).toEqual(['Op']);
  });

  it('datasets: rows become a table; read, list and delete by the Dataset route only', async () => {
    const c = as(alice);
    const ds = await ok(send(c, 'POST', `${BASE}/datasets`, { name: 'People', description: 'who', rows: [{ name: 'Ada', score: 1.5 }] }));
    expect(ds).toMatchObject({ object_id: 'people', version_index: 0 });
    const read = await ok(send(c, 'GET', `${BASE}/datasets/people/versions/${ds.digest}`));
    expect(read).toEqual({
      object_id: 'people',
      digest: ds.digest,
      version_index: 0,
      created_at: ISO,
      name: 'People',
      description: 'who',
      rows: expect.stringMatching(new RegExp(`^weave:///${P}/table/`)),
    });
    // The rows are the table's, as any client reads them.
    const table = await ok(send(c, 'POST', '/table/query', { project_id: P, digest: read.rows.split('/').pop() }));
    expect(table.rows.map((r: any) => r.val)).toEqual([{ name: 'Ada', score: 1.5 }]);
    // An op is no Dataset.
    const op = await ok(send(c, 'POST', `${BASE}/ops`, { name: 'people_op' }));
    expect((await send(c, 'GET', `${BASE}/datasets/people_op/versions/${op.digest}`)).status).toBe(404);
    expect(lines(await send(c, 'GET', `${BASE}/datasets`)).map((d) => d.name)).toEqual(['People']);
    expect((await send(c, 'DELETE', `${BASE}/datasets/people_op`)).status).toBe(404);
    expect(await ok(send(c, 'DELETE', `${BASE}/datasets/people`))).toEqual({ num_deleted: 1 });
    expect(lines(await send(c, 'GET', `${BASE}/datasets`))).toEqual([]);
  });

  it('scorers, models and evaluations: their refs, members and ops', async () => {
    const c = as(alice);
    const scorer = await ok(
      send(c, 'POST', `${BASE}/scorers`, { name: 'Exact', op_source_code: 'def score(output, target):\n    return output == target\n' }),
    );
    expect(scorer).toEqual({
      digest: expect.any(String),
      object_id: 'exact',
      version_index: 0,
      scorer: `weave:///${P}/object/exact:${scorer.digest}`,
    });
    const s = await ok(send(c, 'GET', `${BASE}/scorers/exact/versions/${scorer.digest}`));
    expect(s).toMatchObject({
      name: 'Exact',
      description: null,
      score_op: expect.stringMatching(new RegExp(`^weave:///${P}/op/exact_score:`)),
    });
    const scoreOpDigest = s.score_op.split(':').pop();
    expect((await ok(send(c, 'GET', `${BASE}/ops/exact_score/versions/${scoreOpDigest}`))).code).toContain('return output == target');

    const model = await ok(
      send(c, 'POST', `${BASE}/models`, {
        name: 'Echo Model',
        source_code: 'class Echo: ...\n',
        attributes: { temperature: 0.7, prompt: 'hi' },
      }),
    );
    expect(model.model_ref).toBe(`weave:///${P}/object/echo_model:${model.digest}`);
    expect(await ok(send(c, 'GET', `${BASE}/models/echo_model/versions/${model.digest}`))).toEqual({
      object_id: 'echo_model',
      digest: model.digest,
      version_index: 0,
      created_at: ISO,
      name: 'Echo Model',
      description: null,
      source_code: 'class Echo: ...\n',
      attributes: { temperature: 0.7, prompt: 'hi' },
    });

    const ds = await ok(send(c, 'POST', `${BASE}/datasets`, { name: 'qa', rows: [{ q: 'a' }] }));
    const dsRef = `weave:///${P}/object/qa:${ds.digest}`;
    const ev = await ok(send(c, 'POST', `${BASE}/evaluations`, { name: 'QA eval', dataset: dsRef, scorers: [scorer.scorer], trials: 2 }));
    expect(ev.evaluation_ref).toBe(`weave:///${P}/object/qa_eval:${ev.digest}`);
    const e = await ok(send(c, 'GET', `${BASE}/evaluations/qa_eval/versions/${ev.digest}`));
    expect(e).toMatchObject({ name: 'QA eval', dataset: dsRef, scorers: [scorer.scorer], trials: 2, evaluation_name: null });
    expect(e.evaluate_op).toMatch(new RegExp(`^weave:///${P}/op/qa_eval.evaluate:`));
    expect(lines(await send(c, 'GET', `${BASE}/evaluations`)).map((x) => x.object_id)).toEqual(['qa_eval']);
    expect(lines(await send(c, 'GET', `${BASE}/models?limit=0`))).toEqual([]);
    expect(await ok(send(c, 'DELETE', `${BASE}/evaluations/qa_eval?digests=${ev.digest}`))).toEqual({ num_deleted: 1 });
  });

  it('refuses bad input with a 4xx naming the field', async () => {
    const c = as(alice);
    const cases: [string, string, unknown, string][] = [
      ['POST', `${BASE}/datasets`, { name: 'x' }, 'rows'],
      ['POST', `${BASE}/datasets`, { name: 'x', rows: [1] }, 'rows[0]'],
      ['POST', `${BASE}/scorers`, { name: 's' }, 'op_source_code'],
      ['POST', `${BASE}/models`, { name: '!!!', source_code: 'x' }, 'name'],
      ['POST', `${BASE}/models`, { name: 'm', source_code: 'x', attributes: [1] }, 'attributes'],
      ['POST', `${BASE}/evaluations`, { name: 'e', dataset: 'not a ref' }, 'dataset'],
      ['POST', `${BASE}/evaluations`, { name: 'e', dataset: `weave:///${ENTITY}/other/object/d:abc` }, 'dataset'],
      ['POST', `${BASE}/ops`, { name: 'x', project_id: `${ENTITY}/other` }, 'project_id'],
      ['GET', `${BASE}/ops?limit=-1`, undefined, 'limit'],
      ['GET', `${BASE}/ops?limit=many`, undefined, 'limit'],
      ['POST', `${BASE}/scores`, { prediction_id: 'p', scorer: 'weave:///acme/v2/object/s:d', value: 'high' }, 'value'],
      ['POST', `${BASE}/predictions`, { model: 'm', inputs: 'x', output: 1 }, 'inputs'],
      ['DELETE', `${BASE}/scores`, undefined, 'score_ids'],
    ];
    for (const [method, path, body, field] of cases) {
      const r = await send(c, method, path, body);
      expect(r.status, `${method} ${path} ${r.text}`).toBeGreaterThanOrEqual(400);
      expect(r.status, `${method} ${path} ${r.text}`).toBeLessThan(500);
      expect(r.body.field, `${method} ${path} ${r.text}`).toBe(field);
    }
  });

  it("refuses another entity's projects and refs (403), whatever the method", async () => {
    const c = as(outsider);
    for (const [method, path, body] of [
      ['POST', `${BASE}/ops`, { name: 'x' }],
      ['GET', `${BASE}/ops`, undefined],
      ['GET', `${BASE}/datasets/people/versions/abc`, undefined],
      ['DELETE', `${BASE}/models/echo_model`, undefined],
      ['GET', `${BASE}/evaluation_runs`, undefined],
      ['DELETE', `${BASE}/predictions?prediction_ids=x`, undefined],
    ] as const) {
      const r = await send(c, method, path, body);
      expect(r.status, `${method} ${path}`).toBe(403);
    }
    // A member of globex may not point its own objects at acme's.
    const r = await send(c, 'POST', '/v2/globex/p/evaluations', { name: 'e', dataset: `weave:///${P}/object/qa:abc` });
    expect(r.status).toBe(403);
  });
});

describe('V2 evaluation runs, predictions and scores', () => {
  it('a run with predictions and scores is the call tree of Evaluation.evaluate', async () => {
    const c = as(alice);
    const model = await ok(send(c, 'POST', `${BASE}/models`, { name: 'RunModel', source_code: 'x\n' }));
    const scorer = await ok(send(c, 'POST', `${BASE}/scorers`, { name: 'correct', op_source_code: 'def score(output): ...\n' }));
    const ds = await ok(send(c, 'POST', `${BASE}/datasets`, { name: 'run_ds', rows: [{ q: 1 }, { q: 2 }] }));
    const ev = await ok(send(c, 'POST', `${BASE}/evaluations`, { name: 'run_eval', dataset: `weave:///${P}/object/run_ds:${ds.digest}` }));

    const { evaluation_run_id: runId } = await ok(
      send(c, 'POST', `${BASE}/evaluation_runs`, { evaluation: ev.evaluation_ref, model: model.model_ref }),
    );
    const run = await ok(send(c, 'GET', `${BASE}/evaluation_runs/${runId}`));
    expect(run).toEqual({
      evaluation_run_id: runId,
      evaluation: ev.evaluation_ref,
      model: model.model_ref,
      status: 'running',
      started_at: ISO,
      finished_at: null,
      summary: null,
    });

    const predictions: string[] = [];
    for (const [q, output, value] of [
      [1, 2, 1.0],
      [2, 5, 0.5],
    ] as const) {
      const { prediction_id } = await ok(
        send(c, 'POST', `${BASE}/predictions`, { model: model.model_ref, inputs: { q }, output, evaluation_run_id: runId }),
      );
      predictions.push(prediction_id);
      const score = await ok(send(c, 'POST', `${BASE}/scores`, { prediction_id, scorer: scorer.scorer, value, evaluation_run_id: runId }));
      expect(await ok(send(c, 'GET', `${BASE}/scores/${score.score_id}`))).toEqual({
        score_id: score.score_id,
        scorer: scorer.scorer,
        value,
        evaluation_run_id: runId,
        wb_user_id: alice.user_id,
      });
      expect(await ok(send(c, 'POST', `${BASE}/predictions/${prediction_id}/finish`, { project_id: P, prediction_id }))).toEqual({
        success: true,
      });
    }
    expect(await ok(send(c, 'GET', `${BASE}/predictions/${predictions[0]}`))).toEqual({
      prediction_id: predictions[0],
      model: model.model_ref,
      inputs: { q: 1 },
      output: 2,
      evaluation_run_id: runId,
      wb_user_id: alice.user_id,
    });
    expect(lines(await send(c, 'GET', `${BASE}/predictions?evaluation_run_id=${runId}`)).map((p) => p.prediction_id)).toEqual(predictions);
    expect(lines(await send(c, 'GET', `${BASE}/scores?evaluation_run_id=${runId}&limit=1`))).toHaveLength(1);

    expect(await ok(send(c, 'POST', `${BASE}/evaluation_runs/${runId}/finish`, { summary: { note: 'done' } }))).toEqual({ success: true });
    const finished = await ok(send(c, 'GET', `${BASE}/evaluation_runs/${runId}`));
    expect(finished).toMatchObject({ status: 'completed', finished_at: ISO, summary: expect.objectContaining({ note: 'done' }) });

    // The calls, as the UI reads them: run → predict_and_score → predict + score; the summarize call with the means.
    const res = await send(c, 'POST', '/calls/stream_query', { project_id: P, filter: { trace_ids: [runId] } });
    const calls = lines(res);
    const byOp = (name: string) => calls.filter((x) => x.op_name.includes(`/${name}:`) || x.op_name === name);
    expect(byOp('Evaluation.evaluate')).toHaveLength(1);
    const pas = byOp('Evaluation.predict_and_score');
    expect(pas).toHaveLength(2);
    expect(pas[0].parent_id).toBe(runId);
    expect(pas[0].output).toEqual({ output: 2, scores: { correct: 1 }, model_latency: { mean: expect.any(Number) } });
    expect(
      byOp('runmodel.predict')
        .map((x) => x.parent_id)
        .sort(),
    ).toEqual(pas.map((x) => x.id).sort());
    expect(byOp('correct.score')).toHaveLength(2);
    const summarize = byOp('Evaluation.summarize');
    expect(summarize[0].output).toEqual({ correct: { mean: 0.75 }, output: { mean: 3.5 } });
    expect(calls.find((x) => x.id === runId).output).toEqual(summarize[0].output);
    // A score is feedback on its prediction as well.
    const fb = await ok(send(c, 'POST', '/feedback/query', { project_id: P }));
    expect(fb.result.filter((f: any) => f.feedback_type === 'wandb.runnable.correct')).toHaveLength(2);

    // Runs are listed and filtered by model; deleting a run deletes its tree.
    const other = await ok(send(c, 'POST', `${BASE}/evaluation_runs`, { evaluation: ev.evaluation_ref, model: 'my-own-model-name' }));
    expect(lines(await send(c, 'GET', `${BASE}/evaluation_runs`)).map((r) => r.evaluation_run_id)).toEqual([
      runId,
      other.evaluation_run_id,
    ]);
    const byModel = lines(await send(c, 'GET', `${BASE}/evaluation_runs?model_refs=${encodeURIComponent(model.model_ref)}`));
    expect(byModel.map((r) => r.evaluation_run_id)).toEqual([runId]);
    const deleted = await ok(send(c, 'DELETE', `${BASE}/evaluation_runs?evaluation_run_ids=${runId}`));
    expect(deleted.num_deleted).toBe(1 + 2 * 3 + 1);
    expect((await send(c, 'GET', `${BASE}/evaluation_runs/${runId}`)).status).toBe(404);
    expect(lines(await send(c, 'GET', `${BASE}/predictions`))).toEqual([]);
  });

  it('standalone predictions and scores: read, list, delete; unknown ids are 404 or the field named', async () => {
    const c = as(alice);
    const model = `weave:///${P}/object/standalone:abc`;
    const ids: string[] = [];
    for (const i of [0, 1])
      ids.push((await ok(send(c, 'POST', `${BASE}/predictions`, { model, inputs: { i }, output: null }))).prediction_id);
    const p = await ok(send(c, 'GET', `${BASE}/predictions/${ids[0]}`));
    expect(p).toMatchObject({ output: null, evaluation_run_id: null, inputs: { i: 0 } });
    const score = await ok(send(c, 'POST', `${BASE}/scores`, { prediction_id: ids[0], scorer: `weave:///${P}/object/s:d`, value: 3 }));
    expect(lines(await send(c, 'GET', `${BASE}/scores`)).map((s) => s.score_id)).toEqual([score.score_id]);
    expect(await ok(send(c, 'DELETE', `${BASE}/scores?score_ids=${score.score_id}`))).toEqual({ num_deleted: 1 });
    expect(await ok(send(c, 'DELETE', `${BASE}/predictions?prediction_ids=${ids[0]}&prediction_ids=${ids[1]}`))).toEqual({
      num_deleted: 2,
    });

    expect((await send(c, 'GET', `${BASE}/predictions/nope`)).status).toBe(404);
    expect((await send(c, 'GET', `${BASE}/scores/nope`)).status).toBe(404);
    expect((await send(c, 'POST', `${BASE}/evaluation_runs/nope/finish`, {})).status).toBe(404);
    const noRun = await send(c, 'POST', `${BASE}/predictions`, { model, inputs: {}, output: 1, evaluation_run_id: 'nope' });
    expect([noRun.status, noRun.body.field]).toEqual([400, 'evaluation_run_id']);
    const noPrediction = await send(c, 'POST', `${BASE}/scores`, { prediction_id: 'nope', scorer: `weave:///${P}/object/s:d`, value: 1 });
    expect([noPrediction.status, noPrediction.body.field]).toEqual([400, 'prediction_id']);
  });
});

describe("the Weave SDK's own client (0.54)", () => {
  it('drives every V2 API: objects, a run with a prediction and a score, the lists with its query strings', async () => {
    const project = `${ENTITY}/sdk`;
    const r: any = await runWeaveScript('v2-apis.py', [], { baseUrl: weft.url, apiKey: alice.key, project });
    expect(r.op).toEqual({ digest: expect.any(String), object_id: 'sdk_op', version_index: 0 });
    expect(r.op_read.code).toBe('def sdk_op():\n    return 1\n');
    // The scorer's and the evaluation's ops are ops of the project too.
    expect(r.ops).toEqual(expect.arrayContaining(['sdk_op', 'sdk_scorer_score', 'sdk_eval.evaluate']));
    expect(r.dataset).toMatchObject({ name: 'SDK Dataset', object_id: 'sdk_dataset', rows: expect.stringMatching(/\/table\//) });
    expect(r.model).toMatchObject({ name: 'SdkModel', source_code: 'class SdkModel: ...\n', attributes: { temperature: 0.5 } });
    expect(r.evaluation).toMatchObject({ name: 'sdk_eval', trials: 1, scorers: [expect.stringMatching(/object\/sdk_scorer:/)] });
    expect(r.run).toMatchObject({ evaluation_run_id: r.run_id, status: 'completed', summary: expect.objectContaining({ by: 'sdk' }) });
    expect(r.runs).toEqual([r.run_id]);
    expect(r.prediction).toMatchObject({ inputs: { q: '2+2' }, output: '4', evaluation_run_id: r.run_id, wb_user_id: alice.user_id });
    expect(r.scores).toEqual([expect.objectContaining({ score_id: r.score_id, value: 1, evaluation_run_id: r.run_id })]);
    expect(r.op_deleted).toEqual({ num_deleted: 1 });
    // The run, its predict_and_score, predict and score calls, and its summarize call.
    expect(r.runs_deleted).toEqual({ num_deleted: 5 });
  }, 180_000);
});
