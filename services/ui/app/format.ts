import type { Call } from './types';

const zoneName = new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' });

/** The browser's time zone at that instant, as `UTC`, `GMT+2`, `GMT+5:30` or `EST`. */
export function fmtZone(d: Date): string {
  return zoneName.formatToParts(d).find((x) => x.type === 'timeZoneName')?.value ?? '';
}

/** `2026-01-01 12:00:00 GMT+1` in the browser's time zone, marked (milliseconds when asked). */
export function fmtTime(iso: string | null | undefined, ms = false): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const s = `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
  return `${ms ? `${s}.${p(d.getMilliseconds(), 3)}` : s} ${fmtZone(d)}`.trimEnd();
}

export function fmtAgo(iso: string | null | undefined): string {
  if (!iso) return '—';
  const s = (Date.now() - new Date(iso).getTime()) / 1000;
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  if (s < 86400 * 60) return `${Math.floor(s / 86400)} d ago`;
  return fmtTime(iso);
}

export function fmtMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function fmtInt(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  return n.toLocaleString('en-US');
}

/** A metric value as a user reads it: fractions as they are, to 3 significant digits. */
export function fmtMetric(v: number | null | undefined): string {
  if (v === null || v === undefined) return '—';
  if (Number.isInteger(v)) return fmtInt(v);
  return Number(v.toPrecision(3)).toString();
}

export function fmtCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined) return '—';
  if (usd === 0) return '$0';
  if (usd < 0.01) return `$${usd.toPrecision(2)}`;
  return `$${usd.toFixed(usd < 10 ? 4 : 2)}`;
}

export const micros = (iso: string) => {
  // Date keeps milliseconds; weft's times carry microseconds: keep them for the waterfall.
  const m = /\.(\d+)/.exec(iso);
  const frac = m ? Number(`0.${m[1]}`) : 0;
  return Math.floor(new Date(iso.replace(/\.\d+/, '')).getTime() / 1000) * 1e6 + Math.round(frac * 1e6);
};

export function latencyMs(c: Pick<Call, 'started_at' | 'ended_at'>): number | null {
  if (!c.ended_at) return null;
  return (micros(c.ended_at) - micros(c.started_at)) / 1000;
}

export type Status = 'error' | 'running' | 'descendant_error' | 'success';

export function callStatus(c: Pick<Call, 'exception' | 'ended_at' | 'summary'>): Status {
  if (c.exception) return 'error';
  if (!c.ended_at) return 'running';
  const weave = (c.summary?.weave ?? {}) as { status?: Status };
  if (weave.status) return weave.status;
  const counts = (c.summary?.status_counts ?? {}) as { error?: number };
  return (counts.error ?? 0) > 0 ? 'descendant_error' : 'success';
}

export interface ModelUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  requests: number;
  cost: number | null;
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** summary.usage per model, with the cost include_costs put in summary.weave.costs (null: no price known). */
export function usageByModel(c: Pick<Call, 'summary'>): Record<string, ModelUsage> {
  const usage = (c.summary?.usage ?? {}) as Record<string, Record<string, unknown>>;
  const costs = ((c.summary?.weave as Record<string, unknown> | undefined)?.costs ?? {}) as Record<string, Record<string, unknown>>;
  const out: Record<string, ModelUsage> = {};
  for (const [model, u] of Object.entries(usage)) {
    if (!u || typeof u !== 'object') continue;
    const prompt = num(u.prompt_tokens) + num(u.input_tokens);
    const completion = num(u.completion_tokens) + num(u.output_tokens);
    const k = costs[model];
    out[model] = {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: num(u.total_tokens) || prompt + completion,
      requests: num(u.requests),
      cost: k
        ? num(k.prompt_tokens_total_cost) +
          num(k.completion_tokens_total_cost) +
          num(k.cache_read_input_tokens_total_cost) +
          num(k.cache_creation_input_tokens_total_cost)
        : null,
    };
  }
  return out;
}

export function callTokens(c: Pick<Call, 'summary'>): number | null {
  const m = Object.values(usageByModel(c));
  return m.length ? m.reduce((s, u) => s + u.total_tokens, 0) : null;
}

export function callCost(c: Pick<Call, 'summary'>): number | null {
  const costs = Object.values(usageByModel(c))
    .map((u) => u.cost)
    .filter((x): x is number => x !== null);
  return costs.length ? costs.reduce((s, x) => s + x, 0) : null;
}

/** The op's short name: `weave:///e/p/op/name:digest` → `name`. */
export function opLabel(op: string): string {
  const m = /^weave:\/\/\/[^/]+\/[^/]+\/op\/([^:]+):/.exec(op);
  return m ? m[1]! : op;
}

export function callLabel(c: Pick<Call, 'op_name' | 'display_name'>): string {
  return c.display_name || opLabel(c.op_name);
}

export const shortId = (id: string) => (id.length > 12 ? `${id.slice(0, 8)}…` : id);
