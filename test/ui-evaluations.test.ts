import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS_DIR, launchBrowser } from './helpers/browser';
import { Client } from './helpers/client';
import { clientFor, createKey, type TestKey } from './helpers/keys';
import { REPO_ROOT, TEST_ROOT } from './helpers/paths';
import { startWeft, type RunningWeft } from './helpers/server';
import { ensureWeaveSdk, WEAVE_SDKS, weaveUserEnv } from './helpers/weave-sdk';

/**
 * The Evaluations views (issue 37, point 2) in a real headless Chromium against the real
 * all-in-one server, on what the real Weave Python SDK wrote (test/weave-sdk/evaluations.py):
 * two `Evaluation.evaluate` runs of one dataset (models `careful` then `hasty`, scorers `exact`
 * returning {correct: bool} and `closeness` returning a number) and a Leaderboard over them.
 * Every expected value is read back through the API, not taken from the UI's code.
 */
let weft: RunningWeft;
let member: Client;
let memberKey: TestKey;
let browser: Browser;

const P = 'evals/sums';
const UI_TEST_MS = 240_000;
const until = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 20_000, interval: 100 });
const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS_DIR, `evals-${name}.png`), fullPage: true });

interface Call {
  id: string;
  trace_id: string;
  parent_id: string | null;
  inputs: Record<string, unknown>;
  output: any;
  started_at: string;
}
/** What the SDK wrote, as /calls/stream_query returns it. */
let sdk: { printed: { summaries: Record<string, unknown>; leaderboard_ref: string }; careful: Call; hasty: Call; children: Call[] };

/** Numeric and boolean leaves of a value as dotted paths (booleans as 1/0). */
function leaves(v: unknown, prefix = ''): [string, number][] {
  if (typeof v === 'number') return [[prefix, v]];
  if (typeof v === 'boolean') return [[prefix, v ? 1 : 0]];
  if (v && typeof v === 'object') return Object.entries(v).flatMap(([k, x]) => leaves(x, prefix ? `${prefix}.${k}` : k));
  return [];
}

async function runEvaluations(key: string): Promise<typeof sdk> {
  const python = await ensureWeaveSdk(WEAVE_SDKS[0]);
  const scratch = mkdtempSync(join(TEST_ROOT, 'ui-evals-'));
  const env = weaveUserEnv({ scratch, baseUrl: weft.url, apiKey: key, project: P });
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(python, [join(REPO_ROOT, 'test', 'weave-sdk', 'evaluations.py')], { cwd: scratch, env });
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.stderr.on('data', (d) => (text += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(text);
      else reject(new Error(`evaluations.py exited ${code}:\n${text.slice(-4000)}`));
    });
  });
  const printed = JSON.parse(out.trim().split('\n').pop()!);
  const roots = await member.jsonl<Call>('/calls/stream_query', {
    project_id: P,
    filter: { op_names: [`weave:///${P}/op/Evaluation.evaluate:*`] },
    sort_by: [{ field: 'started_at', direction: 'asc' }],
  });
  expect(roots).toHaveLength(2);
  const children = await member.jsonl<Call>('/calls/stream_query', {
    project_id: P,
    filter: { op_names: [`weave:///${P}/op/Evaluation.predict_and_score:*`] },
  });
  expect(children).toHaveLength(12);
  return { printed, careful: roots[0]!, hasty: roots[1]!, children };
}

beforeAll(async () => {
  weft = await startWeft();
  const api = new Client(weft.url);
  await api.post('/admin/entities/create', { name: 'evals' });
  await api.post('/admin/entities/create', { name: 'others' });
  memberKey = await createKey(api, 'evals-alice', ['evals']);
  member = clientFor(api, memberKey);
  const other = clientFor(api, await createKey(api, 'evals-bob', ['others']));
  await other.post('/call/start', {
    start: { project_id: 'others/secret', op_name: 'x', started_at: new Date().toISOString(), inputs: {}, attributes: {} },
  });
  [sdk, browser] = await Promise.all([runEvaluations(memberKey.key), launchBrowser()]);
}, 900_000);
afterAll(async () => {
  await browser?.close();
  await weft?.stop();
});

async function signedIn(path: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.on('pageerror', (e) => console.error('page error:', e.message));
  page.on('close', () => context.close().catch(() => {}));
  await page.goto(weft.url + path);
  await page.getByLabel('API key').fill(memberKey.key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  return page;
}

/** The summary metrics the UI is to show for a run: its root call's output, the model's own output summary aside. */
const expectedScores = (c: Call) => leaves(c.output).filter(([p]) => !p.startsWith('output.') && !p.startsWith('model_latency'));

/** The example a predict_and_score call scored: the dataset row's digest (the end of its ref). */
const rowDigest = (c: Call) => /\/id\/([^/]+)$/.exec(String(c.inputs.example))![1]!;

describe('evaluations', () => {
  it(
    'lists both runs, newest first, with their model, dataset, scorers and summary scores equal to the root calls’ outputs',
    async () => {
      // The summaries the SDK returned are what it stored as the root calls' outputs.
      expect(sdk.careful.output).toEqual(sdk.printed.summaries.careful);
      expect(sdk.hasty.output).toEqual(sdk.printed.summaries.hasty);
      const page = await signedIn(`/#/p/${P}/evaluations`);
      const rows = page.locator('tr.eval-run');
      await until(() => rows.count()).toBe(2);
      expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-call-id')))).toEqual([sdk.hasty.id, sdk.careful.id]);
      for (const [call, model] of [
        [sdk.careful, 'careful'],
        [sdk.hasty, 'hasty'],
      ] as const) {
        const row = page.locator(`tr.eval-run[data-call-id="${call.id}"]`);
        await until(() => row.locator('.eval-model').textContent()).toMatch(new RegExp(`^${model}:`));
        const text = (await row.textContent())!;
        expect(text).toContain('sums-eval');
        expect(text).toContain('sums:');
        expect(await row.locator('.eval-scorers').textContent()).toBe('scorers exact, closeness');
        expect(text).toContain('success');
        const chips = await row
          .locator('.score-chip')
          .evaluateAll((els) => els.map((e) => [e.getAttribute('data-metric'), Number(e.getAttribute('data-value'))]));
        expect(chips).toEqual(expectedScores(call));
        expect(chips.length).toBe(3); // exact.correct.true_count, .true_fraction, closeness.mean
      }
      // At 1280 px the table fits the page.
      expect(await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')).toBe(0);
      await shot(page, 'list');
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'compares the two runs: deltas against the baseline equal the summaries’, and the regressions filter shows exactly where hasty scored worse',
    async () => {
      const page = await signedIn(`/#/p/${P}/evaluations`);
      await until(() => page.locator('tr.eval-run').count()).toBe(2);
      // The first ticked is the baseline.
      await page.getByRole('checkbox', { name: /^Compare careful/ }).check();
      await page.getByRole('checkbox', { name: /^Compare hasty/ }).check();
      await page.getByRole('button', { name: /^Compare/ }).click();
      await until(() => page.locator('tr.example-row').count()).toBe(6);
      expect(page.url()).toContain(`runs=${sdk.careful.id}%2C${sdk.hasty.id}`);

      // Summary: every metric of the summaries, the hasty run's delta = its value − careful's.
      const careful = new Map(leaves(sdk.printed.summaries.careful));
      const hasty = new Map(leaves(sdk.printed.summaries.hasty));
      const metrics = [...careful.keys()].filter((p) => !p.startsWith('output.'));
      expect(metrics).toEqual(['exact.correct.true_count', 'exact.correct.true_fraction', 'closeness.mean', 'model_latency.mean']);
      for (const m of metrics) {
        const base = page.locator(`tr[data-metric="${m}"] td[data-run="0"]`);
        const other = page.locator(`tr[data-metric="${m}"] td[data-run="1"]`);
        expect(Number(await base.getAttribute('data-value')), m).toBe(careful.get(m));
        expect(Number(await other.getAttribute('data-value')), m).toBe(hasty.get(m));
        expect(Number(await other.getAttribute('data-delta')), m).toBe(hasty.get(m)! - careful.get(m)!);
      }
      // hasty got fewer right: shown as worse, with the delta written out.
      const fraction = page.locator('tr[data-metric="exact.correct.true_fraction"] td[data-run="1"]');
      expect(await fraction.getAttribute('class')).toContain('worse');
      expect(await fraction.textContent()).toContain(
        `(−${Number((careful.get('exact.correct.true_fraction')! - hasty.get('exact.correct.true_fraction')!).toPrecision(3))})`,
      );

      // The dataset rows' inputs are shown, read through their refs.
      const firstExample = page.locator('tr.example-row td.example').first();
      expect(await firstExample.textContent()).toMatch(/question\s*\d+ \+ \d+/);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')).toBe(0);
      await shot(page, 'compare');

      // Regressions, computed here from the predict_and_score calls: hasty worse on any score.
      const byRun = (root: Call) => new Map(sdk.children.filter((c) => c.parent_id === root.id).map((c) => [rowDigest(c), c]));
      const base = byRun(sdk.careful);
      const mine = byRun(sdk.hasty);
      expect([...base.keys()].sort()).toEqual([...mine.keys()].sort());
      const worse = [...mine.entries()]
        .filter(([digest, c]) => {
          const before = new Map(leaves(base.get(digest)!.output.scores));
          return leaves(c.output.scores).some(([p, v]) => v < before.get(p)!);
        })
        .map(([digest]) => `row:${digest}`)
        .sort();
      expect(worse).toHaveLength(3); // 3 + 5, 6 + 6, 9 + 1; not 10 + 7, where hasty did better
      await page.getByLabel(/Regressions only/).check();
      const keys = () => page.locator('tr.example-row').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-example-key')).sort());
      await until(keys).toEqual(worse);
      expect(page.url()).toContain('regressions=1');
      const questions = await page.locator('tr.example-row td.example').allTextContents();
      expect(questions.map((q) => /question\s*(\d+ \+ \d+)/.exec(q)![1]).sort()).toEqual(['3 + 5', '6 + 6', '9 + 1']);
      // Each regressed cell is marked, its worse score too.
      expect(await page.locator('tr.example-row td.result.regressed[data-run="1"]').count()).toBe(3);
      await shot(page, 'regressions');

      // A cell opens its trace, on its own predict_and_score call.
      const cell = page.locator('tr.example-row').first().locator('td.result[data-run="1"] a.result-link');
      const digest = (await page.locator('tr.example-row').first().getAttribute('data-example-key'))!.slice('row:'.length);
      const target = mine.get(digest)!;
      await cell.click();
      await until(() => page.url()).toContain(`/trace/${target.trace_id}`);
      expect(page.url()).toContain(`call=${target.id}`);
      await until(() => page.locator('.call-detail .detail-head h3').textContent()).toBe('Evaluation.predict_and_score');
      await shot(page, 'cell-trace');
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'shows the Leaderboard object: a row per model, a column per evaluation/scorer/metric, values from the summaries, best first',
    async () => {
      const page = await signedIn(`/#/p/${P}/evaluations`);
      await page.getByRole('link', { name: 'sums-board' }).click();
      const rows = page.locator('tr.leaderboard-row');
      await until(() => rows.count()).toBe(2);
      expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-model')))).toEqual(['careful', 'hasty']);
      for (const [i, name] of ['careful', 'hasty'].entries()) {
        const s = sdk.printed.summaries[name] as { exact: { correct: { true_fraction: number } }; closeness: { mean: number } };
        const cells = rows.nth(i).locator('td[data-column]');
        expect(
          await cells.evaluateAll((tds) => tds.map((td) => [td.getAttribute('data-column'), Number(td.getAttribute('data-value'))])),
        ).toEqual([
          ['exact.correct.true_fraction', s.exact.correct.true_fraction],
          ['closeness.mean', s.closeness.mean],
        ]);
      }
      await shot(page, 'leaderboard');
      // The link the SDK printed for it opens the same view.
      await page.goto(weft.url + `/${P}/weave/leaderboards/sums-board`);
      await until(() => page.locator('tr.leaderboard-row').count()).toBe(2);
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'sends no more than a few requests after an error (403 of a foreign project)',
    async () => {
      const page = await signedIn(`/#/p/${P}/evaluations`);
      await until(() => page.locator('tr.eval-run').count()).toBe(2);
      let requests = 0;
      page.on('request', (r) => {
        if (r.method() === 'POST') requests++;
      });
      for (const view of [
        '/#/p/others/secret/evaluations',
        `/#/p/others/secret/evaluations/compare?runs=${sdk.careful.id},${sdk.hasty.id}`,
        '/#/p/others/secret/leaderboards/sums-board',
      ]) {
        requests = 0;
        await page.goto(weft.url + view);
        await until(() => page.getByRole('alert').first().textContent()).toMatch(/Error 403/);
        await page.waitForTimeout(1500);
        expect(requests, view).toBeLessThanOrEqual(4);
      }
      await page.close();
    },
    UI_TEST_MS,
  );
});
