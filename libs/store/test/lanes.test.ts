import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inLane, isLimitExceeded, isRetryable } from '@weft/core';
import { openStore, type Store } from '../src/connection';
import { defaultLaneOptions, type LaneOptions, YIELD_WINDOW_MS } from '../src/lanes';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function storeWith(change: (o: LaneOptions) => void = () => undefined): Store {
  const dir = mkdtempSync(join(tmpdir(), 'weft-lanes-'));
  dirs.push(dir);
  const lanes = defaultLaneOptions();
  change(lanes);
  return openStore({ dataDir: dir, lanes });
}

/** A statement that keeps a core busy for seconds; bound, as every statement of weft is. */
const LONG = 'SELECT count() FROM numbers({n:UInt64}) WHERE sipHash64(number) % 7 = {r:UInt8}';
const SMALL = 'SELECT count() AS c FROM numbers({n:UInt64}) WHERE number % {m:UInt64} = 0';

const timed = async (work: () => Promise<unknown>) => {
  const started = performance.now();
  await work();
  return performance.now() - started;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Five small reads, one after another, begun while two long statements run in `longLane`: the first's time and the median. */
async function smallUnderTwoLong(store: Store, longLane: 'heavy' | 'interactive', n: number): Promise<{ first: number; median: number }> {
  const abort = new AbortController();
  const long = [1, 2].map((r) =>
    store.rows(LONG, { n, r }, { name: 'lanes.long', lane: longLane, signal: abort.signal }).catch(() => undefined),
  );
  await new Promise((r) => setTimeout(r, 300));
  const times: number[] = [];
  for (let i = 0; i < 5; i++) times.push(await timed(() => store.rows(SMALL, { n: 100_000, m: 7 }, { name: 'lanes.small' })));
  abort.abort();
  await Promise.all(long);
  return { first: times[0]!, median: median(times) };
}

describe('engine lanes (embedded)', () => {
  it('a small read answers beside two long heavy statements; on one shared lane it waits behind them', async () => {
    const store = storeWith();
    let alone: number, lanes: { first: number; median: number };
    try {
      alone = median(await Promise.all([0, 1, 2].map(() => timed(() => store.rows(SMALL, { n: 100_000, m: 7 })))));
      lanes = await smallUnderTwoLong(store, 'heavy', 5_000_000_000);
    } finally {
      await store.close();
    }
    // Today's one lane: the long statements (a second or so each here) hold the connection the small one needs.
    const shared = storeWith((o) => (o.connections.interactive = 1));
    let oneLane: { first: number };
    try {
      oneLane = await smallUnderTwoLong(shared, 'interactive', 40_000_000);
    } finally {
      await shared.close();
    }
    expect(lanes.median).toBeLessThan(Math.max(250, alone * 5));
    expect(lanes.first).toBeLessThan(1000);
    expect(oneLane.first).toBeGreaterThan(Math.max(300, lanes.first * 3));
  });

  it("a statement whose caller went away leaves the engine's running list within 200 ms", async () => {
    const store = storeWith();
    try {
      const abort = new AbortController();
      const running = store.rows(LONG, { n: 5_000_000_000, r: 3 }, { name: 'lanes.abandoned', lane: 'heavy', signal: abort.signal });
      const listed = () =>
        store.rows<{ c: number }>("SELECT count() AS c FROM system.processes WHERE startsWith(Settings['log_comment'], 'lanes.abandoned')");
      await expect.poll(async () => (await listed())[0]!.c, { timeout: 5000, interval: 50 }).toBe(1);
      const aborted = performance.now();
      abort.abort();
      await expect(running).rejects.toMatchObject({ kind: 'aborted' });
      await expect.poll(async () => (await listed())[0]!.c, { timeout: 200, interval: 20 }).toBe(0);
      expect(performance.now() - aborted).toBeLessThan(400);
      // Its connection is free again at once: the next heavy statement does not wait behind it.
      expect(await timed(() => store.rows(SMALL, { n: 1000, m: 3 }, { lane: 'heavy' }))).toBeLessThan(200);
    } finally {
      await store.close();
    }
  });

  it('takes the lane and the signal of the work it runs for', async () => {
    const store = storeWith();
    try {
      const settingsNow = () =>
        inLane('background', () =>
          store.row<{ t: string; p: string; n: string }>(
            "SELECT getSetting('max_threads') AS t, getSetting('priority') AS p, getSetting('os_thread_priority') AS n",
          ),
        );
      // A person's read just began: the background statement yields to it (its lane's nice value).
      await inLane('interactive', () => store.rows('SELECT 1'));
      expect(await settingsNow()).toEqual({ t: 1, p: 10, n: 19 });
      // No one else's statement for longer than the window: nothing to yield to, the process's own priority.
      await new Promise((r) => setTimeout(r, YIELD_WINDOW_MS + 100));
      expect(await settingsNow()).toEqual({ t: 1, p: 10, n: 0 });
      // A statement of no work (a request's key lookup, before its route) asks no one to yield.
      await store.rows('SELECT 1');
      expect(await settingsNow()).toEqual({ t: 1, p: 10, n: 0 });
      // A heavy statement running is someone to yield to for the background lane (a lower nice value), at any age.
      const heavy = new AbortController();
      const long = store.rows(LONG, { n: 5_000_000_000, r: 1 }, { lane: 'heavy', signal: heavy.signal }).catch(() => undefined);
      await new Promise((r) => setTimeout(r, YIELD_WINDOW_MS + 100));
      expect(await settingsNow()).toEqual({ t: 1, p: 10, n: 19 });
      heavy.abort();
      await long;
      const abort = new AbortController();
      abort.abort();
      await expect(inLane('heavy', () => store.rows('SELECT 1'), abort.signal)).rejects.toMatchObject({ kind: 'aborted' });
    } finally {
      await store.close();
    }
  });

  it("a heavy statement's engine threads run at the lane's nice value, where the process may set one", async () => {
    const store = storeWith();
    const abort = new AbortController();
    try {
      // A person's read just began: the heavy statement has someone to yield to (LaneYielding).
      await store.rows('SELECT 1', undefined, { lane: 'interactive' });
      const running = store.rows(LONG, { n: 5_000_000_000, r: 5 }, { lane: 'heavy', signal: abort.signal }).catch(() => undefined);
      // The nice value is the 19th field of a thread's stat, the 17th after its name.
      const nicedThreads = () =>
        readdirSync('/proc/self/task').filter((t) => {
          const stat = readFileSync(`/proc/self/task/${t}/stat`, 'utf8');
          return Number(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[16]) === 10;
        }).length;
      const capabilities = BigInt(`0x${/CapEff:\s*(\w+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]}`);
      const mayNice = ((capabilities >> 23n) & 1n) === 1n; // CAP_SYS_NICE
      if (mayNice) await expect.poll(nicedThreads, { timeout: 5000, interval: 50 }).toBeGreaterThan(0);
      else {
        // Without the capability the engine leaves its threads as they are, and the statement runs all the same.
        await new Promise((r) => setTimeout(r, 500));
        expect(nicedThreads()).toBe(0);
      }
      // An interactive statement's threads stay at the process's own value.
      const own = await store.row<{ n: string }>("SELECT getSetting('os_thread_priority') AS n");
      expect(Number(own!.n)).toBe(0);
      abort.abort();
      await running;
      // Its threads are back at the process's value once it ends: the next statement on them may be anyone's.
      await expect.poll(nicedThreads, { timeout: 2000, interval: 50 }).toBe(0);
    } finally {
      abort.abort();
      await store.close();
    }
  });

  it("a statement past its lane's cap leaves the engine's running list: a later lane's statement is not paused behind it", async () => {
    const store = storeWith((o) => {
      o.maxSeconds.interactive = 1;
    });
    try {
      const capped = await store
        .rows(LONG, { n: 50_000_000_000, r: 3 }, { name: 'lanes.capped', lane: 'interactive' })
        .catch((e: unknown) => e);
      expect(isLimitExceeded(capped)).toBe(true);
      const listed = await store.rows<{ c: number }>(
        "SELECT count() AS c FROM system.processes WHERE startsWith(Settings['log_comment'], 'lanes.capped')",
        undefined,
        { lane: 'heavy' },
      );
      expect(listed[0]!.c).toBe(0);
      // The engine pauses a statement of a later lane (a higher \`priority\`) while an earlier lane's is listed as running.
      const background = store.rows(SMALL, { n: 20_000_000, m: 3 }, { lane: 'background' }).then(() => 'ran');
      const waited = new Promise((r) => setTimeout(() => r('still paused after 10 s'), 10_000));
      expect(await Promise.race([background, waited])).toBe('ran');
    } finally {
      await store.close();
    }
  });

  it('a statement past its lane cap is refused with what to narrow; a full lane refuses after its queue bound', async () => {
    const store = storeWith((o) => {
      o.maxSeconds.heavy = 1;
      o.connections.heavy = 1;
      o.queueMs.heavy = 300;
    });
    try {
      const first = store.rows(LONG, { n: 5_000_000_000, r: 4 }, { lane: 'heavy' }).catch((e: unknown) => e);
      await new Promise((r) => setTimeout(r, 50));
      const queued = await store.rows('SELECT 1', undefined, { lane: 'heavy' }).catch((e: unknown) => e);
      expect(isRetryable(queued)).toBe(true);
      expect(String(queued)).toMatch(/heavy lane is busy.*WEFT_LANE_QUEUE_MS/);
      const capped = await first;
      expect(isLimitExceeded(capped)).toBe(true);
      expect(String(capped)).toMatch(/heavy lane's time cap of 1 s \(WEFT_LANE_MAX_SECONDS\); narrow it/);
    } finally {
      await store.close();
    }
  });
});

describe('statement parameters (embedded)', () => {
  it('binds a parameter larger than the parser’s statement cap, and the same values as a server would', async () => {
    const store = storeWith();
    try {
      const ids = Array.from({ length: 20_000 }, (_, i) => `digest-${i}-${'x'.repeat(20)}`);
      const r = await store.row<{ n: number; last: string }>('SELECT length({ids:Array(String)}) AS n, {ids:Array(String)}[-1] AS last', {
        ids,
      });
      expect(r).toEqual({ n: 20_000, last: ids.at(-1) });
      const text = "it's a \\ back\tslash\nand ' quote";
      expect(await store.row<{ s: string }>('SELECT {s:String} AS s', { s: text })).toEqual({ s: text });
    } finally {
      await store.close();
    }
  });

  it('a session told a value once keeps it; a bound statement (which clears the session’s) has it said again', async () => {
    // One connection, so every statement runs on the same session.
    const store = storeWith((o) => (o.connections.interactive = 1));
    try {
      const small = () => store.row<{ n: number }>('SELECT {n:UInt32} AS n', { n: 7 });
      expect(await small()).toEqual({ n: 7 });
      // The same value again is not said again, and still holds.
      expect(await small()).toEqual({ n: 7 });
      const ids = Array.from({ length: 20_000 }, (_, i) => `digest-${i}-${'x'.repeat(20)}`);
      expect(await store.row('SELECT length({ids:Array(String)}) AS n', { ids })).toEqual({ n: 20_000 });
      // Without saying it again this failed: "Substitution `n` is not set".
      expect(await small()).toEqual({ n: 7 });
    } finally {
      await store.close();
    }
  });
});
