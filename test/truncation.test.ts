import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from './helpers/client';
import { startWeft, type RunningWeft } from './helpers/server';

// Values over WEFT_MAX_VALUE_BYTES are stored truncated with a marker, the call accepted, on
// every entrance; the upsert batch's two paths (serving thread, ingest worker) store the same.
const MAX = 64 * 1024;
const TS = '2024-06-01T00:00:00Z';
const BIG_IN = 'i'.repeat(200_000);
const BIG_ATTR = 'a'.repeat(100_000);
const BIG_OUT = 'o'.repeat(300_000);

interface Marker {
  _weft_truncated: true;
  original_bytes: number;
  preview: string;
}

function expectMarker(v: unknown, sent: string): void {
  const m = v as Marker;
  expect(m._weft_truncated).toBe(true);
  expect(m.original_bytes).toBe(sent.length + 2);
  expect(m.preview.length).toBeGreaterThan(1000);
  expect(sent.startsWith(m.preview)).toBe(true);
}

for (const workers of ['0', '1']) {
  describe(`WEFT_INGEST_WORKERS=${workers}`, () => {
    let weft: RunningWeft;
    let api: Client;
    const P = `acme/truncation-${workers}`;
    beforeAll(async () => {
      weft = await startWeft({ env: { WEFT_MAX_VALUE_BYTES: String(MAX), WEFT_INGEST_WORKERS: workers } });
      api = new Client(weft.url);
    });
    afterAll(async () => {
      await weft?.stop();
    });

    const calls = async () => {
      const rows = await api.jsonl('/calls/stream_query', { project_id: P, sort_by: [{ field: 'op_name', direction: 'asc' }] });
      return new Map(rows.map((c) => [c.op_name as string, c]));
    };

    it('upsert batch, call start/end and OTLP: oversized values stored as markers, the rest intact, the calls accepted', async () => {
      const start = (id: string, op: string) => ({
        project_id: P,
        id,
        trace_id: id,
        op_name: op,
        started_at: TS,
        inputs: { big: BIG_IN, small: 'kept', nested: { n: 1 } },
        attributes: { blob: BIG_ATTR, tag: 't' },
      });
      const end = (id: string) => ({ project_id: P, id, ended_at: TS, output: { text: BIG_OUT, n: 7 }, summary: {} });
      const batch = await api.post('/call/upsert_batch', {
        batch: [
          { mode: 'start', req: { start: start('01900000-0000-7000-8000-000000000001', 'batch') } },
          { mode: 'end', req: { end: end('01900000-0000-7000-8000-000000000001') } },
        ],
      });
      expect(batch.status, batch.text).toBe(200);
      expect((await api.post('/call/start', { start: start('01900000-0000-7000-8000-000000000002', 'single') })).status).toBe(200);
      const single = await api.post('/call/end', {
        end: { project_id: P, id: '01900000-0000-7000-8000-000000000002', ended_at: TS, output: BIG_OUT, summary: {} },
      });
      expect(single.status).toBe(200);
      const otlp = await api.raw(
        '/otel/v1/traces',
        JSON.stringify({
          resourceSpans: [
            {
              resource: { attributes: [] },
              scopeSpans: [
                {
                  scope: { name: 's' },
                  spans: [
                    {
                      traceId: '0af7651916cd43dd8448eb211c80319c',
                      spanId: 'b7ad6b7169203331',
                      name: 'otlp',
                      startTimeUnixNano: '1714564800000001000',
                      endTimeUnixNano: '1714564800500002000',
                      attributes: [
                        { key: 'input.value', value: { stringValue: BIG_IN } },
                        { key: 'output.value', value: { stringValue: BIG_OUT } },
                      ],
                    },
                  ],
                },
              ],
            },
          ],
        }),
        { project_id: P },
      );
      expect(otlp.status, otlp.text).toBe(200);

      const byOp = await calls();
      const b = byOp.get('batch');
      expectMarker(b.inputs.big, BIG_IN);
      expect(b.inputs.small).toBe('kept');
      expect(b.inputs.nested).toEqual({ n: 1 });
      expectMarker(b.attributes.blob, BIG_ATTR);
      expect(b.attributes.tag).toBe('t');
      expectMarker(b.output.text, BIG_OUT);
      expect(b.output.n).toBe(7);
      const s = byOp.get('single');
      expectMarker(s.inputs.big, BIG_IN);
      // A string output is marked as a whole.
      expectMarker(s.output, BIG_OUT);
      // The span's values: nothing of them is stored whole, anywhere in the call.
      const o = byOp.get('otlp');
      expect(o).toBeDefined();
      const text = JSON.stringify(o);
      expect(text).toContain('"_weft_truncated":true');
      expect(text.length).toBeLessThan(BIG_IN.length);
    });

    it('values within the limit are stored exactly as sent', async () => {
      const id = '01900000-0000-7000-8000-000000000009';
      const inputs = { exact: 'e'.repeat(MAX - 100) };
      const r = await api.post('/call/upsert_batch', {
        batch: [{ mode: 'start', req: { start: { project_id: P, id, trace_id: id, op_name: 'within', started_at: TS, inputs } } }],
      });
      expect(r.status).toBe(200);
      expect((await calls()).get('within').inputs).toEqual(inputs);
    });
  });
}
