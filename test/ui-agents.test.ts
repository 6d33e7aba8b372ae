import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS_DIR, launchBrowser } from './helpers/browser';
import { Client } from './helpers/client';
import { clientFor, createKey, type TestKey } from './helpers/keys';
import { startModelServer, type ModelServer } from './helpers/model-server';
import { ensureInstrumentationClients, runInstrumentedClient } from './helpers/python-clients';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';

/**
 * The web UI's Agents view (Weave 0.54's agents family) in a real headless Chromium against the
 * real all-in-one server, with two agent runs made by their real clients (pinned, installed from
 * PyPI into .cache/), their model calls through weft's /v1 front to the model stand-in: an OpenAI
 * Agents SDK run through openinference-instrumentation-openai-agents, and a model call
 * instrumented by opentelemetry-instrumentation-openai-v2 (latest GenAI semconv, content on the
 * spans) under the app's own `invoke_agent` span. Both show as agents and as conversations read
 * as chats.
 */
const P = 'uiagents/app';
let weft: RunningWeft;
let upstream: ModelServer;
let member: Client;
let key: TestKey;
let browser: Browser;
const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS_DIR, `agents-${name}.png`), fullPage: true });

beforeAll(async () => {
  upstream = await startModelServer();
  const dir = newDataDir('ui-agents');
  const upstreams = join(dir, 'upstreams.json');
  writeFileSync(upstreams, JSON.stringify({ upstreams: [{ name: 'vllm', base_url: `${upstream.url}/vllm/v1`, models: ['m-vllm'] }] }));
  [weft] = await Promise.all([startWeft({ dataDir: dir, env: { WEFT_UPSTREAMS_FILE: upstreams } }), ensureInstrumentationClients()]);
  const api = new Client(weft.url);
  await api.post('/admin/entities/create', { name: 'uiagents' });
  key = await createKey(api, 'ui-agents', ['uiagents']);
  member = clientFor(api, key);
  for (const mode of ['agents', 'genai-agent']) {
    const r = await runInstrumentedClient('instrumented_openai.py', [mode, weft.url, key.key, P, join(dir, `${mode}.json`)], {
      timeoutMs: 180_000,
    });
    expect(r.code, `instrumented_openai.py ${mode}: ${r.stderr}`).toBe(0);
  }
  browser = await launchBrowser();
}, 900_000);
afterAll(async () => {
  await browser?.close();
  await weft?.stop();
  await upstream?.close();
});

describe('the Agents view', () => {
  it('answers the agents family for both runs', async () => {
    const agents = (await member.post('/agents/query', { project_id: P, sort_by: [{ field: 'agent_name', direction: 'asc' }] })).body;
    expect(agents.agents.map((a: { agent_name: string; invocation_count: number }) => [a.agent_name, a.invocation_count])).toEqual([
      ['Weather agent', 1],
      ['planner', 1],
    ]);
    const chat = (await member.post('/agents/conversations/chat', { project_id: P, conversation_id: 'agents-group-1' })).body;
    expect(chat.turns[0].messages.map((m: { type: string }) => m.type)).toEqual([
      'agent_start',
      'user_message',
      'tool_call',
      'assistant_message',
    ]);
    expect(chat.turns[0].messages[2].tool_call).toMatchObject({
      tool_name: 'get_weather',
      tool_arguments: '{"city":"Paris"}',
      tool_result: 'sunny in Paris',
    });
  });

  it('lists the agents and conversations, and shows each conversation as a chat', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(weft.url + '/');
    await page.getByLabel('API key').fill(key.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();
    await page.goto(`${weft.url}/#/p/${P}/agents`);
    await page.getByRole('heading', { name: 'Agents' }).waitFor();
    const agents = page.locator('table.agents tbody tr');
    await expect.poll(() => agents.count()).toBe(2);
    expect(await page.locator('table.agents').textContent()).toMatch(/planner.*Weather agent|Weather agent.*planner/s);
    const conversations = page.locator('table.conversations tbody tr');
    await expect.poll(() => conversations.count()).toBe(2);
    await shot(page, 'list');

    // The OpenAI Agents SDK run (OpenInference): the user's question, the tool it ran, the answer.
    await page.getByRole('link', { name: 'agents-group-1' }).click();
    await page.getByText('Turn 1').waitFor();
    const turn = page.locator('.agent-turn').first();
    await expect.poll(() => turn.locator('.message').count()).toBe(3);
    expect(await turn.locator('.message.role-user').textContent()).toContain('tools');
    expect(await turn.locator('.message.role-tool').textContent()).toContain('get_weather');
    expect(await turn.locator('.message.role-tool').textContent()).toContain('sunny in Paris');
    expect(await turn.locator('.message.role-assistant').textContent()).toContain('Hello from vllm');
    expect(await turn.locator('.agent-start').textContent()).toContain('Weather agent');
    expect(await page.locator('table.agent-spans tbody tr').count()).toBe(8);
    await shot(page, 'openai-agents');

    // The openai-v2 agent run (GenAI semconv).
    await page.goto(`${weft.url}/#/p/${P}/agents`);
    await page.getByRole('link', { name: 'trip-planner-42' }).click();
    await page.getByText('Turn 1').waitFor();
    const v2 = page.locator('.agent-turn').first();
    await expect.poll(() => v2.locator('.message').count()).toBe(2);
    expect(await v2.locator('.message.role-user').textContent()).toContain('Plan a day in Lisbon');
    expect(await v2.locator('.message.role-assistant').textContent()).toContain('Hello from vllm');
    expect(await v2.locator('h3').textContent()).toMatch(/planner.*v3.*\d+ in \/ \d+ out/);
    await shot(page, 'openai-v2');
    expect(errors).toEqual([]);
  }, 180_000);
});
