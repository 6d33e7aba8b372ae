/**
 * Gateway overhead of the chat completions front: the same requests sent straight to the
 * scripted model server and through weft (all-in-one, embedded store), non-streaming
 * throughput and latency at a fixed concurrency, and time to first streamed chunk.
 * Run: npx tsx bench/inference.ts
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newDataDir, startModelServer, startWeft, TEST_ROOT } from '@weft/harness';

const N = Number(process.env.BENCH_REQUESTS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);

async function run(url: string, headers: Record<string, string>, body: unknown): Promise<{ rps: number; p50: number; p99: number }> {
  const lat: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < N) {
        const s = performance.now();
        const r = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify(body),
        });
        await r.text();
        if (r.status !== 200) throw new Error(`status ${r.status}`);
        lat.push(performance.now() - s);
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  return { rps: N / secs, p50: lat[Math.floor(lat.length * 0.5)]!, p99: lat[Math.floor(lat.length * 0.99)]! };
}

async function firstChunkMs(url: string, headers: Record<string, string>, body: unknown): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 50; i++) {
    const s = performance.now();
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const reader = r.body!.getReader();
    await reader.read();
    samples.push(performance.now() - s);
    await reader.cancel();
  }
  samples.sort((a, b) => a - b);
  return samples[25]!;
}

mkdirSync(TEST_ROOT, { recursive: true });
const upstream = await startModelServer();
const dir = newDataDir('bench-inference');
const file = join(dir, 'upstreams.json');
writeFileSync(file, JSON.stringify({ upstreams: [{ name: 'v', base_url: `${upstream.url}/vllm/v1`, models: ['m'] }] }));
const weft = await startWeft({ dataDir: dir, env: { WEFT_UPSTREAMS_FILE: file } });
try {
  const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
  const auth = { authorization: 'Bearer bench' };
  const direct = await run(`${upstream.url}/vllm/v1/chat/completions`, {}, { ...body, request_id: 'x' });
  const viaWeft = await run(`${weft.url}/v1/chat/completions`, auth, body);
  const traced = await run(`${weft.url}/v1/chat/completions`, { ...auth, 'x-project-id': 'bench/inference' }, body);
  const stream = { ...body, stream: true, messages: [{ role: 'user', content: 'slow' }] };
  const ttfcDirect = await firstChunkMs(`${upstream.url}/vllm/v1/chat/completions`, {}, { ...stream, request_id: 'x' });
  const ttfcWeft = await firstChunkMs(`${weft.url}/v1/chat/completions`, auth, stream);
  const fmt = (r: { rps: number; p50: number; p99: number }) =>
    `${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms`;
  console.log(`non-streaming, ${N} requests, concurrency ${CONCURRENCY}:`);
  console.log(`  direct to the model server: ${fmt(direct)}`);
  console.log(`  through weft:               ${fmt(viaWeft)}`);
  console.log(`  through weft, traced:       ${fmt(traced)}`);
  console.log(`time to first streamed chunk (median of 50): direct ${ttfcDirect.toFixed(2)} ms, through weft ${ttfcWeft.toFixed(2)} ms`);
} finally {
  await weft.stop();
  await upstream.close();
}
