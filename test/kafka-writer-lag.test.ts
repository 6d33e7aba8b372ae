import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { Client } from './helpers/client';
import { metricSeries } from '@weft/harness';
import { eventually, pipeline, postCallsUntilStopped, queriedIds } from './helpers/pipeline';
import type { RunningWeft } from './helpers/server';

// Pacing by the writers' lag (WEFT_MAX_WRITER_LAG_MS): a writer that stops absorbing (here
// SIGSTOPped: alive, in the group, writing nothing) makes the gateway answer 503 + Retry-After
// within about the bound, instead of acknowledging into a backlog that grows for as long as
// the writer is behind; once it resumes, writes are accepted again and nothing acknowledged is
// lost or doubled.
const brokers = inject('kafkaBrokers');
const running: RunningWeft[] = [];
afterAll(async () => {
  for (const w of running) if (w.proc.pid) process.kill(w.proc.pid, 'SIGCONT');
  await Promise.all(running.map((w) => w.kill()));
  for (const w of running) writeFileSync(join(w.dataDir, 'weft.log'), w.logs.map((l) => JSON.stringify(l)).join('\n'));
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('pacing by the writers lag', { timeout: 240_000 }, () => {
  it('refuses call writes with 503 + Retry-After while the writer is stalled, and accepts them again once it catches up', async () => {
    const p = pipeline(brokers, 'lag', { WEFT_MAX_WRITER_LAG_MS: '300', KAFKA_SESSION_TIMEOUT_MS: '30000' });
    const [gateway, writer] = await Promise.all([p.startGateway(), p.startWriter()]);
    running.push(gateway, writer);
    const api = new Client(gateway.url);
    const answers: { at: number; status: number; retryAfter: string | null; text: string }[] = [];
    const traffic = postCallsUntilStopped(api, 'acme/lag', 'lag', {
      pauseAfter503Ms: 50,
      onAnswer: (r) => answers.push({ at: Date.now(), status: r.status, retryAfter: r.headers.get('retry-after'), text: r.text }),
    });
    const acked = traffic.acked;
    // Flowing: writes acknowledged and written.
    await eventually(async () => acked.length >= 200, 30_000, 'first acknowledgements');

    const stalledAt = Date.now();
    process.kill(writer.proc.pid!, 'SIGSTOP');
    await sleep(6_000);
    const resumedAt = Date.now();
    process.kill(writer.proc.pid!, 'SIGCONT');
    await eventually(async () => answers.some((a) => a.at > resumedAt && a.status === 200), 60_000, 'writes accepted again');
    await traffic.stop();

    const stalled = answers.filter((a) => a.at > stalledAt && a.at <= resumedAt);
    const refusals = stalled.filter((a) => a.status === 503);
    expect(refusals.length).toBeGreaterThan(0);
    expect(refusals[0]!.text).toMatch(/writers are behind.*not stored/);
    expect(refusals[0]!.retryAfter).toBe('1');
    // Refusing within about the bound, and from then on (the writer writes nothing meanwhile):
    // no acknowledgement in the stall's last 3 s (refusing from 1.2 s; the rest is headroom for a loaded machine).
    const lateAcks = stalled.filter((a) => a.status === 200 && a.at > resumedAt - 3_000);
    expect(lateAcks).toEqual([]);
    const refused = await metricSeries(gateway.url, 'weft_admission_refused_total');
    expect(refused.find((s) => s.labels.reason === 'writer_lag')?.value ?? 0).toBeGreaterThan(0);

    // Nothing acknowledged is lost or doubled.
    await eventually(
      async () => (await queriedIds(writer.url, 'acme/lag')).length >= acked.length,
      60_000,
      'every acknowledged call written',
    );
    const ids = await queriedIds(writer.url, 'acme/lag');
    expect(ids.length).toBe(new Set(ids).size);
    expect([...ids].sort()).toEqual([...acked].sort());
  });
});
