/**
 * Web UI benchmark (`npm run bench:ui`): the calls view on the bench:query data set (BENCH_CALLS
 * calls, default 1,000,000, loaded into a fresh or reused BENCH_DATA_DIR) in a real headless
 * Chromium. Measures, per run on a fresh page: time from navigation to the first page of rows on
 * screen, and what scrolling fetches: requests, rows received, and the time for rows to appear
 * after a jump to the middle of the table, then the analytics view over the whole project. The server runs in this process (all-in-one, embedded
 * ClickHouse), as in bench:query.
 */
import { HARNESS_API_KEY, launchBrowser } from '@weft/harness';
import { startBenchWeft } from './bench-weft';
import { loadBenchCalls } from './query-data';

const N = Number(process.env.BENCH_CALLS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const P = 'bench/main';
const KEY = HARNESS_API_KEY;
const { weft, url, client, dataDir } = await startBenchWeft('ui');

const [row] = await (
  await client.query({
    query: `SELECT uniqExact(id) AS have FROM calls_starts WHERE project_id = '${P}'`,
    format: 'JSONEachRow',
  })
).json<{ have: string }>();
if (Number(row?.have ?? 0) < N) {
  const t0 = performance.now();
  await loadBenchCalls(client, P, N);
  console.log(`loaded ${N} calls in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
console.log(
  `store: ${dataDir}; ${N} calls in ${P}; ${RUNS} runs; load average ${(await import('node:os'))
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}`,
);

const browser = await launchBrowser();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const firstPage: number[] = [];
const jump: number[] = [];
const analytics: number[] = [];
let maxRowsFetched = 0;
let maxRequests = 0;
try {
  // Warm the bundle (built once per server process) so runs measure the view, not esbuild.
  await fetch(url + '/');
  for (let run = 0; run < RUNS; run++) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(url + '/');
    await page.evaluate(`sessionStorage.setItem('weft.apiKey', ${JSON.stringify(KEY)})`);
    const pages: { offset: number; limit: number }[] = [];
    page.on('request', (r) => {
      if (!r.url().endsWith('/calls/stream_query')) return;
      const body = JSON.parse(r.postData() ?? '{}') as { limit?: number; filter?: { trace_ids?: unknown } };
      // The table's pages, not a page's lookup of failed calls in its roots' traces (child-errors.ts).
      if (!body.filter?.trace_ids) pages.push(body as { offset: number; limit: number });
    });
    const t0 = performance.now();
    // Every call, not the roots only the view shows by default: the bench scrolls the whole project.
    await page.goto(`${url}/#/p/${P}/calls?roots=0`);
    await page.locator('.vt-body .call-row').first().waitFor({ timeout: 60_000 });
    firstPage.push(performance.now() - t0);
    // Scroll: ten screens down with the keyboard, then a jump to the middle of the project.
    // The total (from /calls/query_stats) sizes the scrollbar: wait for it before scrolling.
    await page
      .locator('.table-meta')
      .filter({ hasText: /^[\d,]+ calls?/ })
      .first()
      .waitFor({ timeout: 120_000 });
    await page.locator('.vt-body').focus();
    for (let i = 0; i < 10; i++) await page.keyboard.press('PageDown');
    await page.locator('.vt-body .call-row.active').waitFor({ timeout: 60_000 });
    const t1 = performance.now();
    await page.locator('.vt-body').evaluate((el: any) => {
      el.scrollTop = el.scrollHeight / 2;
    });
    // Rows deep in the table on screen, no placeholder left. (Not a fixed row index: the browser
    // caps an element's height near 33.5M px, so the middle of the scrollbar is not always row N/2.)
    const deep = Math.floor(N / 4);
    await page.waitForFunction(
      `document.querySelector('.vt-body .placeholder') === null &&
        [...document.querySelectorAll('.vt-body .call-row')].some((r) => Number(r.getAttribute('aria-rowindex')) > ${deep})`,
      undefined,
      { timeout: 120_000, polling: 50 },
    );
    jump.push(performance.now() - t1);
    // The analytics view over the whole project: totals and charts from /calls/aggregate.
    const t2 = performance.now();
    await page.goto(`${url}/#/p/${P}/analytics`);
    await page.locator('.analytics .totals').waitFor({ timeout: 300_000 });
    await page.locator('figure.chart canvas').first().waitFor({ timeout: 60_000 });
    analytics.push(performance.now() - t2);
    const rows = pages.reduce((s, p) => s + (p.limit ?? 0), 0);
    maxRowsFetched = Math.max(maxRowsFetched, rows);
    maxRequests = Math.max(maxRequests, pages.length);
    await page.close();
  }
} finally {
  await browser.close();
  await weft.close();
}
const fmt = (xs: number[]) => `median ${median(xs).toFixed(0)} ms (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`;
console.log(`calls view, first page of rows on screen:          ${fmt(firstPage)}`);
console.log(`jump to the middle of the scrollbar, rows on screen: ${fmt(jump)}`);
console.log(`analytics view over the whole project, totals and charts on screen: ${fmt(analytics)}`);
console.log(
  `load average after the runs: ${(await import('node:os'))
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}`,
);
console.log(
  `most rows fetched in one session (first page, 10 screens, the jump): ${maxRowsFetched} of ${N} (${maxRequests} requests of ≤ 100 rows)`,
);
