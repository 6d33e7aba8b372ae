import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS_DIR, launchBrowser } from './helpers/browser';
import { useWeft } from './helpers/fixture';
import { clientFor, createKey, type TestKey } from './helpers/keys';
import { seedUiProject, type Seeded } from './helpers/ui-seed';

/**
 * The Analytics view's dashboards in a real Chromium: the default one drawn from /analytics/query,
 * a chart built with the builder, the dashboard saved as an object, and reopened from its URL.
 */
const P = 'dash/shop';
let member: TestKey;
let seeded: Seeded;
let browser: Browser;
const { weft, api } = useWeft({}, async (admin) => {
  await admin.post('/admin/entities/create', { name: 'dash' });
  member = await createKey(admin, 'dash-alice', ['dash']);
  seeded = await seedUiProject(clientFor(admin, member), P);
});
beforeAll(async () => {
  browser = await launchBrowser();
}, 180_000);
afterAll(async () => {
  await browser?.close();
});

const until = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 30_000, interval: 100 });
const UI_TEST_MS = 240_000;

async function signedIn(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.on('pageerror', (e) => console.error('page error:', e.message));
  await page.goto(weft.url + '/');
  await page.getByLabel('API key').fill(member.key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
  return page;
}

describe('Analytics dashboards', () => {
  it(
    'draws the default dashboard from /analytics/query, builds a chart, saves the dashboard and reopens it from its URL',
    async () => {
      const m = clientFor(api, member);
      const page = await signedIn();
      const t0 = Date.now();
      await page.goto(weft.url + `/#/p/${P}/analytics`);
      const stat = (name: string) => page.locator(`.stat[data-stat="${name}"]`).getAttribute('data-value');
      await until(() => stat('Calls')).toBe(String(seeded.callCount));
      // The six charts of the default dashboard, each painted, and its ops table.
      const canvases = page.locator('figure.chart canvas');
      await until(() => canvases.count()).toBe(6);
      await until(() =>
        canvases.evaluateAll((els: any[]) =>
          els.every((c) => {
            const px: Uint8ClampedArray = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            let n = 0;
            for (let i = 3; i < px.length; i += 4) if (px[i]! > 0) n++;
            return n > 500;
          }),
        ),
      ).toBe(true);
      const shownMs = Date.now() - t0;
      expect(shownMs).toBeLessThan(20_000);
      const agg = (await m.post('/calls/aggregate', { project_id: P })).body;
      expect(Number(await page.locator('figure[data-chart="Cost per model"]').getAttribute('data-total'))).toBeCloseTo(agg.totals.cost, 12);
      expect(await page.locator('figure[data-chart="Calls and errors"]').getAttribute('data-total')).toBe(String(seeded.callCount));
      await expect(page.getByTestId('dashboard-state').textContent()).resolves.toContain('built-in default');
      await page.screenshot({ path: join(ARTIFACTS_DIR, 'dashboard-default.png'), fullPage: true });

      // Build a chart: total tokens by op, as bars.
      await page.getByLabel('Chart title').fill('Tokens by op');
      await page.getByLabel('Chart kind').selectOption('bar');
      await page.getByLabel('Dimension', { exact: true }).fill('op');
      await page.getByLabel('Metrics').fill('total_tokens');
      await page.getByRole('button', { name: 'Add chart' }).click();
      const built = page.locator('figure[data-chart="Tokens by op"]');
      await built.waitFor();
      const q = await m.post('/analytics/query', { project_id: P, dimensions: ['op'], metrics: ['total_tokens'] });
      const tokens = q.body.rows.reduce((s: number, r: { total_tokens: number }) => s + r.total_tokens, 0);
      expect(tokens).toBe(agg.totals.total_tokens);
      await until(() => built.getAttribute('data-total')).toBe(String(tokens));
      // Remove the latency chart, move the new one first.
      await page.getByRole('button', { name: 'Remove Latency p50 / p99' }).click();
      for (let i = 0; i < 6; i++) await page.getByRole('button', { name: 'Move Tokens by op earlier' }).click();
      await expect(page.getByTestId('dashboard-state').textContent()).resolves.toContain('unsaved');

      // Save it under a name: a versioned object, and the URL says which dashboard.
      await page.getByLabel('Dashboard name').fill('team');
      await page.getByRole('button', { name: 'Save dashboard' }).click();
      await until(() => page.getByTestId('dashboard-state').textContent()).toContain('saved, version 0');
      await until(() => page.url()).toContain('dashboard=weft-dashboard-team');
      const stored = await m.post('/obj/read', { project_id: P, object_id: 'weft-dashboard-team', digest: 'latest' });
      expect(stored.status, stored.text).toBe(200);
      expect(stored.body.obj.val.charts.map((c: { title: string }) => c.title)[0]).toBe('Tokens by op');
      expect(stored.body.obj.val.charts.map((c: { title: string }) => c.title)).not.toContain('Latency p50 / p99');
      await page.screenshot({ path: join(ARTIFACTS_DIR, 'dashboard-saved.png'), fullPage: true });

      // Reopened from its URL in another page: the same charts, in the saved order.
      const url = page.url();
      const again = await signedIn();
      await again.goto(url);
      const cards = again.locator('.chart-card');
      await until(() => cards.first().getAttribute('data-card')).toBe('Tokens by op');
      await until(() => again.locator('figure[data-chart="Tokens by op"]').getAttribute('data-total')).toBe(String(tokens));
      expect(await again.locator('figure[data-chart="Latency p50 / p99"]').count()).toBe(0);
      await until(() => again.getByTestId('dashboard-state').textContent()).toContain('saved, version 0');
      await page.close();
      await again.close();
    },
    UI_TEST_MS,
  );

  it(
    'a bad metric in a saved chart shows its 422 in that chart only, and sends one request for it',
    async () => {
      const m = clientFor(api, member);
      const val = {
        _type: 'WeftDashboard',
        _class_name: 'WeftDashboard',
        _bases: ['Object', 'BaseModel'],
        name: 'broken',
        charts: [
          { title: 'Broken', kind: 'bar', dimensions: ['op'], metrics: ['nope'] },
          { title: 'Calls', kind: 'number', dimensions: [], metrics: ['count'] },
        ],
      };
      expect((await m.post('/obj/create', { obj: { project_id: P, object_id: 'weft-dashboard-broken', val } })).status).toBe(200);
      const page = await signedIn();
      let queries = 0;
      page.on('request', (r) => {
        if (/\/analytics\/(query|batch)$/.test(r.url())) queries++;
      });
      await page.goto(weft.url + `/#/p/${P}/analytics?dashboard=weft-dashboard-broken`);
      await until(() => page.locator('figure[data-chart="Calls"]').getAttribute('data-total')).toBe(String(seeded.callCount));
      await until(() => page.locator('[data-card="Broken"]').textContent()).toContain("unknown metric 'nope'");
      await page.waitForTimeout(2000);
      // One request for the dashboard (both charts and the totals, each answered on its own): no retry loop after the error.
      expect(queries).toBe(1);
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'a bad metric in a chart merged with others: its 422 in that chart only, the others drawn, and no request more',
    async () => {
      const m = clientFor(api, member);
      const charts = [
        { title: 'Broken by op', kind: 'bar', dimensions: ['op'], metrics: ['nope'] },
        { title: 'Calls by op', kind: 'bar', dimensions: ['op'], metrics: ['count'] },
      ];
      const val = { _type: 'WeftDashboard', _class_name: 'WeftDashboard', _bases: ['Object', 'BaseModel'], name: 'half', charts };
      expect((await m.post('/obj/create', { obj: { project_id: P, object_id: 'weft-dashboard-half', val } })).status).toBe(200);
      const page = await signedIn();
      const statuses: number[] = [];
      page.on('response', (r) => {
        if (/\/analytics\/(query|batch)$/.test(r.url())) statuses.push(r.status());
      });
      await page.goto(weft.url + `/#/p/${P}/analytics?dashboard=weft-dashboard-half`);
      await until(() => page.locator('figure[data-chart="Calls by op"]').getAttribute('data-total')).toBe(String(seeded.callCount));
      await until(() => page.locator('[data-card="Broken by op"]').textContent()).toContain("unknown metric 'nope'");
      await page.waitForTimeout(2000);
      // One batch: the bad chart's 422 is its answer's, the other chart's and the totals' are theirs.
      expect(statuses).toEqual([200]);
      await page.screenshot({ path: join(ARTIFACTS_DIR, 'dashboard-half-broken.png') });
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'merges the queries of charts over the same dimensions, folding a top n into the rows the server gives for that chart alone',
    async () => {
      const m = clientFor(api, member);
      const charts = [
        { title: 'Top ops', kind: 'bar', dimensions: ['op'], metrics: ['count', 'cost'], top: 2 },
        { title: 'Top ops by status', kind: 'stacked', dimensions: ['op', 'status'], metrics: ['count'], top: 2 },
        { title: 'Ops latency', kind: 'table', dimensions: ['op'], metrics: ['latency_p50_ms', 'count', 'total_tokens'] },
        { title: 'Errors by op', kind: 'bar', dimensions: ['op'], metrics: ['errors'] },
        // Its own op filter: never merged with the others by op.
        { title: 'Support turns', kind: 'bar', dimensions: ['op'], metrics: ['count'], op: 'support.turn' },
      ];
      const val = { _type: 'WeftDashboard', _class_name: 'WeftDashboard', _bases: ['Object', 'BaseModel'], name: 'merged', charts };
      expect((await m.post('/obj/create', { obj: { project_id: P, object_id: 'weft-dashboard-merged', val } })).status).toBe(200);
      const page = await signedIn();
      const sent: Record<string, unknown>[] = [];
      const batches: { queries: Record<string, unknown>[] }[] = [];
      page.on('request', (r) => {
        if (r.url().endsWith('/analytics/query')) sent.push(r.postDataJSON());
        if (r.url().endsWith('/analytics/batch')) batches.push(r.postDataJSON());
      });
      await page.goto(weft.url + `/#/p/${P}/analytics?dashboard=weft-dashboard-merged`);
      for (const c of charts) await page.locator(`figure[data-chart="${c.title}"]`).waitFor();
      await page.waitForTimeout(1000);
      // One request for the dashboard: every chart's query and the totals (the server reads the three by op and the
      // totals in one scan, the op-filtered one in its own: test/analytics.test.ts, "a batch").
      expect(sent).toHaveLength(0);
      expect(batches).toHaveLength(1);
      sent.push(...batches[0]!.queries);
      expect(sent).toHaveLength(charts.length + 1);
      expect(sent.filter((b) => b.totals === true)).toHaveLength(1);
      const {
        dimensions: _d,
        metrics: _m,
        top: _t,
        ...view
      } = sent.find((b) => JSON.stringify(b.dimensions) === '["op"]' && !(b.filter as { op_names?: string[] }).op_names)!;
      const shortOp = (v: unknown) => String(v).replace(/^weave:\/\/\/[^/]+\/[^/]+\/op\/([^:]+):.*$/, '$1');
      const support = page.locator('figure[data-chart="Support turns"]');
      expect(JSON.parse((await support.getAttribute('data-labels'))!)).toEqual(['support.turn']);
      for (const c of charts.filter((x) => !x.op)) {
        // What the server answers for this chart alone (its `top` ranked and folded by the engine).
        const own = await m.post('/analytics/query', {
          ...view,
          dimensions: c.dimensions,
          metrics: c.metrics,
          ...(c.top ? { top: { dimension: c.dimensions[0], n: c.top } } : {}),
        });
        expect(own.status, own.text).toBe(200);
        const rows = own.body.rows as Record<string, unknown>[];
        const figure = page.locator(`figure[data-chart="${c.title}"]`);
        const total = rows.reduce((s, r) => s + Number(r[c.metrics[0]!] ?? 0), 0);
        expect(Number(await figure.getAttribute('data-total')), c.title).toBeCloseTo(total, 9);
        const xs = [...new Set(rows.map((r) => shortOp(r.op)))];
        if (c.kind === 'table') {
          expect(await figure.locator('tbody tr td:first-child code').allTextContents(), c.title).toEqual(xs);
        } else {
          expect(JSON.parse((await figure.getAttribute('data-labels'))!), c.title).toEqual(xs);
        }
        if (c.top) expect(xs, c.title).toContain('__other__');
      }
      await page.screenshot({ path: join(ARTIFACTS_DIR, 'dashboard-merged.png'), fullPage: true });
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    "exports what the calls view shows (CSV) and a dataset's rows (Parquet) with the Export menu",
    async () => {
      const m = clientFor(api, member);
      const page = await signedIn();
      await page.goto(weft.url + `/#/p/${P}/calls`);
      await page.locator('.vt-body .call-row').first().waitFor();
      const [csv] = await Promise.all([page.waitForEvent('download'), page.getByLabel('Export').first().selectOption('csv')]);
      expect(csv.suggestedFilename()).toBe('dash-shop-calls.csv');
      const text = readFileSync((await csv.path())!, 'utf8')
        .trim()
        .split('\r\n');
      // The view shows roots only by default: so does its export.
      const roots = await m.post('/calls/query_stats', { project_id: P, filter: { trace_roots_only: true } });
      expect(text[0]!.split(',')[0]).toBe('id');
      expect(text.length - 1).toBe(roots.body.count);
      await page.goto(weft.url + `/#/p/${P}/table/${seeded.tableDigest}`);
      const [parquet] = await Promise.all([page.waitForEvent('download'), page.getByLabel('Export').first().selectOption('parquet')]);
      const bytes = readFileSync((await parquet.path())!);
      expect(bytes.subarray(0, 4).toString()).toBe('PAR1');
      await page.screenshot({ path: join(ARTIFACTS_DIR, 'calls-export.png') });
      await page.close();
    },
    UI_TEST_MS,
  );
});
