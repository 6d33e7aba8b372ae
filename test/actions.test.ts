import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from './helpers/client';
import { startModelServer, type ModelServer } from './helpers/model-server';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';

// /actions/execute_batch with both action types, the judge's model served by the model stand-in
// through weft's upstreams (WEFT_UPSTREAMS_FILE), its answers scripted per judged call.

const P = 'acme/actions';
const JUDGE_PROMPT = 'Is the answer polite? Answer as the schema says.';
let upstream: ModelServer;
let weft: RunningWeft;
let api: Client;

beforeAll(async () => {
  upstream = await startModelServer();
  const dir = newDataDir('actions');
  const file = join(dir, 'upstreams.json');
  writeFileSync(file, JSON.stringify({ upstreams: [{ name: 'judges', base_url: `${upstream.url}/vllm/v1`, models: ['judge-1'] }] }));
  weft = await startWeft({ dataDir: dir, env: { WEFT_UPSTREAMS_FILE: file } });
  api = new Client(weft.url);
  // The judge's verdict is scripted by what the judged call said.
  upstream.script((body) => {
    if (body.messages?.[0]?.content !== JUDGE_PROMPT) return undefined;
    const judged = String(body.messages[1].content);
    if (judged.includes('crash')) return { status: 503, message: 'judge overloaded' };
    if (judged.includes('ramble')) return { content: 'I think it is quite polite, really.' };
    const polite = judged.includes('please');
    const wrapped = body.response_format.json_schema.schema.properties.response !== undefined;
    return { content: JSON.stringify(wrapped ? { response: polite } : { polite, reason: polite ? 'says please' : 'curt' }) };
  });
  const calls: [string, string][] = [
    ['polite', 'yes please, gladly'],
    ['curt', 'no.'],
    ['mindful', "i've been very mindful today!!!"],
    ['rambling', 'ramble ramble'],
    ['crashing', 'crash'],
  ];
  for (const [id, output] of calls) {
    const s = await api.post('/call/start', {
      start: { project_id: P, id, op_name: 'answer', started_at: '2026-01-01T00:00:00Z', inputs: { q: `question ${id}` }, attributes: {} },
    });
    expect(s.status).toBe(200);
    const e = await api.post('/call/end', { end: { project_id: P, id, ended_at: '2026-01-01T00:00:01Z', output, summary: {} } });
    expect(e.status).toBe(200);
  }
}, 180_000);
afterAll(async () => {
  await weft?.stop();
  await upstream?.close();
});

/** Publishes an ActionSpec as the Weave SDK does (`weave.publish(ActionSpec(...))`); returns its ref. */
async function publishAction(name: string, config: Record<string, unknown>): Promise<string> {
  const r = await api.post('/obj/create', {
    obj: {
      project_id: P,
      object_id: name,
      val: { _type: 'ActionSpec', name, description: null, config, _class_name: 'ActionSpec', _bases: ['BaseObject', 'BaseModel'] },
    },
  });
  expect(r.status, r.text).toBe(200);
  return `weave:///${P}/object/${name}:${r.body.digest}`;
}

async function feedbackOf(callId: string, feedbackType: string) {
  const r = await api.post('/feedback/query', {
    project_id: P,
    query: {
      $expr: {
        $and: [
          { $eq: [{ $getField: 'weave_ref' }, { $literal: `weave:///${P}/call/${callId}` }] },
          { $eq: [{ $getField: 'feedback_type' }, { $literal: feedbackType }] },
        ],
      },
    },
  });
  expect(r.status, r.text).toBe(200);
  return r.body.result as Record<string, any>[];
}

const execute = (action_ref: string, call_ids: string[]) =>
  api.post('/actions/execute_batch', { project_id: P, action_ref, call_ids, wb_user_id: null });

describe('/actions/execute_batch', () => {
  it('contains_words: true when a word occurs in the output, stored as wandb.runnable.<name> feedback linked to the action', async () => {
    const ref = await publishAction('mindful_words', { action_type: 'contains_words', target_words: ['mindful', 'demure'] });
    const r = await execute(ref, ['mindful', 'curt', 'no-such-call']);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({});
    const [hit] = await feedbackOf('mindful', 'wandb.runnable.mindful_words');
    expect(hit).toMatchObject({ payload: { output: true }, runnable_ref: ref, feedback_type: 'wandb.runnable.mindful_words' });
    expect((await feedbackOf('curt', 'wandb.runnable.mindful_words')).map((f) => f.payload)).toEqual([{ output: false }]);
    expect(await feedbackOf('no-such-call', 'wandb.runnable.mindful_words')).toEqual([]);
  });

  it("llm_judge: the reference's request to the judge's model, its JSON answer stored as the output", async () => {
    const ref = await publishAction('politeness', {
      action_type: 'llm_judge',
      model: 'judge-1',
      prompt: JUDGE_PROMPT,
      response_schema: { type: 'boolean' },
    });
    const r = await execute(ref, ['polite', 'curt']);
    expect(r.status, r.text).toBe(200);
    expect((await feedbackOf('polite', 'wandb.runnable.politeness')).map((f) => f.payload)).toEqual([{ output: true }]);
    expect((await feedbackOf('curt', 'wandb.runnable.politeness')).map((f) => f.payload)).toEqual([{ output: false }]);

    const sent = await upstream.waitFor((q) => q.body.messages?.[1]?.content?.includes('question polite'));
    expect(sent.body.model).toBe('judge-1');
    expect(sent.body.messages).toEqual([
      { role: 'system', content: JUDGE_PROMPT },
      // Python's json.dumps of {"inputs", "output"}, as the reference sends it.
      { role: 'user', content: '{"inputs": {"q": "question polite"}, "output": "yes please, gladly"}' },
    ]);
    expect(sent.body.response_format).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'response_format',
        schema: { type: 'object', properties: { response: { type: 'boolean' } }, additionalProperties: false },
      },
    });

    // An object schema is sent as it is, and the whole answer is the output.
    const objRef = await publishAction('politeness_detail', {
      action_type: 'llm_judge',
      model: 'judge-1',
      prompt: JUDGE_PROMPT,
      response_schema: { type: 'object', properties: { polite: { type: 'boolean' }, reason: { type: 'string' } } },
    });
    expect((await execute(objRef, ['polite'])).status).toBe(200);
    expect((await feedbackOf('polite', 'wandb.runnable.politeness_detail')).map((f) => f.payload)).toEqual([
      { output: { polite: true, reason: 'says please' } },
    ]);
  });

  it('a judge answering non-JSON, failing with 5xx, or not served at all: each call gets an error with its reason', async () => {
    const ref = await publishAction('politeness_faults', {
      action_type: 'llm_judge',
      model: 'judge-1',
      prompt: JUDGE_PROMPT,
      response_schema: { type: 'boolean' },
    });
    const before = upstream.requests.length;
    const r = await execute(ref, ['rambling', 'crashing', 'polite']);
    expect(r.status, r.text).toBe(200);
    const [rambling] = await feedbackOf('rambling', 'wandb.runnable.politeness_faults');
    expect(rambling!.payload.output).toBeNull();
    expect(rambling!.payload.error).toContain('answered non-JSON: "I think it is quite polite, really."');
    const [crashing] = await feedbackOf('crashing', 'wandb.runnable.politeness_faults');
    expect(crashing!.payload.output).toBeNull();
    expect(crashing!.payload.error).toMatch(/judge model judge-1 failed: .*503.*judge overloaded/);
    // A server failure is retried, a bounded number of times (2 tries).
    const crashTries = upstream.requests.slice(before).filter((q) => q.body.messages?.[1]?.content?.includes('"crash"'));
    expect(crashTries).toHaveLength(2);
    // The other calls of the batch are judged all the same.
    expect((await feedbackOf('polite', 'wandb.runnable.politeness_faults')).map((f) => f.payload)).toEqual([{ output: true }]);

    const unserved = await publishAction('gpt_judge', {
      action_type: 'llm_judge',
      model: 'gpt-4o',
      prompt: JUDGE_PROMPT,
      response_schema: { type: 'boolean' },
    });
    expect((await execute(unserved, ['polite'])).status).toBe(200);
    expect((await feedbackOf('polite', 'wandb.runnable.gpt_judge')).map((f) => f.payload)).toEqual([
      { output: null, error: 'Model gpt-4o is not served here: no configured upstream lists it' },
    ]);
  });

  it('refuses what is no ActionSpec, another project, or too many calls, naming the field', async () => {
    const notAction = await api.post('/obj/create', { obj: { project_id: P, object_id: 'plain', val: { a: 1 } } });
    const plainRef = `weave:///${P}/object/plain:${notAction.body.digest}`;
    const r1 = await execute(plainRef, ['polite']);
    expect(r1.status).toBe(400);
    expect(r1.body.field).toBe('action_ref');
    expect(r1.body.reason).toContain('not an ActionSpec: config');
    const r2 = await execute(`weave:///${P}/call/polite`, ['polite']);
    expect(r2.status).toBe(400);
    expect(r2.body.field).toBe('action_ref');
    const r3 = await execute('weave:///acme/elsewhere/object/x:abc', ['polite']);
    expect(r3.status).toBe(400);
    expect(r3.body.field).toBe('action_ref');
    expect((await execute(`weave:///${P}/object/missing:abc`, ['polite'])).status).toBe(404);
    const r4 = await execute(
      plainRef,
      Array.from({ length: 101 }, (_, i) => `c${i}`),
    );
    expect(r4.status).toBe(422);
    expect(r4.body.field).toBe('call_ids');
    const badConfig = await publishAction('bad_judge', { action_type: 'llm_judge', prompt: 'x', response_schema: {} });
    const r5 = await execute(badConfig, ['polite']);
    expect(r5.status).toBe(400);
    expect(r5.body.reason).toContain('config.model');
  });
});
