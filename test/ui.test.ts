import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS_DIR, launchBrowser } from './helpers/browser';
import { Client } from './helpers/client';
import { clientFor, createKey, type TestKey } from './helpers/keys';
import { startWeft, type RunningWeft } from './helpers/server';
import { seedUiProject, type Seeded } from './helpers/ui-seed';

/**
 * The web UI in a real headless Chromium (Debian's package, driven by playwright-core), against
 * the real all-in-one server, on a project seeded through the API.
 */
let weft: RunningWeft;
let api: Client;
let browser: Browser;
let member: TestKey;
let seeded: Seeded;
const P = 'uiteam/shop';

beforeAll(async () => {
  weft = await startWeft();
  api = new Client(weft.url);
  await api.post('/admin/entities/create', { name: 'uiteam' });
  await api.post('/admin/entities/create', { name: 'others' });
  member = await createKey(api, 'ui-alice', ['uiteam']);
  seeded = await seedUiProject(clientFor(api, member), P);
  // Another team's project: never listed for uiteam's key.
  const other = await createKey(api, 'ui-bob', ['others']);
  await clientFor(api, other).post('/call/start', {
    start: { project_id: 'others/secret', op_name: 'x', started_at: new Date().toISOString(), inputs: {}, attributes: {} },
  });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await weft?.stop();
});

async function newPage(width = 1280, height = 800, colorScheme: 'light' | 'dark' = 'light'): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height }, colorScheme });
  page.on('pageerror', (e) => console.error('page error:', e.message));
  return page;
}

async function signIn(page: Page, key: string): Promise<void> {
  await page.goto(weft.url + '/');
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
}

/** Waits for a condition the page reaches asynchronously (generous: the machine is shared). */
/** Browser tests load pages on a shared 2-core machine: generous time per test. */
const UI_TEST_MS = 240_000;

const until = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 20_000, interval: 100 });

const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS_DIR, `${name}.png`) });

describe('the UI read endpoints', () => {
  it("/projects/list lists the key's projects only, with call counts and last activity", async () => {
    const r = await clientFor(api, member).post('/projects/list', {});
    expect(r.status, r.text).toBe(200);
    expect(r.body.projects).toEqual([
      { project_id: P, call_count: seeded.callCount, object_count: 1, last_activity: expect.stringMatching(/Z$/) },
    ]);
    const admin = await api.post('/projects/list', {});
    expect(admin.body.projects.map((p: { project_id: string }) => p.project_id).sort()).toEqual(['others/secret', P].sort());
    const denied = await clientFor(api, member).post('/projects/list', { entity: 'others' });
    expect(denied.status).toBe(403);
    const bad = await clientFor(api, member).post('/projects/list', { limit: 1.5 });
    expect(bad.status).toBe(422); // a body that does not fit its schema, as everywhere
    expect(bad.body.field).toBe('limit');
    expect((await new Client(weft.url, null).post('/projects/list', {})).status).toBe(401);
  });

  it('/calls/aggregate totals equal /calls/query_stats, per op and model add up, costs use the prices', async () => {
    const m = clientFor(api, member);
    for (const body of [
      {},
      { filter: { op_names: ['openai.chat.completions.create'] } },
      { query: { $expr: { $eq: [{ $getField: 'summary.weave.status' }, { $literal: 'error' }] } } },
    ]) {
      const agg = await m.post('/calls/aggregate', { project_id: P, ...body });
      expect(agg.status, agg.text).toBe(200);
      const stats = await m.post('/calls/query_stats', { project_id: P, ...body });
      expect(agg.body.totals.calls).toBe(stats.body.count);
      expect(agg.body.series.reduce((s: number, b: { calls: number }) => s + b.calls, 0)).toBe(stats.body.count);
      expect(agg.body.by_op.reduce((s: number, b: { calls: number }) => s + b.calls, 0)).toBe(stats.body.count);
    }
    const all = (await m.post('/calls/aggregate', { project_id: P })).body;
    expect(all.totals.errors).toBe(1);
    const model = (name: string) => all.by_model.find((x: { model: string }) => x.model === name);
    // acme-llm: the project's own price, 1000 × 1e-5 + 200 × 3e-5.
    expect(model('acme-llm')).toMatchObject({ calls: 1, prompt_tokens: 1000, completion_tokens: 200, total_tokens: 1200 });
    expect(model('acme-llm').cost).toBeCloseTo(0.016, 9);
    expect(model('gpt-4o').prompt_tokens).toBe(120 + 80);
    expect(model('gpt-4o').cost).toBeGreaterThan(0);
    expect(all.totals.cost).toBeCloseTo(
      all.by_model.reduce((s: number, x: { cost: number }) => s + x.cost, 0),
      9,
    );
    // The same costs as include_costs on the calls themselves.
    const calls = await m.jsonl('/calls/stream_query', { project_id: P, include_costs: true });
    let cost = 0;
    for (const c of calls)
      for (const k of Object.values((c.summary?.weave?.costs ?? {}) as Record<string, Record<string, number>>))
        cost += (k.prompt_tokens_total_cost ?? 0) + (k.completion_tokens_total_cost ?? 0);
    expect(all.totals.cost).toBeCloseTo(cost, 9);
    const bad = await m.post('/calls/aggregate', { project_id: P, query: { $expr: { $regex: [] } } });
    expect(bad.status).toBe(400);
    expect(bad.body.field).toContain('$regex');
    expect((await m.post('/calls/aggregate', { project_id: 'others/secret' })).status).toBe(403);
  });

  it('/calls/aggregate prices each call with the price in force at its start, as include_costs does', async () => {
    // Two project prices of one model, effective on 2024-01-01 and 2024-06-01, and three calls
    // with its usage: before both (priced with a later one, as the reference), between, after.
    // Its own entity, written with the admin key: uiteam's key still sees one project (the
    // browser tests below list them).
    await api.post('/admin/entities/create', { name: 'epochs' });
    const m = api;
    const EP = 'epochs/prices';
    for (const [effective_date, prompt] of [
      ['2024-01-01T00:00:00Z', 0.001],
      ['2024-06-01T00:00:00Z', 0.01],
    ] as const)
      expect(
        (
          await m.post('/cost/create', {
            project_id: EP,
            costs: { 'epoch-llm': { prompt_token_cost: prompt, completion_token_cost: 2 * prompt, effective_date } },
          })
        ).status,
      ).toBe(200);
    const starts = ['2023-12-01', '2024-03-01', '2024-09-01', '2024-09-02'];
    const batch = starts.flatMap((day, i) => {
      const id = `0199eeee-0000-7000-8000-00000000000${i}`;
      return [
        {
          mode: 'start',
          req: {
            start: {
              project_id: EP,
              id,
              trace_id: `tr-${i}`,
              op_name: i % 2 ? 'a' : 'b',
              started_at: `${day}T10:00:00Z`,
              inputs: {},
              attributes: {},
            },
          },
        },
        {
          mode: 'end',
          req: {
            end: {
              project_id: EP,
              id,
              ended_at: `${day}T10:00:01Z`,
              output: null,
              summary: { usage: { 'epoch-llm': { prompt_tokens: 100 * (i + 1), completion_tokens: 10, requests: 1 } } },
            },
          },
        },
      ];
    });
    expect((await m.post('/call/upsert_batch', { batch })).status).toBe(200);
    const agg = (await m.post('/calls/aggregate', { project_id: EP })).body;
    const calls = await m.jsonl('/calls/stream_query', { project_id: EP, include_costs: true });
    const costs = calls.map((c) => {
      const k = (c.summary?.weave?.costs as Record<string, Record<string, number>>)['epoch-llm']!;
      return k.prompt_tokens_total_cost! + k.completion_tokens_total_cost!;
    });
    // 2024-06's price for the first, 2024-01's for the second, 2024-06's for the last two.
    expect(costs[0]).toBeCloseTo(100 * 0.01 + 10 * 0.02, 9);
    expect(costs[1]).toBeCloseTo(200 * 0.001 + 10 * 0.002, 9);
    expect(agg.by_model).toEqual([
      expect.objectContaining({ model: 'epoch-llm', calls: 4, requests: 4, prompt_tokens: 1000, completion_tokens: 40 }),
    ]);
    expect(agg.by_model[0].cost).toBeCloseTo(
      costs.reduce((a, b) => a + b, 0),
      9,
    );
    for (const op of agg.by_op as { op_name: string; cost: number }[])
      expect(op.cost).toBeCloseTo(
        calls.reduce((sum, c, i) => sum + (c.op_name === op.op_name ? costs[i]! : 0), 0),
        9,
      );
  });

  it('publishes both in /openapi.json as extras', async () => {
    const doc = (await (await fetch(`${weft.url}/openapi.json`)).json()) as {
      paths: Record<string, { post: { tags: string[]; responses: Record<string, unknown> } }>;
    };
    expect(doc.paths['/projects/list']?.post.tags).toContain('extra');
    expect(doc.paths['/calls/aggregate']?.post.responses['200']).toBeDefined();
  });
});

describe('the web UI in Chromium', () => {
  it(
    'serves the page and its assets from weft itself (no other origin)',
    async () => {
      const page = await newPage();
      const origins = new Set<string>();
      page.on('request', (r) => origins.add(new URL(r.url()).origin));
      await page.goto(weft.url + '/');
      await page.getByLabel('API key').waitFor();
      expect([...origins]).toEqual([new URL(weft.url).origin]);
      await shot(page, '01-signin');
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    "refuses a bad key with the server's reason, then signs in and lists the projects",
    async () => {
      const page = await newPage();
      await page.goto(weft.url + '/');
      await page.getByLabel('API key').fill('weft_not-a-real-key');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await until(() => page.getByRole('alert').textContent()).toContain('401');
      await signIn(page, member.key);
      // The member's entity holds P and the projects other tests of this file wrote (e.g. the price epochs').
      const rows = page.locator('table.projects tbody tr');
      await until(() => rows.count()).toBeGreaterThanOrEqual(1);
      const row = rows.filter({ hasText: P });
      await until(() => row.count()).toBe(1);
      expect(await row.locator('td.num').first().textContent()).toBe(String(seeded.callCount));
      // The key stays in the tab's session, not in the URL.
      expect(page.url()).not.toContain(member.key);
      await shot(page, '02-projects');
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'shows the calls table, sorts on the server, keeps filters in the URL',
    async () => {
      const page = await newPage();
      await signIn(page, member.key);
      await page.getByRole('link', { name: P }).click();
      const rows = page.locator('.vt-body .call-row');
      // Trace roots only at first; every call once unticked.
      const roots = await clientFor(api, member).post('/calls/query_stats', { project_id: P, filter: { trace_roots_only: true } });
      await until(() => rows.count()).toBe(roots.body.count);
      expect(roots.body.count).toBeLessThan(seeded.callCount);
      await page.getByLabel('roots only').uncheck();
      await until(() => rows.count()).toBe(seeded.callCount);
      await until(() => page.locator('.table-meta').textContent()).toContain(`${seeded.callCount} calls`);
      await shot(page, '03-calls');
      // Sort by op ascending (two clicks: desc first), on the server.
      await page.getByRole('button', { name: /^Op/ }).click();
      await page.getByRole('button', { name: /^Op/ }).click();
      await until(() => page.url()).toContain('sort=op_name%3Aasc');
      const expected = (
        await clientFor(api, member).jsonl('/calls/stream_query', {
          project_id: P,
          sort_by: [{ field: 'op_name', direction: 'asc' }],
          limit: 3,
          columns: ['op_name'],
        })
      ).map((c) => c.op_name);
      await until(async () => (await rows.locator('.col-op').allTextContents()).slice(0, 3)).toEqual(expected.map((o) => o));
      // Tokens and cost sort on the server too (sums over models): desc first, NULLs ('—') last.
      // 'Σ …' is an OTLP root's trace total (its spans' usage, filled in after the page): not the
      // call's own value the server sorts on, so it reads as no value, like '—'.
      const numbers = async (col: string) =>
        (await rows.locator(col).allTextContents()).map((t) => (t === '—' || t.startsWith('Σ') ? null : Number(t.replace(/[$,]/g, ''))));
      const descending = (xs: (number | null)[]) => {
        const known = xs.filter((x): x is number => x !== null);
        return xs.slice(0, known.length).every((x) => x !== null) && known.every((x, i) => i === 0 || known[i - 1]! >= x);
      };
      for (const [label, field, col] of [
        ['Cost', 'summary.weave.total_cost', '.col-cost'],
        ['Tokens', 'summary.weave.total_tokens', '.col-tokens'],
      ] as const) {
        await page.getByRole('button', { name: new RegExp(`^${label}`) }).click();
        await until(() => page.url()).toContain(`sort=${encodeURIComponent(field)}%3Adesc`);
        await until(async () => {
          const xs = await numbers(col);
          return xs.length === seeded.callCount && xs[0] !== null && descending(xs);
        }).toBe(true);
      }
      // Filter by status: the error row only; the filter is in the URL, so a reload keeps it.
      await page.getByLabel('Status').selectOption('error');
      await until(() => rows.count()).toBe(1);
      expect(page.url()).toContain('status=error');
      await page.reload();
      await until(() => rows.count()).toBe(1);
      expect(await rows.first().locator('.col-op').textContent()).toBe('search');
      // Free text in inputs/outputs.
      await page.getByRole('button', { name: 'Clear' }).click();
      await page.getByLabel('Search').fill('order 1234');
      await page.getByLabel('Search').press('Enter');
      await until(async () => (await rows.locator('.col-op').allTextContents()).sort()).toEqual([
        'openai.chat.completions.create',
        'support.turn',
      ]);
      // A bad $expr shows the server's reason and field.
      await page.goto(weft.url + `/#/p/${P}/calls?expr=${encodeURIComponent('{"$regex": ["a"]}')}`);
      await until(() => page.getByRole('alert').textContent()).toContain('$regex');
      await page.close();
    },
    UI_TEST_MS,
  );
});

describe('the web UI views', () => {
  it(
    'pages the calls table as it scrolls: rows in the DOM stay few, later pages continue from the row before',
    async () => {
      const many = 'uiteam/many';
      const t0 = Date.now() - 3_600_000;
      const batch = Array.from({ length: 250 }, (_, i) => {
        const at = new Date(t0 + Math.floor(i / 2) * 1000).toISOString(); // pairs share a start: ties broken by id
        return {
          mode: 'start',
          req: {
            start: {
              project_id: many,
              id: `m-${String(i).padStart(4, '0')}`,
              op_name: `op-${i % 5}`,
              started_at: at,
              inputs: { i },
              attributes: {},
            },
          },
        };
      });
      expect((await clientFor(api, member).post('/call/upsert_batch', { batch })).status).toBe(200);
      const page = await newPage();
      const bodies: { offset?: number; query?: unknown }[] = [];
      page.on('request', (r) => r.url().endsWith('/calls/stream_query') && bodies.push(JSON.parse(r.postData() ?? '{}')));
      await signIn(page, member.key);
      await page.goto(weft.url + `/#/p/${many}/calls`);
      await until(() => page.locator('.table-meta').textContent()).toContain('250 calls');
      const body = page.locator('.vt-body');
      const seen = new Set<string>();
      for (let i = 0; i < 40; i++) {
        for (const id of await page.locator('.vt-body .call-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-call-id')!)))
          seen.add(id);
        expect(await page.locator('.vt-body .vt-row').count()).toBeLessThan(100);
        await body.evaluate((el: any) => {
          el.scrollTop += 300;
        });
        await page.waitForTimeout(150);
        await until(() => page.locator('.vt-body .placeholder').count()).toBe(0);
      }
      for (const id of await page.locator('.vt-body .call-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-call-id')!)))
        seen.add(id);
      // Every call once, in the server's order (newest first, ties by id).
      const expected = (
        await clientFor(api, member).jsonl('/calls/stream_query', {
          project_id: many,
          sort_by: [{ field: 'started_at', direction: 'desc' }],
          columns: ['id'],
        })
      ).map((c) => c.id);
      expect([...seen]).toEqual(expected);
      // Three pages of ≤ 100: the first by offset 0, the next two after the last row of the one before.
      expect(bodies.length).toBe(3);
      expect(bodies.map((b) => b.offset)).toEqual([0, 0, 0]);
      expect(bodies[0]!.query).toBeUndefined();
      expect(JSON.stringify(bodies[1]!.query)).toContain(expected[99]);
      expect(JSON.stringify(bodies[2]!.query)).toContain(expected[199]);
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'opens a trace: tree structure, waterfall order, errors marked, detail pane with conversation, usage, refs, feedback',
    async () => {
      const page = await newPage();
      await signIn(page, member.key);
      await page.goto(weft.url + `/#/p/${P}/calls?roots=1&sort=started_at:asc`);
      const rows = page.locator('.vt-body .call-row');
      await until(() => rows.count()).toBeGreaterThan(0);
      // Keyboard: the first row is active; Enter opens its trace.
      await page.locator('.vt-body').focus();
      await page.keyboard.press('Enter');
      await page.locator('.tree').waitFor();
      const items = page.locator('.tree [role=treeitem]');
      await until(() => items.count()).toBe(4);
      expect(await items.locator('.tree-label').allTextContents()).toEqual([
        'Answer a question',
        'openai.chat.completions.create',
        'search',
        'format_answer',
      ]);
      expect(await items.evaluateAll((els) => els.map((e) => Number(e.getAttribute('aria-level'))))).toEqual([1, 2, 2, 2]);
      // The waterfall is to scale and in start order: each bar starts where its call started.
      const starts = await items.locator('.bar').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-start-us'))));
      expect(starts).toEqual([0, 100_000, 2_200_000, 3_100_000]);
      const lefts = await items.locator('.bar').evaluateAll((els) => els.map((e) => e.getBoundingClientRect().left));
      expect([...lefts].sort((a, b) => a - b)).toEqual(lefts);
      const widths = await items.locator('.bar').evaluateAll((els) => els.map((e) => e.getBoundingClientRect().width));
      expect(widths[1]! / widths[0]!).toBeCloseTo(2000 / 4200, 1);
      // The failed tool call is marked.
      expect(await items.nth(2).getAttribute('class')).toContain('has-error');
      await expect(items.nth(2).locator('.error-mark').count()).resolves.toBe(1);
      // Root detail: refs expanded to the dataset, feedback.
      const detail = page.locator('.call-detail');
      await until(() => detail.locator('.refs').textContent()).toContain('arith-qa');
      await until(() => detail.locator('.refs').textContent()).toContain('Dataset');
      expect(await detail.locator('.feedback').textContent()).toContain('👍');
      expect(await detail.locator('.feedback').textContent()).toContain('correct and fast');
      await shot(page, '04-trace');
      // ↓ selects the chat call: messages as a conversation, usage with its cost.
      await page.locator('.tree').focus();
      await page.keyboard.press('ArrowDown');
      await until(() => detail.locator('h3').first().textContent()).toBe('openai.chat.completions.create');
      expect(await detail.locator('.message.role-user').textContent()).toContain('What is 2 + 2?');
      expect(await detail.locator('.message.role-assistant').textContent()).toContain('The answer is 4.');
      expect(await detail.locator('table.usage tbody tr').textContent()).toMatch(/gpt-4o.*150\$0\.0006/);
      await shot(page, '05-trace-chat');
      await page.keyboard.press('ArrowDown');
      await until(() => detail.locator('.exception').textContent()).toContain('TimeoutError: search backend did not answer');
      // The dataset ref opens the dataset.
      await page.keyboard.press('ArrowUp');
      await page.keyboard.press('ArrowUp');
      await detail.locator('.ref-link').first().click();
      await until(() => page.locator('.object-head h2').textContent()).toContain('arith-qa');
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'shows an OTLP trace as well: GenAI messages and tool calls',
    async () => {
      const page = await newPage();
      await signIn(page, member.key);
      await page.goto(weft.url + `/#/p/${P}/trace/${seeded.otelTraceId}?call=b2b2b2b2b2b2b2b2`);
      const items = page.locator('.tree [role=treeitem]');
      await until(() => items.count()).toBe(3);
      expect(await items.locator('.tree-label').allTextContents()).toEqual([
        'invoke_agent weather-bot',
        'chat gpt-4o',
        'execute_tool get_weather',
      ]);
      expect(await items.evaluateAll((els) => els.map((e) => Number(e.getAttribute('aria-level'))))).toEqual([1, 2, 2]);
      const detail = page.locator('.call-detail');
      await until(() => detail.locator('.message.role-user').textContent()).toContain('Weather in Paris?');
      expect(await detail.locator('.message.role-assistant .tool-call').textContent()).toContain('get_weather');
      expect(await detail.locator('.message.role-assistant .tool-call').textContent()).toContain('Paris');
      expect(await detail.locator('table.usage').textContent()).toContain('105');
      await shot(page, '06-trace-otlp');
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'lists threads and opens one as its conversation, each turn linking to its trace',
    async () => {
      const page = await newPage();
      await signIn(page, member.key);
      await page.getByRole('link', { name: P }).click();
      await page.getByRole('link', { name: 'Threads' }).click();
      const row = page.locator('table.threads tbody tr');
      await until(() => row.count()).toBe(1);
      const cells = await row.locator('td').allTextContents();
      expect(cells[0]).toBe(seeded.threadId);
      expect(cells[1]).toBe('3');
      // Turns of 800, 1200 and 1600 ms: p50 1200 ms, as the API says.
      const [thread] = await clientFor(api, member).jsonl('/threads/stream_query', { project_id: P });
      expect(thread.p50_turn_duration_ms).toBe(1200);
      expect(cells[2]).toBe('1.20 s');
      await shot(page, '07-threads');
      await row.first().click();
      const turns = page.locator('.turn');
      await until(() => turns.count()).toBe(3);
      expect(await turns.evaluateAll((els) => els.map((e) => e.getAttribute('data-turn-id')))).toEqual(seeded.turnIds);
      expect(await turns.nth(1).locator('.turn-in').textContent()).toContain('It is order 1234.');
      expect(await turns.nth(1).locator('.turn-out').textContent()).toContain('Order 1234 ships tomorrow.');
      await shot(page, '08-thread');
      await turns
        .nth(1)
        .getByRole('link', { name: /Open trace/ })
        .click();
      await until(() => page.locator('.tree [role=treeitem][aria-selected=true]').getAttribute('data-call-id')).toBe(seeded.turnIds[1]);
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'draws analytics from aggregate queries: non-empty charts whose totals equal /calls/query_stats',
    async () => {
      const page = await newPage();
      await signIn(page, member.key);
      await page.goto(weft.url + `/#/p/${P}/analytics`);
      const stats = await clientFor(api, member).post('/calls/query_stats', { project_id: P });
      const stat = (name: string) => page.locator(`.stat[data-stat="${name}"]`).getAttribute('data-value');
      await until(() => stat('Calls')).toBe(String(stats.body.count));
      expect(await page.locator('figure[data-chart="Calls and errors"]').getAttribute('data-total')).toBe(String(stats.body.count));
      const agg = (await clientFor(api, member).post('/calls/aggregate', { project_id: P })).body;
      expect(Number(await stat('Cost'))).toBeCloseTo(agg.totals.cost, 12);
      expect(Number(await stat('Errors'))).toBe(1);
      expect(Number(await page.locator('figure[data-chart="Cost per model"]').getAttribute('data-total'))).toBeCloseTo(agg.totals.cost, 12);
      // Every chart drew something: its canvas has painted pixels.
      // (Browser-side code: typed loosely, the test's TypeScript has no DOM library.)
      const painted = await page.locator('figure.chart canvas').evaluateAll((els: any[]) =>
        els.map((canvas) => {
          const px: Uint8ClampedArray = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
          let n = 0;
          for (let i = 3; i < px.length; i += 4) if (px[i]! > 0) n++;
          return n;
        }),
      );
      expect(painted.length).toBe(6);
      for (const n of painted) expect(n).toBeGreaterThan(500);
      await shot(page, '09-analytics');
      // A filter narrows it, in the URL, and the totals follow /calls/query_stats for it.
      await page.getByRole('textbox', { name: 'Op' }).fill('openai.chat.completions.create');
      await page.getByRole('textbox', { name: 'Op' }).press('Enter');
      const chats = await clientFor(api, member).post('/calls/query_stats', {
        project_id: P,
        filter: { op_names: ['openai.chat.completions.create'] },
      });
      await until(() => stat('Calls')).toBe(String(chats.body.count));
      expect(page.url()).toContain('op=openai.chat.completions.create');
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'reads objects and a dataset page by page, and links to the calls that used it',
    async () => {
      const page = await newPage();
      await signIn(page, member.key);
      await page.goto(weft.url + `/#/p/${P}/objects`);
      const row = page.locator('table.objects tbody tr');
      await until(() => row.count()).toBe(1);
      expect(await row.first().textContent()).toContain('arith-qa');
      await shot(page, '10-objects');
      await row.first().click();
      const dataRows = page.locator('table.rows tbody tr');
      await until(() => dataRows.count()).toBe(25);
      expect(await dataRows.first().textContent()).toContain('What is 0 + 0?');
      await shot(page, '11-dataset');
      await page.getByRole('button', { name: 'Next →' }).click();
      await until(() => dataRows.count()).toBe(5);
      expect(await dataRows.first().locator('td').first().textContent()).toBe('25');
      expect(await page.getByRole('button', { name: 'Next →' }).isDisabled()).toBe(true);
      await page.getByRole('link', { name: /Calls using this version/ }).click();
      const calls = page.locator('.vt-body .call-row');
      await until(() => calls.count()).toBe(1);
      expect(await calls.first().locator('.col-op').textContent()).toBe('agent.run');
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'looks right at 1920 px too, and in dark mode (no horizontal overflow in any view)',
    async () => {
      for (const [width, scheme] of [
        [1280, 'light'],
        [1920, 'light'],
        [1280, 'dark'],
      ] as const) {
        const page = await newPage(width, 1000, scheme);
        await signIn(page, member.key);
        // Each view with what shows it is loaded.
        const views: [string, string, string][] = [
          ['calls', `/#/p/${P}/calls`, '.call-row'],
          ['trace', `/#/p/${P}/trace/${seeded.traceId}?call=${seeded.chatId}`, '.message.role-assistant'],
          ['threads', `/#/p/${P}/threads`, 'table.threads tbody tr'],
          ['thread', `/#/p/${P}/threads/${seeded.threadId}`, '.turn'],
          ['analytics', `/#/p/${P}/analytics`, 'figure.chart canvas'],
          ['objects', `/#/p/${P}/objects/arith-qa`, 'table.rows tbody tr'],
        ];
        for (const [name, path, ready] of views) {
          await page.goto(weft.url + path);
          await page.locator(ready).first().waitFor();
          await page.waitForLoadState('networkidle');
          const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
          expect(overflow, `${name} at ${width}px`).toBeLessThanOrEqual(0);
          await shot(page, `w${width}${scheme === 'dark' ? '-dark' : ''}-${name}`);
        }
        await page.close();
      }
    },
    UI_TEST_MS,
  );
});
