import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceKept } from '@weft/ingest';
import { Client, bearerAuth } from './helpers/client';
import { clientFor, createKey } from './helpers/keys';
import { startModelServer, type ModelServer } from './helpers/model-server';
import { REPO_ROOT } from './helpers/paths';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';
import { runWeaveScript } from './helpers/weave-sdk';

/**
 * A project's ingest policies (Weave's /project/sensitive_data_settings and
 * /project/ingest_sampling_settings), set through the API and read by the real Weave SDK's own
 * client: redaction of sensitive values in new calls by every entrance (the SDK, OTLP, the
 * inference front), and sampling by trace id — whole traces kept or dropped, the dropped ones
 * counted in the delivery counts.
 */
const R = 'pol/redacted';
const PLAIN = 'pol/plain';
const S = 'pol/sampled';
const D = 'pol/dry-run';
const TS = '2024-06-01T00:00:00Z';
let weft: RunningWeft;
let upstream: ModelServer;
let api: Client;

interface SdkRun {
  settings: { sensitive_data: string; ingest_sampling: { sample_rate: number; dry_run: boolean }; retention_days: number | null };
  traces: { trace_id: string; root_id: string }[];
}
const sdk = (project: string, n: number) =>
  runWeaveScript<SdkRun>('ingest-policies.py', [String(n)], { baseUrl: weft.url, apiKey: 'test-key', project });

const calls = (project: string) =>
  api.jsonl<{
    id: string;
    trace_id: string;
    parent_id: string | null;
    inputs: Record<string, unknown>;
    output: unknown;
    attributes: Record<string, unknown>;
  }>('/calls/stream_query', { project_id: project });
const delivery = async (project: string) => (await api.post('/project/delivery', { project_id: project })).body.total;
const uuid = (n: number) => `0199ffff-0000-7000-8000-${String(n).padStart(12, '0')}`;

beforeAll(async () => {
  upstream = await startModelServer();
  upstream.script(() => ({ content: 'Sure, I wrote to carol@example.org.' }));
  const dataDir = newDataDir('ingest-policies');
  const upstreams = join(dataDir, 'upstreams.json');
  writeFileSync(upstreams, JSON.stringify({ upstreams: [{ name: 'vllm', base_url: `${upstream.url}/vllm/v1`, models: ['m'] }] }));
  weft = await startWeft({ dataDir, env: { WEFT_UPSTREAMS_FILE: upstreams } });
  api = new Client(weft.url);
  expect((await api.post('/admin/entities/create', { name: 'pol' })).status).toBe(200);
  expect((await api.post('/admin/entities/create', { name: 'other' })).status).toBe(200);
}, 180_000);
afterAll(async () => {
  await weft?.stop();
  await upstream?.close();
});

describe('sensitive-data redaction', () => {
  it("reads and sets a project's policy through Weave's endpoints (members of its entity; a bad policy names the field)", async () => {
    const read = await fetch(`${weft.url}/project/sensitive_data_settings?project_id=${encodeURIComponent(R)}`, {
      headers: { authorization: api.authorization! },
    });
    expect(await read.json()).toEqual({ policy: 'off' });
    const bad = await api.post('/project/sensitive_data_settings/update', { project_id: R, policy: 'all' });
    expect(bad.status).toBe(422);
    expect(bad.body.field).toBe('policy');
    const stranger = clientFor(api, await createKey(api, 'stranger', ['other']));
    expect((await stranger.post('/project/sensitive_data_settings/update', { project_id: R, policy: 'off' })).status).toBe(403);
  });

  it("redacts new calls of the project by every entrance; other projects' calls and earlier ones keep their values", async () => {
    const start = (project: string, id: string) => ({
      start: { project_id: project, id, trace_id: id, op_name: 'op', started_at: TS, inputs: { to: 'dave@example.net' }, attributes: {} },
    });
    expect((await api.post('/call/start', start(R, uuid(1)))).status).toBe(200);
    const set = await api.post('/project/sensitive_data_settings/update', { project_id: R, policy: 'pii-v1' });
    expect(set.body).toEqual({ policy: 'pii-v1' });
    expect((await api.post('/call/start', start(PLAIN, uuid(2)))).status).toBe(200);

    const run = await sdk(R, 1);
    expect(run.settings).toEqual({ sensitive_data: 'pii-v1', ingest_sampling: { sample_rate: 1, dry_run: false }, retention_days: null });
    const span = {
      traceId: '5af7651916cd43dd8448eb211c80319c',
      spanId: '5000000000000001',
      name: 'otlp-span',
      startTimeUnixNano: '1714564800000001000',
      endTimeUnixNano: '1714564800500002000',
      attributes: [
        { key: 'input.value', value: { stringValue: 'ring 415.555.0100' } },
        { key: 'user.ip', value: { stringValue: '10.1.2.3' } },
      ],
    };
    const otlp = await api.raw('/otel/v1/traces', JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] }), {
      project_id: R,
    });
    expect(otlp.status, otlp.text).toBe(200);
    const chat = new Client(weft.url, bearerAuth('test-key'));
    const done = await chat.post(
      '/v1/chat/completions',
      { model: 'm', messages: [{ role: 'user', content: 'Mail erin@example.com my IBAN GB82 WEST 1234 5698 7654 32' }] },
      { 'x-project-id': R },
    );
    expect(done.status, done.text).toBe(200);
    // The client's own answer is the model's, as it came.
    expect(done.body.choices[0].message.content).toBe('Sure, I wrote to carol@example.org.');

    const stored = await calls(R);
    const text = JSON.stringify(stored);
    for (const secret of [
      'user0@example.com',
      '415-555-0132',
      '4111 1111 1111 1111',
      '123-45-6789',
      '415.555.0100',
      '10.1.2.3',
      'erin@example.com',
      'GB82',
      'carol@example.org',
    ])
      expect(text, secret).not.toContain(secret);
    const root = stored.find((c) => c.id === run.traces[0]!.root_id)!;
    expect(root.inputs).toEqual({ request: { email: '<EMAIL_ADDRESS>', note: 'plain text stays' } });
    expect(root.output).toEqual({ answer: 'found <EMAIL_ADDRESS>: phone <PHONE_NUMBER>, card <CREDIT_CARD>', ssn: '<US_SSN>' });
    expect(text).toContain('Mail <EMAIL_ADDRESS> my IBAN <IBAN_CODE>');
    expect(text).toContain('Sure, I wrote to <EMAIL_ADDRESS>.');
    expect(text).toContain('ring <PHONE_NUMBER>');
    // Written before the policy was set: as sent. Another project: as sent.
    expect(stored.find((c) => c.id === uuid(1))!.inputs).toEqual({ to: 'dave@example.net' });
    expect((await calls(PLAIN))[0]!.inputs).toEqual({ to: 'dave@example.net' });
  }, 240_000);
});

describe('ingest sampling', () => {
  it('keeps whole traces at the rate, decided by trace id, and counts the others as sampled out', async () => {
    const set = await api.post('/project/ingest_sampling_settings/update', { project_id: S, sample_rate: 0.5 });
    expect(set.body).toEqual({ sample_rate: 0.5, dry_run: false });
    const bad = await api.post('/project/ingest_sampling_settings/update', { project_id: S, sample_rate: 1.5 });
    expect([bad.status, bad.body.field]).toEqual([422, 'sample_rate']);

    const run = await sdk(S, 30);
    expect(run.settings.ingest_sampling).toEqual({ sample_rate: 0.5, dry_run: false });
    const kept = run.traces.filter((t) => traceKept(t.trace_id, 0.5));
    expect(kept.length).toBeGreaterThan(5);
    expect(kept.length).toBeLessThan(25);
    const stored = await calls(S);
    // Each kept trace whole (its root and the child), nothing of the others.
    expect(new Set(stored.map((c) => c.trace_id))).toEqual(new Set(kept.map((t) => t.trace_id)));
    expect(stored.length).toBe(kept.length * 2);
    expect(
      stored
        .filter((c) => c.parent_id === null)
        .map((c) => c.id)
        .sort(),
    ).toEqual(kept.map((t) => t.root_id).sort());
    await expect
      .poll(() => delivery(S), { timeout: 20_000 })
      .toMatchObject({
        accepted: 30 * 4,
        stored: kept.length * 4,
        sampled_out: (30 - kept.length) * 4,
      });
  }, 240_000);

  it("an end sent apart follows its start's fate, or the trace id it names", async () => {
    const ids = Array.from({ length: 200 }, (_, i) => uuid(100 + i));
    const dropped = ids.filter((t) => !traceKept(t, 0.5));
    const keptIds = ids.filter((t) => traceKept(t, 0.5));
    const before = await delivery(S);
    const start = (id: string) => ({
      start: { project_id: S, id, trace_id: id, op_name: 'apart', started_at: TS, inputs: {}, attributes: {} },
    });
    const end = (id: string, traceId?: string) => ({
      end: { project_id: S, id, ended_at: TS, summary: {}, ...(traceId ? { trace_id: traceId } : {}) },
    });
    // A dropped start, then its end without a trace id: dropped too.
    expect((await api.post('/call/start', start(dropped[0]!))).status).toBe(200);
    expect((await api.post('/call/end', end(dropped[0]!))).status).toBe(200);
    // Ends of calls never seen here, naming their trace: a dropped trace's is dropped, a kept one's kept.
    expect((await api.post('/call/end', end(dropped[1]!, dropped[1]!))).status).toBe(200);
    expect((await api.post('/call/end', end(keptIds[0]!, keptIds[0]!))).status).toBe(200);
    // A kept start, then its end in an upsert batch.
    expect((await api.post('/call/start', start(keptIds[1]!))).status).toBe(200);
    expect((await api.post('/call/upsert_batch', { batch: [{ mode: 'end', req: end(keptIds[1]!) }] })).status).toBe(200);
    await expect
      .poll(() => delivery(S), { timeout: 20_000 })
      .toMatchObject({
        accepted: before.accepted + 6,
        sampled_out: before.sampled_out + 3,
        stored: before.stored + 3,
      });
    const apart = (await calls(S)).filter((c) => [dropped[0], keptIds[1]].includes(c.id)).map((c) => c.id);
    expect(apart).toEqual([keptIds[1]]);
  });

  it('a dry run stores every call and counts what the rate would drop; rate 1 samples nothing again', async () => {
    const set = await api.post('/project/ingest_sampling_settings/update', { project_id: D, sample_rate: 0, dry_run: true });
    expect(set.body).toEqual({ sample_rate: 0, dry_run: true });
    const batch = [1, 2, 3].flatMap((n) => [
      {
        mode: 'start',
        req: { start: { project_id: D, id: uuid(n), trace_id: uuid(n), op_name: 'op', started_at: TS, inputs: {}, attributes: {} } },
      },
      { mode: 'end', req: { end: { project_id: D, id: uuid(n), ended_at: TS, summary: {} } } },
    ]);
    expect((await api.post('/call/upsert_batch', { batch })).status).toBe(200);
    expect((await calls(D)).length).toBe(3);
    expect(await delivery(D)).toMatchObject({ accepted: 6, stored: 6, sampled_out: 0, would_sample_out: 6 });
    expect((await api.post('/project/ingest_sampling_settings/update', { project_id: D, sample_rate: 1 })).status).toBe(200);
    expect((await api.post('/project/ingest_sampling_settings/read', { project_id: D })).body).toEqual({ sample_rate: 1, dry_run: false });
  });

  it('the CLI reads and sets both through the server, and shows the delivery counts', async () => {
    const weftCli = async (...args: string[]) =>
      JSON.parse(
        (
          await promisify(execFile)(process.execPath, [join(REPO_ROOT, 'services/cli/bin/weft.mjs'), ...args], {
            env: { ...process.env, WEFT_URL: weft.url, WEFT_API_KEY: 'test-key' },
            timeout: 60_000,
          })
        ).stdout,
      ) as Record<string, unknown>;
    expect(await weftCli('redaction', R)).toEqual({ policy: 'pii-v1' });
    expect(await weftCli('redaction', D, 'pii-v1')).toEqual({ policy: 'pii-v1' });
    expect(await weftCli('sampling', D, '0.25', '--dry-run')).toEqual({ sample_rate: 0.25, dry_run: true });
    expect(await weftCli('sampling', D)).toEqual({ sample_rate: 0.25, dry_run: true });
    expect((await weftCli('delivery', D)).total).toMatchObject({ accepted: 6, stored: 6, would_sample_out: 6 });
  });
});
