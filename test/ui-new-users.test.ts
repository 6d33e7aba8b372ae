import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS_DIR, launchBrowser } from './helpers/browser';
import { Client } from './helpers/client';
import { clientFor, createKey, type TestKey } from './helpers/keys';
import { startWeft, type RunningWeft } from './helpers/server';

/**
 * What new users hit in the web UI (issue 53: items 5 and 10), in a real headless Chromium at
 * 1440 px against the real all-in-one server: a rolled-up cost of a few millionths shown whole,
 * one name for a user in the calls table and the call's detail, no 404 logged by Analytics
 * before a dashboard is saved.
 */
let weft: RunningWeft;
let api: Client;
let member: Client;
let memberKey: TestKey;
let browser: Browser;
const P = 'nu/app';
const UI_TEST_MS = 240_000;
const until = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 20_000, interval: 100 });
const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS_DIR, `new-users-${name}.png`) });

beforeAll(async () => {
  [weft, browser] = await Promise.all([startWeft(), launchBrowser()]);
  api = new Client(weft.url);
  await api.post('/admin/entities/create', { name: 'nu' });
  memberKey = await createKey(api, 'nina', ['nu']);
  member = clientFor(api, memberKey);
  // A price of a tenth of a millionth per token: 120 tokens cost $0.000012.
  const price = await member.post('/cost/create', {
    project_id: P,
    costs: { 'tiny-model': { prompt_token_cost: 1e-7, completion_token_cost: 1e-7, effective_date: '2024-01-01T00:00:00Z' } },
  });
  expect(price.status, price.text).toBe(200);
  const t0 = Date.now() - 60_000;
  const at = (ms: number) => new Date(t0 + ms).toISOString();
  const usage = { 'tiny-model': { requests: 1, prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } };
  const part = (id: string, parent: string | null, s: number, e: number, summary: Record<string, unknown>) => [
    {
      mode: 'start',
      req: {
        start: { project_id: P, id, trace_id: 'nu-t1', parent_id: parent, op_name: id, started_at: at(s), inputs: {}, attributes: {} },
      },
    },
    { mode: 'end', req: { end: { project_id: P, id, ended_at: at(e), output: 'ok', summary } } },
  ];
  // OTLP-style: the usage on the child only, so the root's cost is its trace's, rolled up.
  const r = await member.post('/call/upsert_batch', {
    batch: [...part('agent', null, 0, 900, {}), ...part('llm', 'agent', 100, 800, { usage })],
  });
  expect(r.status, r.text).toBe(200);
}, 900_000);
afterAll(async () => {
  await browser?.close();
  await weft?.stop();
});

async function signedIn(path: string, errors: string[] = []): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on(
    'response',
    (res) => res.status() >= 400 && errors.push(`${res.status()} ${res.request().method()} ${new URL(res.url()).pathname}`),
  );
  page.on('close', () => context.close().catch(() => {}));
  await page.goto(weft.url + path);
  await page.getByLabel('API key').fill(memberKey.key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  return page;
}

describe('the calls table at 1440 px', () => {
  it(
    'shows a rolled-up cost of a few millionths whole, and the user by name with the id on hover',
    async () => {
      const page = await signedIn(`/#/p/${P}/calls`);
      const cost = page.locator('.call-row[data-call-id="agent"] .col-cost');
      await until(() => cost.textContent()).toBe('Σ $0.000012');
      // Not cut by the column: the whole text fits its cell.
      expect(await cost.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
      const user = page.locator('.call-row[data-call-id="agent"] .col-user span');
      await until(() => user.textContent()).toBe('nina');
      expect(await user.getAttribute('title')).toBe(memberKey.user_id);
      await shot(page, 'calls');
      await page.close();
    },
    UI_TEST_MS,
  );
});

describe('one name for a user (item 5)', () => {
  it(
    "the call's detail names the user as the calls table does, the id on hover, and its feedback's authors too",
    async () => {
      const note = await member.post('/feedback/create', {
        project_id: P,
        svc_ref: `weave:///${P}/call/agent`,
        feedback_type: 'wandb.note.1',
        payload: { note: 'looks right' },
      });
      expect(note.status, note.text).toBe(200);
      const page = await signedIn(`/#/p/${P}/call/agent`);
      const user = page.locator('dt:text-is("User") + dd [data-user-id]');
      await until(() => user.textContent()).toBe('nina');
      expect(await user.getAttribute('title')).toBe(memberKey.user_id);
      const by = page.locator('.feedback-item .feedback-by [data-user-id]');
      await until(() => by.textContent()).toBe('nina');
      expect(await by.getAttribute('title')).toBe(memberKey.user_id);
      await shot(page, 'call-detail');
      await page.close();
    },
    UI_TEST_MS,
  );
});

describe('Analytics before any dashboard is saved (item 10)', () => {
  it(
    'shows the default dashboard with no failed request and no error in the console',
    async () => {
      const errors: string[] = [];
      const page = await signedIn(`/#/p/${P}/analytics`, errors);
      await until(() => page.locator('figure[data-chart]').count()).toBeGreaterThan(0);
      await page.waitForTimeout(1000);
      expect(errors).toEqual([]);
      await shot(page, 'analytics');
      await page.close();
    },
    UI_TEST_MS,
  );
});

describe('an annotation queue made from the calls table (item 10)', () => {
  it(
    'picks the scores its annotators give, as the Queues page does',
    async () => {
      const val = {
        _type: 'AnnotationSpec',
        _class_name: 'AnnotationSpec',
        _bases: ['Object', 'BaseModel'],
        name: 'Quality',
        field_schema: { type: 'integer', minimum: 1, maximum: 5 },
      };
      const spec = await member.post('/obj/create', { obj: { project_id: P, object_id: 'quality', val } });
      expect(spec.status, spec.text).toBe(200);
      const page = await signedIn(`/#/p/${P}/calls?roots=0`);
      await until(() => page.locator('.vt-body .call-row').count()).toBe(2);
      await page.keyboard.press('x');
      await page.getByRole('button', { name: 'Add to queue…' }).click();
      await page.getByLabel('Queue', { exact: true }).selectOption({ label: 'New queue…' });
      await page.getByLabel('New queue name').fill('From the table');
      const form = page.locator('form.add-to-queue');
      await form.getByLabel('Quality').check();
      await shot(page, 'add-to-new-queue');
      await form.getByRole('button', { name: 'Add 1' }).click();
      await until(() => page.locator('.add-to-queue .done').textContent()).toBe(' Added 1 to From the table');
      const [queue] = await member.jsonl<{ name: string; scorer_refs: string[] }>('/annotation_queues/query', { project_id: P });
      expect(queue).toMatchObject({ name: 'From the table', scorer_refs: [`weave:///${P}/object/quality:${spec.body.digest}`] });
      await page.close();
    },
    UI_TEST_MS,
  );
});

describe('monitors (item 4)', () => {
  it(
    "scored calls show their results in the Feedback column; the Monitors page lists each monitor's state, scorers, results and failures",
    async () => {
      const obj = async (object_id: string, val: Record<string, unknown>) => {
        const r = await member.post('/obj/create', { obj: { project_id: P, object_id, val } });
        expect(r.status, r.text).toBe(200);
        return `weave:///${P}/object/${object_id}:${r.body.digest}`;
      };
      const base = { _bases: ['Object', 'BaseModel'] };
      const judge = await obj('judge', { ...base, _type: 'LLMAsAJudgeScorer', _class_name: 'LLMAsAJudgeScorer', name: 'judge' });
      const watching = await obj('watch-llm', {
        ...base,
        _type: 'Monitor',
        _class_name: 'Monitor',
        name: 'watch-llm',
        active: true,
        op_names: [`weave:///${P}/op/llm:*`],
        sampling_rate: 0.5,
        scorers: [judge],
      });
      await obj('paused-one', { ...base, _type: 'Monitor', _class_name: 'Monitor', name: 'paused-one', active: false, scorers: [judge] });
      const result = async (payload: Record<string, unknown>) => {
        const r = await member.post('/feedback/create', {
          project_id: P,
          svc_ref: `weave:///${P}/call/llm`,
          feedback_type: 'wandb.runnable.judge',
          runnable_ref: judge,
          trigger_ref: watching,
          payload,
        });
        expect(r.status, r.text).toBe(200);
      };
      await result({ output: { passed: true } });
      await result({ output: null, error: 'judge model unreachable' });

      const page = await signedIn(`/#/p/${P}/calls?roots=0`);
      const cell = page.locator('.call-row[data-call-id="llm"] .col-feedback .feedback-cell');
      await until(() => cell.getAttribute('data-feedback')).toBe('⚖2');

      await page.getByRole('link', { name: 'Monitors' }).click();
      const watch = page.locator('section[data-monitor="watch-llm"]');
      await until(() => watch.locator('[data-state]').getAttribute('data-state')).toBe('active');
      expect(await page.locator('section[data-monitor="paused-one"] [data-state]').getAttribute('data-state')).toBe('paused');
      // Each scorer by name (a 🔔 beside each creates an alert on it: test/ui-alerts.test.ts).
      expect(await watch.locator('.monitor-scorer-name').allTextContents()).toEqual(['judge']);
      expect(await watch.locator('.monitor-failures').getAttribute('data-failures')).toBe('1');
      expect(await watch.locator('.monitor-failures').textContent()).toContain('judge model unreachable');
      expect(await watch.locator('.monitor-results tbody tr').count()).toBe(2);
      expect(await page.locator('a.judges-link').getAttribute('href')).toBe(`#/p/${P}-judges/calls`);
      await shot(page, 'monitors');
      await page.close();
    },
    UI_TEST_MS,
  );
});
