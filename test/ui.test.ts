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
  await clientFor(api, other).post('/call/start', { start: { project_id: 'others/secret', op_name: 'x', started_at: new Date().toISOString(), inputs: {}, attributes: {} } });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await weft?.stop();
});

async function newPage(width = 1280, height = 800): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height } });
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
const until = <T,>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 20_000, interval: 100 });

const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS_DIR, `${name}.png`) });

describe('the UI read endpoints', () => {
  it('/projects/list lists the key\'s projects only, with call counts and last activity', async () => {
    const r = await clientFor(api, member).post('/projects/list', {});
    expect(r.status, r.text).toBe(200);
    expect(r.body.projects).toEqual([{ project_id: P, call_count: seeded.callCount, object_count: 1, last_activity: expect.stringMatching(/Z$/) }]);
    const admin = await api.post('/projects/list', {});
    expect(admin.body.projects.map((p: { project_id: string }) => p.project_id).sort()).toEqual(['others/secret', P].sort());
    const denied = await clientFor(api, member).post('/projects/list', { entity: 'others' });
    expect(denied.status).toBe(403);
    const bad = await clientFor(api, member).post('/projects/list', { limit: -1 });
    expect(bad.status).toBe(400);
    expect(bad.body.field).toBe('limit');
    expect((await new Client(weft.url, null).post('/projects/list', {})).status).toBe(401);
  });

  it('/calls/aggregate totals equal /calls/query_stats, per op and model add up, costs use the prices', async () => {
    const m = clientFor(api, member);
    for (const body of [{}, { filter: { op_names: ['openai.chat.completions.create'] } }, { query: { $expr: { $eq: [{ $getField: 'summary.weave.status' }, { $literal: 'error' }] } } }]) {
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
    expect(all.totals.cost).toBeCloseTo(all.by_model.reduce((s: number, x: { cost: number }) => s + x.cost, 0), 9);
    // The same costs as include_costs on the calls themselves.
    const calls = await m.jsonl('/calls/stream_query', { project_id: P, include_costs: true });
    let cost = 0;
    for (const c of calls) for (const k of Object.values((c.summary?.weave?.costs ?? {}) as Record<string, Record<string, number>>)) cost += k.prompt_tokens_total_cost + k.completion_tokens_total_cost;
    expect(all.totals.cost).toBeCloseTo(cost, 9);
    const bad = await m.post('/calls/aggregate', { project_id: P, query: { $expr: { $regex: [] } } });
    expect(bad.status).toBe(400);
    expect(bad.body.field).toContain('$regex');
    expect((await m.post('/calls/aggregate', { project_id: 'others/secret' })).status).toBe(403);
  });

  it('publishes both in /openapi.json as extras', async () => {
    const doc = (await (await fetch(`${weft.url}/openapi.json`)).json()) as { paths: Record<string, { post: { tags: string[]; responses: Record<string, unknown> } }> };
    expect(doc.paths['/projects/list'].post.tags).toContain('extra');
    expect(doc.paths['/calls/aggregate'].post.responses['200']).toBeDefined();
  });
});

describe('the web UI in Chromium', () => {
  it('serves the page and its assets from weft itself (no other origin)', async () => {
    const page = await newPage();
    const origins = new Set<string>();
    page.on('request', (r) => origins.add(new URL(r.url()).origin));
    await page.goto(weft.url + '/');
    await page.getByLabel('API key').waitFor();
    expect([...origins]).toEqual([new URL(weft.url).origin]);
    await shot(page, '01-signin');
    await page.close();
  });

  it('refuses a bad key with the server\'s reason, then signs in and lists the projects', async () => {
    const page = await newPage();
    await page.goto(weft.url + '/');
    await page.getByLabel('API key').fill('weft_not-a-real-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await until(() => page.getByRole('alert').textContent()).toContain('401');
    await signIn(page, member.key);
    const rows = page.locator('table.projects tbody tr');
    await until(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain(P);
    expect(await rows.first().locator('td.num').first().textContent()).toBe(String(seeded.callCount));
    // The key stays in the tab's session, not in the URL.
    expect(page.url()).not.toContain(member.key);
    await shot(page, '02-projects');
    await page.close();
  });

  it('shows the calls table, sorts on the server, keeps filters in the URL', async () => {
    const page = await newPage();
    await signIn(page, member.key);
    await page.getByRole('link', { name: P }).click();
    const rows = page.locator('.vt-body .call-row');
    await until(() => rows.count()).toBe(seeded.callCount);
    await until(() => page.locator('.table-meta').textContent()).toContain(`${seeded.callCount} calls`);
    await shot(page, '03-calls');
    // Sort by op ascending (two clicks: desc first), on the server.
    await page.getByRole('button', { name: /^Op/ }).click();
    await page.getByRole('button', { name: /^Op/ }).click();
    await until(() => page.url()).toContain('sort=op_name%3Aasc');
    const expected = (await clientFor(api, member).jsonl('/calls/stream_query', { project_id: P, sort_by: [{ field: 'op_name', direction: 'asc' }], limit: 3, columns: ['op_name'] })).map((c) => c.op_name);
    await until(async () => (await rows.locator('.col-op').allTextContents()).slice(0, 3)).toEqual(expected.map((o) => o));
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
    await until(async () => (await rows.locator('.col-op').allTextContents()).sort()).toEqual(['openai.chat.completions.create', 'support.turn']);
    // A bad $expr shows the server's reason and field.
    await page.goto(weft.url + `/#/p/${P}/calls?expr=${encodeURIComponent('{"$regex": ["a"]}')}`);
    await until(() => page.getByRole('alert').textContent()).toContain('$regex');
    await page.close();
  });
});
