import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from './helpers/client';
import { createKey, type TestKey } from './helpers/keys';
import { ensurePythonClients, runPythonClient } from './helpers/python-clients';
import { startWeft, type RunningWeft } from './helpers/server';

/**
 * What every OpenTelemetry guide says: OTEL_EXPORTER_OTLP_ENDPOINT=<base URL>, nothing else
 * about paths. The stock Python exporter then posts to <base>/v1/traces (the Collector's path),
 * which weft serves beside /otel/v1/traces; and when weft refuses, the exporter's own log line
 * says why.
 */
let weft: RunningWeft;
let admin: Client;
let member: TestKey;

beforeAll(async () => {
  [weft] = await Promise.all([startWeft(), ensurePythonClients()]);
  admin = new Client(weft.url);
  member = await createKey(admin, 'otel-base-url', ['acme']);
}, 900_000);
afterAll(async () => {
  await weft?.stop();
});

interface EnvExport {
  endpoint: string;
  results: string[];
  spans: { trace_id: string; span_id: string }[];
}

/** The Python SDK with its OTLP/HTTP exporter built from the environment only. */
async function exportFromEnv(project: string, spans: number, name: string) {
  const r = await runPythonClient('otel_env_export.py', [String(spans), name], {
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: weft.url,
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${member.key},project_id=${project}`,
    },
    timeoutMs: 120_000,
  });
  if (r.code !== 0) throw new Error(`otel_env_export.py exited ${r.code}\n${r.stderr}`);
  return { run: JSON.parse(r.stdout) as EnvExport, stderr: r.stderr };
}

describe('OTLP at the base URL alone', () => {
  it('stores the spans the stock exporter sends to <base>/v1/traces', async () => {
    const { run, stderr } = await exportFromEnv('acme/base-url', 12, 'base-url');
    expect(run.endpoint).toBe(`${weft.url}/v1/traces`);
    expect(run.results).toEqual(Array(12).fill('SUCCESS'));
    expect(stderr).not.toContain('Failed to export');
    const calls = await admin.jsonl('/calls/stream_query', { project_id: 'acme/base-url' });
    expect(calls.map((c) => c.id).sort()).toEqual(run.spans.map((s) => s.span_id).sort());
    expect(calls.map((c) => c.trace_id).sort()).toEqual(run.spans.map((s) => s.trace_id).sort());
  });

  it("prints weft's reason when weft refuses the export (a project outside the key's entities: 403)", async () => {
    const { run, stderr } = await exportFromEnv('globex/base-url', 1, 'refused');
    expect(run.results).toEqual(['FAILURE']);
    // The exporter logs the status and the reason phrase: weft puts its reason there.
    const line = stderr.split('\n').find((l) => l.includes('Failed to export'));
    expect(line, stderr).toMatch(/code: 403, reason: Forbidden: .*globex/);
    expect(await admin.jsonl('/calls/stream_query', { project_id: 'globex/base-url' })).toEqual([]);
  });

  it('says the reason in the body, the x-weft-error header and the challenge of a 401', async () => {
    const r = await fetch(`${weft.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer weft_not_a_key', project_id: 'acme/base-url' },
      body: '{}',
    });
    expect(r.status).toBe(401);
    const body = (await r.json()) as { reason: string; message: string };
    expect(body.reason).toBe('invalid or revoked API key');
    expect(r.headers.get('x-weft-error')).toBe(body.reason);
    expect(r.headers.get('www-authenticate')).toContain(`error_description="${body.reason}"`);
    expect(r.statusText).toBe(`Unauthorized: ${body.reason}`);
  });
});
