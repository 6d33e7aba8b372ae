import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS_DIR, launchBrowser } from './helpers/browser';
import { Client } from './helpers/client';
import { clientFor, createKey, type TestKey } from './helpers/keys';
import { REPO_ROOT } from './helpers/paths';
import { startWeft, type RunningWeft } from './helpers/server';

/**
 * The web UI's Agents view (Weave 0.54's agents family) in a real headless Chromium against the
 * real all-in-one server, with two agent runs as their instrumentations export them: an OpenAI
 * Agents SDK run through openinference-instrumentation-openai-agents (the spans a real run
 * exported, libs/otlp/test/fixtures/agents.json) and an agent whose model calls are
 * opentelemetry-instrumentation-openai-v2's (latest GenAI semconv, content on the spans) under
 * the app's own `invoke_agent` span. Both show as agents and as conversations read as chats.
 */
const P = 'uiagents/app';
let weft: RunningWeft;
let member: Client;
let key: TestKey;
let browser: Browser;
const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS_DIR, `agents-${name}.png`), fullPage: true });

const TRACE_V2 = 'cd'.repeat(16);
function openaiV2Run() {
  const at = (ms: number) => String(BigInt(Date.now() - 60_000) * 1_000_000n + BigInt(ms) * 1_000_000n);
  const attr = (key: string, v: string | number) => ({ key, value: typeof v === 'number' ? { intValue: String(v) } : { stringValue: v } });
  const span = (id: string, parent: string | null, name: string, ms: number, attrs: [string, string | number][]) => ({
    traceId: TRACE_V2,
    spanId: id.repeat(8),
    ...(parent ? { parentSpanId: parent.repeat(8) } : {}),
    name,
    kind: parent ? 3 : 1,
    startTimeUnixNano: at(ms),
    endTimeUnixNano: at(ms + 400),
    status: { code: 1 },
    attributes: attrs.map(([k, v]) => attr(k, v)),
  });
  const conv: [string, string] = ['gen_ai.conversation.id', 'trip-planner-42'];
  return {
    resourceSpans: [
      {
        resource: { attributes: [attr('service.name', 'trip-planner')] },
        scopeSpans: [
          {
            scope: { name: 'opentelemetry.instrumentation.openai_v2', version: '2.4b0' },
            spans: [
              span('01', null, 'invoke_agent planner', 0, [
                conv,
                ['gen_ai.operation.name', 'invoke_agent'],
                ['gen_ai.agent.name', 'planner'],
                ['gen_ai.agent.version', '3'],
              ]),
              span('02', '01', 'chat gpt-4o-mini', 10, [
                conv,
                ['gen_ai.operation.name', 'chat'],
                ['gen_ai.provider.name', 'openai'],
                ['gen_ai.request.model', 'gpt-4o-mini'],
                ['gen_ai.response.model', 'gpt-4o-mini'],
                ['gen_ai.usage.input_tokens', 42],
                ['gen_ai.usage.output_tokens', 12],
                ['gen_ai.input.messages', JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Plan a day in Lisbon' }] }])],
                [
                  'gen_ai.output.messages',
                  JSON.stringify([
                    { role: 'assistant', parts: [{ type: 'text', content: 'Morning in Alfama, then Belém.' }], finish_reason: 'stop' },
                  ]),
                ],
              ]),
            ],
          },
        ],
      },
    ],
  };
}

beforeAll(async () => {
  weft = await startWeft();
  const api = new Client(weft.url);
  await api.post('/admin/entities/create', { name: 'uiagents' });
  key = await createKey(api, 'ui-agents', ['uiagents']);
  member = clientFor(api, key);
  const otlp = { 'content-type': 'application/json', project_id: P };
  const fixture = readFileSync(join(REPO_ROOT, 'libs/otlp/test/fixtures/agents.json'), 'utf8');
  for (const body of [fixture, JSON.stringify(openaiV2Run())]) {
    const r = await member.raw('/otel/v1/traces', body, otlp);
    expect(r.status, r.text).toBe(200);
  }
  browser = await launchBrowser();
}, 300_000);
afterAll(async () => {
  await browser?.close();
  await weft?.stop();
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
    expect(await v2.locator('.message.role-assistant').textContent()).toContain('Morning in Alfama, then Belém.');
    expect(await v2.locator('h3').textContent()).toMatch(/planner.*v3.*42 in \/ 12 out/);
    await shot(page, 'openai-v2');
    expect(errors).toEqual([]);
  }, 180_000);
});
