/** The calls bench:ingest and bench:ingest-engine send: ~1.3 KB each, a start and an end. */
import { nowMicros } from '@weft/core';
import { coalesceCallParts } from '@weft/ingest';
import { endPart, startPart, type CallPartRow } from '@weft/store';

const words = 'the model answered the question about invoices with a short summary and three follow up items'.split(' ');
const text = (n: number, seed: number) => Array.from({ length: n }, (_, i) => words[(i * 7 + seed) % words.length]).join(' ');

/** One realistic call: prompt-like inputs, a completion-like output, usage in the summary (~1 KB). */
export function callItems(project: string, id: string, seed: number): unknown[] {
  return [
    {
      mode: 'start',
      req: {
        start: {
          project_id: project,
          id,
          trace_id: id,
          op_name: 'weave:///acme/bench/op/summarise:v3',
          started_at: '2026-01-01T00:00:00.000001Z',
          attributes: { env: 'bench', model: 'gpt-4o-mini', client: { sdk: 'python', version: '0.51.0' } },
          inputs: {
            messages: [
              { role: 'system', content: text(20, seed) },
              { role: 'user', content: text(45, seed + 1) },
            ],
            temperature: 0.2,
          },
        },
      },
    },
    {
      mode: 'end',
      req: {
        end: {
          project_id: project,
          id,
          ended_at: '2026-01-01T00:00:01.5Z',
          output: { choices: [{ message: { role: 'assistant', content: text(35, seed + 2) } }] },
          summary: { usage: { 'gpt-4o-mini': { prompt_tokens: 182, completion_tokens: 64, requests: 1 } } },
        },
      },
    },
  ];
}

/** Each of n calls as a start part and an end part, built with the same codecs as the gateway. */
export function sampleParts(n: number): CallPartRow[] {
  const at = nowMicros();
  const rows: CallPartRow[] = [];
  for (let i = 0; i < n; i++) {
    const [s, e] = callItems('acme/ceiling', `ceiling-${i}`, i) as [{ req: { start: never } }, { req: { end: never } }];
    const start = s.req.start as { id: string; trace_id: string };
    rows.push(startPart({ ...(s.req.start as object), id: start.id, trace_id: start.trace_id } as never, 'bench', at));
    rows.push(endPart(e.req.end, at));
  }
  return rows;
}

/**
 * The rows the modes write for n calls: each call's start and end, sent in one batch, travel
 * as one whole-call part (coalesceCallParts).
 */
export const sampleRows = (n: number): CallPartRow[] => coalesceCallParts(sampleParts(n));

/**
 * One /call/upsert_batch body of `perRequest` calls, made once; `fill` writes new call ids over
 * its fixed-width placeholders in a client's own copy. The load generator shares the cores with
 * the server it measures: building the body per request (a string replace per call, then UTF-8
 * encoding) cost it ~5 CPU-µs per call; writing the ids into bytes, well under one.
 */
export class UpsertBatchTemplate {
  /** Every id is this many ASCII characters (the placeholders and `fill`'s ids alike). */
  static readonly ID_LENGTH = 32;
  private readonly body: Buffer;
  /** Per call: where its id occurs in the body (its start's id and trace id, its end's id). */
  private readonly offsets: number[][] = [];

  constructor(project: string, perRequest: number) {
    const placeholder = (i: number) => `@${String(i).padStart(UpsertBatchTemplate.ID_LENGTH - 1, '#')}`;
    const items = Array.from({ length: perRequest }, (_, i) => callItems(project, placeholder(i), i)).flat();
    this.body = Buffer.from(JSON.stringify({ batch: items }), 'utf8');
    for (let i = 0; i < perRequest; i++) {
      const needle = Buffer.from(placeholder(i), 'latin1');
      const at: number[] = [];
      for (let o = this.body.indexOf(needle); o >= 0; o = this.body.indexOf(needle, o + needle.length)) at.push(o);
      this.offsets.push(at);
    }
  }

  /** A body of the caller's own, to refill with fresh ids per request (`fill`). */
  newBody(): Buffer {
    return Buffer.from(this.body);
  }

  /**
   * Writes into `body` (from newBody) the ids `prefix` + `i` (zero-padded to ID_LENGTH), call `i`
   * its own; returns the last call's id. A client refills one body instead of copying the template
   * per request: 130 KB of fresh memory per request kept V8's helper threads collecting as much
   * CPU as the generator's JavaScript took (docs/performance.md, "Benchmark method"). The body may be
   * refilled once its request has been answered (the server has read all of it by then).
   */
  fill(body: Buffer, prefix: string): string {
    const width = UpsertBatchTemplate.ID_LENGTH - prefix.length;
    if (width < String(this.offsets.length - 1).length) throw new Error(`id prefix too long: ${prefix}`);
    let id = '';
    for (let i = 0; i < this.offsets.length; i++) {
      id = prefix + String(i).padStart(width, '0');
      for (const o of this.offsets[i]!) body.write(id, o, 'latin1');
    }
    return id;
  }

  /** Calls per body. */
  get calls(): number {
    return this.offsets.length;
  }
}
