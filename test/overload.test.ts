import { afterAll, describe, expect, inject, it } from 'vitest';
import { memoryOf, runLoad, type LoadOutcome } from '@weft/harness';
import { eventually, pipeline, queriedIds } from './helpers/pipeline';
import { startWeft, type RunningWeft } from './helpers/server';

// Overload (issue 19): clients that retry without waiting must not collapse throughput, what is
// refused must not be stored, and memory stays bounded. Rates are compared within one run
// (a shared 2-core machine: absolute figures mean little), with generous margins.
const running: RunningWeft[] = [];
afterAll(async () => {
  await Promise.all(running.map((w) => w.kill()));
});

/** ~470 KB bodies (200 calls of ~2.4 KB), as in the fault-injection run that found the collapse. */
const BODY = { callsPerRequest: 200, callBytes: 2400 };
const SECONDS = 8;
/** The bound the run used: ~17 such bodies in flight. */
const TIGHT = { WEFT_BUS_MAX_PENDING_BYTES: String(8 * 1024 * 1024) };

function describeRun(name: string, r: LoadOutcome): string {
  return `${name}: ${r.ackedCalls} calls acknowledged in ${r.seconds}s, ${r.refusals} refusals of ${r.attempts} attempts, errors ${JSON.stringify([...r.errors])}, reasons ${JSON.stringify([...r.refusalReasons])}`;
}

/** Polite 8 clients, then 128 clients retrying 50 ms after every 503; every refused call absent from the store. */
async function overloadRun(writeUrl: string, readUrl: string, project: string): Promise<void> {
  const base = { url: writeUrl, project, seconds: SECONDS, ...BODY };
  const polite = await runLoad({ ...base, clients: 8, behaviour: 'polite' });
  const aggressive = await runLoad({ ...base, clients: 128, behaviour: 'aggressive', retryDelayMs: 50 });
  const report = `${describeRun('8 polite', polite)}\n${describeRun('128 aggressive', aggressive)}`;
  console.log(report);
  expect(polite.ackedCalls, report).toBeGreaterThan(0);
  // The aggressive clients were refused (the bound is reached), and cheaply enough that the
  // acknowledged rate holds.
  expect(aggressive.refusals, report).toBeGreaterThan(0);
  expect(aggressive.ackedCalls / polite.ackedCalls, report).toBeGreaterThanOrEqual(0.7);
  // Every refusal says "not stored": it was decided before the body was read.
  for (const reason of aggressive.refusalReasons.keys()) expect(reason, report).toMatch(/not stored/);
  expect([...aggressive.errors.keys()], report).toEqual([]);

  const acked = [...polite.ackedIds, ...aggressive.ackedIds];
  let stored = new Set<string>();
  await eventually(
    async () => {
      stored = new Set(await queriedIds(readUrl, project));
      return acked.every((id) => stored.has(id));
    },
    120_000,
    'every acknowledged call queryable',
  );
  const refusedButStored = [...polite.refusedIds, ...aggressive.refusedIds].filter((id) => stored.has(id));
  expect(refusedButStored.length, report).toBe(0);
  expect(stored.size).toBe(acked.length);
}

describe('under clients that retry without waiting', () => {
  it('all-in-one: 128 aggressive clients keep ≥ 0.7 of the 8-client rate, and nothing refused is stored', async () => {
    const weft = await startWeft({ env: { ...TIGHT } });
    running.push(weft);
    await overloadRun(weft.url, weft.url, 'acme/overload-aio');
  }, 240_000);

  it('Kafka mode: 128 aggressive clients keep ≥ 0.7 of the 8-client rate, and nothing refused is stored', async () => {
    const p = pipeline(inject('kafkaBrokers'), 'overload', { ...TIGHT });
    const [gateway, writer] = await Promise.all([p.startGateway(), p.startWriter()]);
    running.push(gateway, writer);
    await overloadRun(gateway.url, writer.url, 'acme/overload-kafka');
  }, 300_000);
});

/** The documented bound (docs/operations.md): peak RSS with the defaults, engine included. */
const RSS_BOUND_MIB = 2048;

describe('memory under 200 clients × 1 MB bodies', () => {
  it('all-in-one with the default limits keeps its peak RSS under the documented bound', async () => {
    const weft = await startWeft({});
    running.push(weft);
    const r = await runLoad({
      url: weft.url,
      project: 'acme/overload-rss',
      seconds: 12,
      clients: 200,
      callsPerRequest: 400,
      callBytes: 2500,
      behaviour: 'aggressive',
      retryDelayMs: 50,
    });
    const mem = memoryOf(weft.proc.pid!);
    const report = `${describeRun('200 × 1 MB', r)}; body ${Math.round(r.bodyBytes / 1024)} KB; peak RSS ${Math.round(mem.peakRssMiB)} MiB`;
    console.log(report);
    expect(r.bodyBytes).toBeGreaterThan(900 * 1024);
    expect(r.ackedCalls, report).toBeGreaterThan(0);
    expect([...r.errors.keys()], report).toEqual([]);
    expect(mem.peakRssMiB, report).toBeLessThan(RSS_BOUND_MIB);
  }, 180_000);
});
