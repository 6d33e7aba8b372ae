import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, microsToClickHouse, nowMicros } from '@weft/core';
import { insertEvent, logAttempts, writeDeliveries, writeProjectSetting } from '@weft/objects';
import { migrate, openStore, type Store } from '@weft/store';
import { RetentionSweeper } from '../src/retention';

/**
 * Retention of the alert tables (events, deliveries, delivery attempts) by the writer's retention
 * pass, on a real embedded store: kept WEFT_ALERTS_RETENTION_DAYS, never longer than the project
 * keeps its calls. The rows are written now; each pass's clock is moved forward instead.
 */
const DAY = 86_400_000;
const dir = mkdtempSync(join(tmpdir(), 'weft-alert-retention-'));
let store: Store;
const log = createLogger('error', { mode: 'test' });

/** One event, its delivery and one attempt in `project`. */
async function history(project: string): Promise<void> {
  const at = microsToClickHouse(nowMicros());
  const id = `ev-${project}`;
  await insertEvent(store, {
    project_id: project,
    alert: 'a',
    id,
    alert_ref: `weave:///${project}/object/a:x`,
    state: 'firing',
    value: 1,
    threshold: 0,
    muted: 0,
    body: '{}',
  });
  await writeDeliveries(store, [
    {
      project_id: project,
      event_id: id,
      channel_id: 'c',
      alert: 'a',
      status: 'sent',
      attempts: 1,
      next_attempt_at: at,
      last_code: 200,
      last_error: null,
      created_at: at,
    },
  ]);
  await logAttempts(store, [{ project_id: project, event_id: id, channel_id: 'c', alert: 'a', attempt: 1, ok: 1, code: 200, error: null }]);
}

/** Rows per alert table of `project`. */
async function rowsOf(project: string): Promise<number[]> {
  const out: number[] = [];
  for (const table of ['alert_events', 'alert_deliveries', 'alert_delivery_attempts']) {
    const r = await store.row<{ n: string }>(`SELECT count() AS n FROM ${table} WHERE project_id = {p:String}`, { p: project });
    out.push(Number(r!.n));
  }
  return out;
}

const pass = (opts: { defaultDays?: number; alertDays?: number; daysAhead: number }) =>
  new RetentionSweeper(store, log, { ...opts, intervalMs: 3_600_000, now: () => Date.now() + opts.daysAhead * DAY }).pass();

beforeAll(async () => {
  store = openStore({ dataDir: dir });
  await migrate(store);
  await writeProjectSetting(store, 'r/short', 'retention_days', 10, 'test');
  await writeProjectSetting(store, 'r/long', 'retention_days', 200, 'test');
  await writeProjectSetting(store, 'r/forever', 'retention_days', null, 'test');
  for (const p of ['r/default', 'r/short', 'r/long', 'r/forever']) await history(p);
}, 120_000);
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('alert history retention', () => {
  it('keeps events, deliveries and attempts the alert days, or the shorter retention of their project', async () => {
    const all = [1, 1, 1];
    // 5 days on: nothing is old enough.
    await pass({ alertDays: 90, daysAhead: 5 });
    for (const p of ['r/default', 'r/short', 'r/long', 'r/forever']) expect(await rowsOf(p), p).toEqual(all);

    // 50 days on: the project that keeps its calls 10 days lost its alert history; the others keep 90 days.
    await pass({ alertDays: 90, daysAhead: 50 });
    expect(await rowsOf('r/short')).toEqual([0, 0, 0]);
    for (const p of ['r/default', 'r/long', 'r/forever']) expect(await rowsOf(p), p).toEqual(all);

    // A server default of 30 days for calls applies to the alerts of projects with no retention of their own.
    await pass({ alertDays: 90, defaultDays: 30, daysAhead: 50 });
    expect(await rowsOf('r/default')).toEqual([0, 0, 0]);
    for (const p of ['r/long', 'r/forever']) expect(await rowsOf(p), p).toEqual(all);

    // 100 days on: past the alert days, even where calls are kept longer (200 days) or forever.
    await pass({ alertDays: 90, daysAhead: 100 });
    for (const p of ['r/long', 'r/forever']) expect(await rowsOf(p), p).toEqual([0, 0, 0]);

    // Physically gone, not masked, and no mutation left pending.
    const masked = await store.client.query({
      query: `SELECT count() AS n FROM alert_events SETTINGS apply_deleted_mask = 0`,
      format: 'JSONEachRow',
    });
    expect(Number((await masked.json<{ n: string }>())[0]!.n)).toBe(0);
  }, 120_000);
});
