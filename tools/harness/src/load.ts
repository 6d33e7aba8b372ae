import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basicAuth, HARNESS_API_KEY } from './client';

/**
 * A load generator for the overload tests and bench:overload: `clients` loops posting
 * /call/upsert_batch bodies of `callsPerRequest` calls (~`callBytes` each) for `seconds`.
 * Every attempt carries fresh call ids, so what was refused can be told apart from what was
 * stored. Polite clients wait what Retry-After says after a 503/429; aggressive ones retry
 * after `retryDelayMs` whatever it says.
 */
export interface LoadOptions {
  url: string;
  project: string;
  clients: number;
  seconds: number;
  callsPerRequest: number;
  /** Rough size of one call (its start and end part together). */
  callBytes: number;
  /** 'polite': honours Retry-After. 'aggressive': retries after retryDelayMs. */
  behaviour: 'polite' | 'aggressive';
  retryDelayMs?: number;
  authorization?: string;
}

export interface LoadOutcome {
  seconds: number;
  attempts: number;
  /** Calls answered 200. */
  ackedCalls: number;
  ackedIds: string[];
  /** Attempts answered 503/429, their calls' ids, and the distinct reasons given. */
  refusals: number;
  refusedIds: string[];
  refusalReasons: Map<string, number>;
  /** Milliseconds from sending to a 503/429 answer. */
  refusalMs: number[];
  /** Milliseconds from sending to a 200. */
  ackMs: number[];
  /** Other statuses and network errors, by kind. */
  errors: Map<string, number>;
  bodyBytes: number;
}

const TAG = 'QQQQQQQQQQQQ';

/** A body template whose ids contain a 12-character placeholder, and where it occurs. */
function template(o: LoadOptions, label: string): { buf: Buffer; offsets: number[]; ids: (tag: string) => string[] } {
  const pad = 'x'.repeat(Math.max(0, Math.floor(o.callBytes / 2) - 250));
  const idOf = (tag: string, j: number) => `${label}-${tag}-${String(j).padStart(5, '0')}`;
  const batch = [];
  for (let j = 0; j < o.callsPerRequest; j++) {
    const id = idOf(TAG, j);
    batch.push(
      {
        mode: 'start',
        req: {
          start: {
            project_id: o.project,
            id,
            trace_id: id,
            op_name: 'overload.op',
            started_at: '2026-01-01T00:00:00Z',
            inputs: { prompt: pad },
            attributes: {},
          },
        },
      },
      { mode: 'end', req: { end: { project_id: o.project, id, ended_at: '2026-01-01T00:00:01Z', output: { text: pad }, summary: {} } } },
    );
  }
  const buf = Buffer.from(JSON.stringify({ batch }));
  const offsets: number[] = [];
  for (let at = buf.indexOf(TAG); at >= 0; at = buf.indexOf(TAG, at + TAG.length)) offsets.push(at);
  return { buf, offsets, ids: (tag) => Array.from({ length: o.callsPerRequest }, (_, j) => idOf(tag, j)) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runLoad(o: LoadOptions): Promise<LoadOutcome> {
  const label = randomUUID().slice(0, 8);
  const t = template(o, label);
  const out: LoadOutcome = {
    seconds: o.seconds,
    attempts: 0,
    ackedCalls: 0,
    ackedIds: [],
    refusals: 0,
    refusedIds: [],
    refusalReasons: new Map(),
    refusalMs: [],
    ackMs: [],
    errors: new Map(),
    bodyBytes: t.buf.length,
  };
  const headers = { 'content-type': 'application/json', authorization: o.authorization ?? basicAuth(HARNESS_API_KEY) };
  const count = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  let seq = 0;
  const end = Date.now() + o.seconds * 1000;
  const client = async (c: number) => {
    while (Date.now() < end) {
      const tag = (c.toString(36).padStart(3, '0') + (seq++).toString(36).padStart(9, '0')).slice(-12);
      const body = Buffer.from(t.buf);
      for (const at of t.offsets) body.write(tag, at, 'latin1');
      out.attempts++;
      const started = performance.now();
      let wait = 0;
      try {
        const res = await fetch(`${o.url}/call/upsert_batch`, { method: 'POST', headers, body });
        const text = await res.text();
        const ms = performance.now() - started;
        if (res.status === 200) {
          out.ackedCalls += o.callsPerRequest;
          out.ackMs.push(ms);
          for (const id of t.ids(tag)) out.ackedIds.push(id);
        } else if (res.status === 503 || res.status === 429) {
          out.refusals++;
          out.refusalMs.push(ms);
          for (const id of t.ids(tag)) out.refusedIds.push(id);
          let reason = text;
          try {
            reason = (JSON.parse(text) as { reason: string }).reason;
          } catch {
            /* not JSON */
          }
          count(out.refusalReasons, reason.replace(/\d+/g, 'N'));
          const retryAfter = Number(res.headers.get('retry-after') ?? 1);
          wait = o.behaviour === 'polite' ? retryAfter * 1000 : (o.retryDelayMs ?? 50);
        } else {
          count(out.errors, `status ${res.status}: ${text.slice(0, 120)}`);
          wait = 100;
        }
      } catch (e) {
        const err = e as Error & { cause?: { code?: string; message?: string } };
        count(out.errors, err.cause?.code ?? err.cause?.message ?? err.message);
        wait = o.retryDelayMs ?? 50;
      }
      if (wait > 0) await sleep(Math.min(wait, Math.max(0, end - Date.now())));
    }
  };
  await Promise.all(Array.from({ length: o.clients }, (_, c) => client(c)));
  return out;
}

export const percentile = (xs: number[], p: number): number => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

/** Peak and current resident memory of a process, from /proc (Linux). */
export function memoryOf(pid: number): { peakRssMiB: number; rssMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { peakRssMiB: kib('VmHWM') / 1024, rssMiB: kib('VmRSS') / 1024 };
}
