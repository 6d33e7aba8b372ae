import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS_DIR, launchBrowser } from './helpers/browser';
import { Client } from './helpers/client';
import { clientFor, createKey, type TestKey } from './helpers/keys';
import { startWeft, type RunningWeft } from './helpers/server';

/**
 * The web UI's Delivery tab and lag banner, in a real headless Chromium against the real
 * all-in-one server. Its ingest log waits 30 s before storing what it acknowledged (a writer
 * behind, as an operator would meet it), and a lag over 1.5 s is a warning: calls written then
 * raise the banner over the project's pages (here the Delivery tab's: every other view reads
 * calls, and a read makes the writer store what was acknowledged before it), and once stored the
 * tab shows them all and the banner goes.
 */
const P = 'ui/deliv';
let weft: RunningWeft;
let api: Client;
let member: Client;
let key: TestKey;
let browser: Browser;
const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS_DIR, `delivery-${name}.png`), fullPage: true });
const id = (n: number) => `0199eeee-0000-7000-8000-${String(n).padStart(12, '0')}`;
const calls = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => from + i).flatMap((k) => [
    {
      mode: 'start',
      req: {
        start: {
          project_id: P,
          id: id(k),
          trace_id: id(k),
          op_name: 'op',
          started_at: new Date().toISOString(),
          inputs: {},
          attributes: {},
        },
      },
    },
    { mode: 'end', req: { end: { project_id: P, id: id(k), ended_at: new Date().toISOString(), output: k, summary: {} } } },
  ]);

beforeAll(async () => {
  // No monitor passes: each reads calls, which would store what waits.
  weft = await startWeft({
    env: { WEFT_LOG_FLUSH_MS: '90000', WEFT_DELIVERY_LAG_WARN_MS: '1500', WEFT_BODY_LIMIT_BYTES: '65536', WEFT_MONITORS_INTERVAL_MS: '0' },
  });
  api = new Client(weft.url);
  await api.post('/admin/entities/create', { name: 'ui' });
  key = await createKey(api, 'ui-operator', ['ui']);
  member = clientFor(api, key);
  browser = await launchBrowser();
}, 300_000);
afterAll(async () => {
  await browser?.close();
  await weft?.stop();
});

async function signedIn(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.on('pageerror', (e) => console.error('page error:', e.message));
  await page.goto(weft.url + '/');
  await page.getByLabel('API key').fill(key.key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();
  return page;
}

describe('delivery in the UI', () => {
  it('warns over every page of a project while its calls are late, and counts what each entrance took and refused', async () => {
    // Signed in first: the projects list reads calls, which would store what waits.
    const page = await signedIn();
    expect((await member.post('/call/upsert_batch', { batch: calls(1, 3) })).status).toBe(200);
    // A refusal the tab shows by reason: an OTLP request over the body limit.
    const big = await member.raw('/otel/v1/traces', JSON.stringify({ pad: 'x'.repeat(70_000) }), { project_id: P });
    expect(big.status).toBe(413);
    await new Promise((r) => setTimeout(r, 2_000));

    // The Delivery tab reads no calls (every read waits for what was acknowledged, which would store them now).
    await page.goto(`${weft.url}/#/p/${P}/delivery`);
    await page.getByRole('heading', { name: 'Delivery' }).waitFor();
    const banner = page.getByRole('alert').filter({ hasText: 'Calls are arriving late' });
    await banner.waitFor({ timeout: 15_000 });
    expect(await banner.textContent()).toMatch(/6 call parts are waiting/);
    const row = (name: string) => page.locator('table.delivery tr', { hasText: name });
    await expect
      .poll(() => row('HTTP calls').locator('td').allTextContents())
      .toEqual(['HTTP calls (Weave SDKs)', '6', '0', '0', '0', '0', '0']);
    expect(await row('OTLP/HTTP').locator('td').nth(5).textContent()).toBe('1 too_large 1');
    expect(await page.locator('.lag-panel').textContent()).toMatch(/6 call parts acknowledged and not yet stored/);
    await shot(page, 'late');

    // A read waits for what was acknowledged before it: the parts are stored now.
    expect((await member.post('/calls/query_stats', { project_id: P })).body.count).toBe(3);
    await expect.poll(() => row('HTTP calls').locator('td').nth(2).textContent(), { timeout: 15_000 }).toBe('6');
    await expect.poll(() => banner.count(), { timeout: 15_000 }).toBe(0);
    expect(await page.locator('.lag-panel').textContent()).toMatch(/nothing waiting/);
    expect(await row('All entrances').locator('td').allTextContents()).toEqual(['All entrances', '6', '6', '0', '0', '1 too_large 1', '0']);
    await shot(page, 'stored');
  }, 120_000);

  it("sets the project's retention, redaction and sampling on its Settings tab, as a newcomer would", async () => {
    const page = await signedIn();
    await page.goto(`${weft.url}/#/p/${P}/settings`);
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    const section = (name: string) => page.locator('section.setting', { has: page.getByRole('heading', { name }) });
    const forever = page.getByRole('radio', { name: 'Keep calls forever' });
    await forever.waitFor();
    expect(await forever.isChecked()).toBe(true);
    await shot(page, 'settings-default');

    await page.getByRole('radio', { name: 'Keep calls for days', exact: true }).check();
    await page.getByLabel('Retention in days').fill('14');
    await section('Retention').getByRole('button', { name: 'Save' }).click();
    await section('Retention').getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    expect((await member.post('/project/ttl_settings/read', { project_id: P })).body).toEqual({ retention_days: 14 });

    await page.getByRole('checkbox', { name: /Redact sensitive data/ }).check();
    await section('Sensitive data').getByRole('button', { name: 'Save' }).click();
    await section('Sensitive data').getByRole('status').filter({ hasText: 'Saved' }).waitFor();

    await page.getByLabel('Share of traces stored, in percent').fill('0');
    await page.getByRole('checkbox', { name: /Dry run/ }).check();
    await section('Sampling').getByRole('button', { name: 'Save' }).click();
    await section('Sampling').getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    expect((await member.post('/project/ingest_sampling_settings/read', { project_id: P })).body).toEqual({
      sample_rate: 0,
      dry_run: true,
    });
    await shot(page, 'settings-saved');

    // Kept: a new visit shows them; a new call is redacted, kept (a dry run) and counted.
    await page.reload();
    await page.getByLabel('Retention in days').waitFor();
    expect(await page.getByLabel('Retention in days').inputValue()).toBe('14');
    expect(await page.getByRole('checkbox', { name: /Redact sensitive data/ }).isChecked()).toBe(true);
    expect(await page.getByLabel('Share of traces stored, in percent').inputValue()).toBe('0');
    const batch = calls(10, 1);
    (batch[0]!.req as { start: { inputs: Record<string, string> } }).start.inputs = { to: 'frank@example.com' };
    expect((await member.post('/call/upsert_batch', { batch })).status).toBe(200);
    const stored = await member.jsonl('/calls/stream_query', { project_id: P, filter: { call_ids: [id(10)] } });
    expect(stored[0].inputs).toEqual({ to: '<EMAIL_ADDRESS>' });
    await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Delivery' }).click();
    const row = page.locator('table.delivery tr', { hasText: 'HTTP calls' });
    await expect.poll(() => row.locator('td').nth(4).textContent(), { timeout: 15_000 }).toBe('0 (+2 dry run)');
    await shot(page, 'dry-run');
  }, 120_000);
});
