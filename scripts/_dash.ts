import { startWeft, basicAuth, HARNESS_API_KEY } from '@weft/harness';
const w = await startWeft({ dataDir: '/tmp/bench-an', env: { WEFT_ANALYTICS_FACTS_INTERVAL_MS: '2000' } });
const P = 'bench/analytics';
const base = { project_id: P, filter: {}, limit: 2000 };
const bodies: Record<string, unknown> = {
  tiny: { ...base, metrics: ['count'], from: '2024-01-10T00:00:00Z', to: '2024-01-10T00:01:00Z' },
  tinyOp: { ...base, dimensions: ['op'], metrics: ['count', 'latency_p50_ms', 'cost'], from: '2024-01-10T00:00:00Z', to: '2024-01-10T00:01:00Z' },
  totals: { ...base, metrics: ['count', 'errors', 'latency_p50_ms', 'latency_p99_ms', 'total_tokens', 'cost'] },
  timeStatus: { ...base, dimensions: ['time', 'status'], metrics: ['count'], bucket: 'auto' },
  timeLatency: { ...base, dimensions: ['time'], metrics: ['latency_p50_ms', 'latency_p99_ms'], bucket: 'auto' },
  model: { ...base, dimensions: ['model'], metrics: ['prompt_tokens', 'completion_tokens', 'cost'] },
  opStatus: { ...base, dimensions: ['op', 'status'], metrics: ['count'], top: { dimension: 'op', n: 12 } },
  op: { ...base, dimensions: ['op'], metrics: ['count', 'errors', 'latency_p50_ms', 'latency_p99_ms', 'total_tokens', 'cost'] },
};
await new Promise((r) => setTimeout(r, 8000));
try {
  for (let run = 0; run < 3; run++) {
    const line: string[] = [];
    let total = 0;
    for (const [name, body] of Object.entries(bodies)) {
      const t = performance.now();
      const res = await fetch(w.url + '/analytics/query', { method: 'POST', headers: { authorization: basicAuth(HARNESS_API_KEY), 'content-type': 'application/json' }, body: JSON.stringify(body) });
      await res.text();
      const ms = performance.now() - t; total += ms;
      line.push(`${name} ${res.status} ${ms.toFixed(0)}`);
    }
    console.log(line.join(' | '), '| total', total.toFixed(0));
  }
} finally { await w.stop(); }
