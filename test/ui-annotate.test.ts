import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS_DIR, launchBrowser } from './helpers/browser';
import { Client } from './helpers/client';
import { clientFor, createKey, type TestKey } from './helpers/keys';
import { startModelServer, type ModelServer } from './helpers/model-server';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';
import { runWeaveScript } from './helpers/weave-sdk';

/**
 * Annotation and the playground (issue 37, points 4 and 5) in a real headless Chromium against
 * the real all-in-one server, on what the real Weave Python SDK wrote (test/weave-sdk/annotate.py:
 * five AnnotationSpecs, four `answer` calls, an LLM call shaped as its OpenAI integration
 * records one) plus an OTLP GenAI span and an OpenInference span: scores given in the UI read
 * back with the SDK, an annotation queue walked with the keyboard, LLM calls replayed through
 * weft's inference front against the model stand-in. Expected values come from the API, the
 * SDK and the stand-in's log, not from the UI's code.
 */
let weft: RunningWeft;
let member: Client;
let memberKey: TestKey;
let browser: Browser;
let upstream: ModelServer;
let sdk: { specs: Record<string, string>; answer_ids: string[]; llm_call_id: string };

const P = 'annotate/app';
const GENAI_SPAN = '1a1a1a1a1a1a1a1a';
const OPENINFERENCE_SPAN = '2b2b2b2b2b2b2b2b';
const UI_TEST_MS = 240_000;
const until = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 20_000, interval: 100 });
const shot = (page: Page, name: string, fullPage = false) =>
  page.screenshot({ path: join(ARTIFACTS_DIR, `annotate-${name}.png`), fullPage });
const callRef = (id: string) => `weave:///${P}/call/${id}`;

interface Feedback {
  id: string;
  feedback_type: string;
  payload: Record<string, any>;
  annotation_ref: string | null;
  queue_id: string | null;
  weave_ref: string;
}
const feedbackOn = async (callId: string): Promise<Feedback[]> => {
  const r = await member.post('/feedback/query', {
    project_id: P,
    query: { $expr: { $eq: [{ $getField: 'weave_ref' }, { $literal: callRef(callId) }] } },
    sort_by: [{ field: 'created_at', direction: 'asc' }],
  });
  expect(r.status, r.text).toBe(200);
  return r.body.result;
};

/** An OTLP GenAI chat span and an OpenInference LLM span, as their instrumentations export them. */
async function sendOtlpLlmSpans(): Promise<void> {
  const now = BigInt(Date.now()) * 1_000_000n;
  const a = (key: string, v: string | number) => ({
    key,
    value: typeof v === 'number' ? (Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v }) : { stringValue: v },
  });
  const span = (id: string, name: string, attributes: unknown[]) => ({
    traceId: id.repeat(2),
    spanId: id,
    name,
    kind: 3,
    startTimeUnixNano: String(now - 900_000_000n),
    endTimeUnixNano: String(now - 100_000_000n),
    attributes,
    status: {},
  });
  const otlp = {
    resourceSpans: [
      {
        resource: { attributes: [a('service.name', 'agent')] },
        scopeSpans: [
          {
            scope: { name: 'test' },
            spans: [
              span(GENAI_SPAN, 'chat m-large', [
                a('gen_ai.operation.name', 'chat'),
                a('gen_ai.request.model', 'm-large'),
                a('gen_ai.request.temperature', 0.3),
                a('gen_ai.request.max_tokens', 100),
                a('gen_ai.system_instructions', JSON.stringify([{ type: 'text', content: 'You are terse.' }])),
                a('gen_ai.input.messages', JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Name a colour.' }] }])),
                a(
                  'gen_ai.output.messages',
                  JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'Blue.' }], finish_reason: 'stop' }]),
                ),
                a('gen_ai.usage.input_tokens', 12),
                a('gen_ai.usage.output_tokens', 2),
              ]),
              span(OPENINFERENCE_SPAN, 'ChatCompletion', [
                a('openinference.span.kind', 'LLM'),
                a('llm.model_name', 'm-small'),
                a('llm.invocation_parameters', JSON.stringify({ temperature: 0.9, max_tokens: 50 })),
                a(
                  'input.value',
                  JSON.stringify({
                    messages: [
                      { role: 'system', content: 'Reply in French.' },
                      { role: 'user', content: 'Good morning' },
                    ],
                  }),
                ),
                a('input.mime_type', 'application/json'),
                a('llm.input_messages.0.message.role', 'system'),
                a('llm.input_messages.0.message.content', 'Reply in French.'),
                a('llm.input_messages.1.message.role', 'user'),
                a('llm.input_messages.1.message.content', 'Good morning'),
                a('llm.output_messages.0.message.role', 'assistant'),
                a('llm.output_messages.0.message.content', 'Bonjour'),
                a('llm.token_count.prompt', 9),
                a('llm.token_count.completion', 1),
              ]),
            ],
          },
        ],
      },
    ],
  };
  const r = await member.post('/otel/v1/traces', otlp, { project_id: P });
  expect(r.status, r.text).toBe(200);
}

beforeAll(async () => {
  upstream = await startModelServer();
  // The stand-in says which model answered, at which temperature, to what: the UI must show it.
  upstream.script((body) => {
    const last = [...(body.messages ?? [])].reverse().find((m: { role: string }) => m.role === 'user');
    return { content: `[${body.model} t=${body.temperature ?? '-'}] you said: ${last?.content ?? '?'}` };
  });
  const dir = newDataDir('ui-annotate');
  const file = join(dir, 'upstreams.json');
  writeFileSync(
    file,
    JSON.stringify({ upstreams: [{ name: 'stand-in', base_url: `${upstream.url}/vllm/v1`, models: ['m-small', 'm-large'] }] }),
  );
  weft = await startWeft({ dataDir: dir, env: { WEFT_UPSTREAMS_FILE: file, WEFT_RATE_LIMIT_MAX: '0' } });
  const api = new Client(weft.url);
  await api.post('/admin/entities/create', { name: 'annotate' });
  memberKey = await createKey(api, 'annotate-alice', ['annotate']);
  member = clientFor(api, memberKey);
  [sdk, browser] = await Promise.all([
    runWeaveScript<typeof sdk>('annotate.py', [], { baseUrl: weft.url, apiKey: memberKey.key, project: P }),
    launchBrowser(),
  ]);
  await sendOtlpLlmSpans();
}, 900_000);
afterAll(async () => {
  await browser?.close();
  await weft?.stop();
  await upstream?.close();
});

async function signedIn(path: string, width = 1280, colorScheme: 'light' | 'dark' = 'light'): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme });
  const page = await context.newPage();
  page.on('pageerror', (e) => console.error('page error:', e.message));
  page.on('close', () => context.close().catch(() => {}));
  await page.goto(weft.url + path);
  await page.getByLabel('API key').fill(memberKey.key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  return page;
}

const field = (page: Page, spec: string) => page.locator(`.score-field[data-spec="${spec}"]`);
const option = (page: Page, spec: string, label: string) => field(page, spec).getByRole('button', { name: label, exact: true });

describe('annotation', () => {
  it(
    'scores a call with the AnnotationSpecs the SDK published and one made in the UI; the SDK reads the scores back',
    async () => {
      const callId = sdk.answer_ids[0]!;
      const page = await signedIn(`/#/p/${P}/call/${callId}`);
      const fields = page.locator('.call-detail .score-field');
      await until(() => fields.count()).toBe(5);
      expect(await fields.evaluateAll((els) => els.map((e) => e.getAttribute('data-spec')))).toEqual([
        'confidence',
        'correct',
        'quality',
        'tone',
        'why',
      ]);

      await option(page, 'quality', '4').click();
      await until(() => field(page, 'quality').getAttribute('data-value')).toBe('4');
      await option(page, 'tone', 'friendly').click();
      await until(() => field(page, 'tone').getAttribute('data-value')).toBe('friendly');
      await option(page, 'correct', 'Yes').click();
      await until(() => field(page, 'correct').getAttribute('data-value')).toBe('true');
      // A number outside the spec's bounds is refused before it is sent, saying why.
      const confidence = field(page, 'confidence').getByLabel('Confidence');
      await confidence.fill('1.5');
      await confidence.press('Enter');
      await until(() => field(page, 'confidence').locator('.score-problem').textContent()).toBe('Expected at most 1');
      await confidence.fill('0.8');
      await confidence.press('Enter');
      await until(() => field(page, 'confidence').getAttribute('data-value')).toBe('0.8');
      const why = field(page, 'why').getByLabel('Why');
      await why.fill('Cites no source');
      await why.press('Enter');
      await until(() => field(page, 'why').getAttribute('data-value')).toBe('Cites no source');
      // A changed score replaces the user's earlier one.
      await option(page, 'quality', '5').click();
      await until(() => field(page, 'quality').getAttribute('data-value')).toBe('5');

      // A new score defined in the UI: an AnnotationSpec object, then used at once.
      await page.getByRole('button', { name: '+ New score' }).click();
      const form = page.getByRole('form', { name: 'New score' });
      await form.locator('input[name="spec-name"]').fill('Helpfulness');
      await form.locator('select[name="spec-kind"]').selectOption('integer');
      await form.locator('input[name="spec-min"]').fill('1');
      await form.locator('input[name="spec-max"]').fill('3');
      await form.getByRole('button', { name: 'Create score' }).click();
      await until(() => field(page, 'Helpfulness').count()).toBe(1);
      await option(page, 'Helpfulness', '3').click();
      await until(() => field(page, 'Helpfulness').getAttribute('data-value')).toBe('3');
      await until(() => page.locator('.call-detail .feedback li').count()).toBe(6);
      await shot(page, 'call-scores', true);

      // Stored as the SDK writes annotations: one record per spec for this user, the spec's ref.
      const stored = (await feedbackOn(callId)).map((f) => [f.feedback_type, f.payload.value, f.annotation_ref]);
      const helpfulness = (await member.post('/objs/query', { project_id: P, filter: { object_ids: ['Helpfulness'], latest_only: true } }))
        .body.objs[0];
      expect(helpfulness.base_object_class).toBe('AnnotationSpec');
      const helpfulnessRef = `weave:///${P}/object/Helpfulness:${helpfulness.digest}`;
      const expected = [
        ['wandb.annotation.tone', 'friendly', sdk.specs.tone],
        ['wandb.annotation.correct', true, sdk.specs.correct],
        ['wandb.annotation.confidence', 0.8, sdk.specs.confidence],
        ['wandb.annotation.why', 'Cites no source', sdk.specs.why],
        ['wandb.annotation.quality', 5, sdk.specs.quality],
        ['wandb.annotation.Helpfulness', 3, helpfulnessRef],
      ];
      expect(stored).toEqual(expected);

      // The Weave SDK reads them: call.feedback, client.get_feedback(), and the new spec's class.
      const read = await runWeaveScript<{
        calls: Record<string, { feedback_type: string; payload: { value: unknown }; annotation_ref: string }[]>;
        annotations: { feedback_type: string; payload: { value: unknown }; annotation_ref: string; weave_ref: string }[];
        spec: { class: string; name: string; field_schema: unknown };
      }>('read-annotations.py', [helpfulnessRef, callId], { baseUrl: weft.url, apiKey: memberKey.key, project: P });
      const byType = (a: unknown[], b: unknown[]) => String(a[0]).localeCompare(String(b[0]));
      expect(read.calls[callId]!.map((f) => [f.feedback_type, f.payload.value, f.annotation_ref]).sort(byType)).toEqual(
        [...expected].sort(byType),
      );
      expect(
        read.annotations.filter((f) => f.weave_ref === callRef(callId)).map((f) => [f.feedback_type, f.payload.value, f.annotation_ref]),
      ).toEqual(expect.arrayContaining(expected));
      expect(read.spec).toEqual({
        class: 'AnnotationSpec',
        name: 'Helpfulness',
        field_schema: { type: 'integer', minimum: 1, maximum: 3 },
      });

      // The calls table counts the scores in its feedback column.
      await page.goto(`${weft.url}/#/p/${P}/calls?op=answer`);
      const cell = page.locator(`.vt-body .call-row[data-call-id="${callId}"] .col-feedback .feedback-cell`);
      await until(() => cell.getAttribute('data-feedback')).toBe('★6');
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'walks an annotation queue with the keyboard: scores, thumbs and a note per call, progress saved, the server’s stats agree',
    async () => {
      // A queue asking two of the SDK's specs.
      const page = await signedIn(`/#/p/${P}/queues`);
      await page.getByRole('button', { name: 'New queue' }).click();
      const form = page.getByRole('form', { name: 'New queue' });
      await form.locator('input[name="queue-name"]').fill('Review answers');
      await form.getByLabel('Quality').check();
      await form.getByLabel('Tone').check();
      await form.getByRole('button', { name: 'Create queue' }).click();
      await until(() => page.locator('.state.empty h3').textContent()).toBe('This queue is empty');
      const queueId = /queues\/([^/?]+)/.exec(page.url())![1]!;
      const [queue] = await member.jsonl('/annotation_queues/query', { project_id: P });
      expect(queue).toMatchObject({ id: queueId, name: 'Review answers', scorer_refs: [sdk.specs.quality, sdk.specs.tone] });

      // Three calls ticked in the calls table with the keyboard (newest first), added to it.
      await page.goto(`${weft.url}/#/p/${P}/calls?op=answer`);
      await until(() => page.locator('.vt-body .call-row').count()).toBe(4);
      for (const key of ['x', 'j', 'x', 'j', 'x']) await page.keyboard.press(key);
      await until(() => page.locator('.selection strong').textContent()).toBe('3 selected');
      await page.getByRole('button', { name: 'Add to queue…' }).click();
      await page.getByLabel('Queue', { exact: true }).selectOption({ label: 'Review answers' });
      await page.getByRole('button', { name: 'Add 3' }).click();
      const added = page.locator('.add-to-queue .done');
      await until(() => added.textContent()).toBe(' Added 3 to Review answers');
      await shot(page, 'calls-ticked');
      await added.getByRole('link').click();
      const rows = page.locator('.queue-item-row');
      await until(() => rows.count()).toBe(3);
      const queued = [sdk.answer_ids[3], sdk.answer_ids[2], sdk.answer_ids[1]];
      expect(await page.locator('.queue-item').getAttribute('data-call-id')).toBe(queued[0]);

      // Item 1: quality 4 (1 then 4), thumbs up, done. Item 2: tone friendly, a note, thumbs down, done. Item 3: skipped.
      await until(() => field(page, 'quality').count()).toBe(1);
      await page.keyboard.press('1');
      await page.keyboard.press('4');
      await until(() => field(page, 'quality').getAttribute('data-value')).toBe('4');
      await page.keyboard.press('u');
      await until(() => page.getByRole('button', { name: 'Thumbs up' }).getAttribute('aria-pressed')).toBe('true');
      await until(() => rows.nth(0).getAttribute('data-state')).toBe('in_progress');
      await shot(page, 'queue-walk');
      await page.keyboard.press('c');
      await until(() => page.locator('.queue-item').getAttribute('data-call-id')).toBe(queued[1]);
      await until(() => field(page, 'tone').count()).toBe(1);
      await page.keyboard.press('2');
      await page.keyboard.press('1');
      await until(() => field(page, 'tone').getAttribute('data-value')).toBe('friendly');
      await page.keyboard.press('n');
      await page.keyboard.type('needs a source');
      await page.keyboard.press('Enter');
      await until(() => page.locator('.queue-item .feedback li').count()).toBe(2);
      await page.keyboard.press('d');
      await until(() => page.getByRole('button', { name: 'Thumbs down' }).getAttribute('aria-pressed')).toBe('true');
      await page.keyboard.press('c');
      await until(() => page.locator('.queue-item').getAttribute('data-call-id')).toBe(queued[2]);
      await page.keyboard.press('s');
      await until(() => rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-state')))).toEqual([
        'completed',
        'completed',
        'skipped',
      ]);

      // Progress: the page's bar is the server's count, and the server agrees item by item.
      const progress = page.locator('.queue-head .queue-progress');
      await until(() => progress.getAttribute('data-server-done')).toBe('3');
      expect(await progress.getAttribute('data-server-total')).toBe('3');
      expect(await progress.locator('.progress-text').textContent()).toBe('3 / 3');
      expect(await page.locator('.queue-finished').textContent()).toContain('All 3 items are done.');
      const stats = await member.post('/annotation_queues/stats', { project_id: P, queue_ids: [queueId] });
      expect(stats.body.stats).toEqual([{ queue_id: queueId, total_items: 3, completed_items: 3 }]);
      const items = await member.post(`/annotation_queues/${queueId}/items/query`, { project_id: P });
      expect(items.body.items.map((i: { call_id: string; annotation_state: string }) => [i.call_id, i.annotation_state])).toEqual([
        [queued[0], 'completed'],
        [queued[1], 'completed'],
        [queued[2], 'skipped'],
      ]);
      expect(items.body.items.every((i: { annotator_user_id: string }) => i.annotator_user_id === memberKey.user_id)).toBe(true);

      // The feedback given in the queue names it, and is what the SDK reads.
      const inQueue = [...(await feedbackOn(queued[0]!)), ...(await feedbackOn(queued[1]!))].map((f) => [
        f.weave_ref,
        f.feedback_type,
        f.payload.value ?? f.payload.emoji ?? f.payload.note,
        f.queue_id,
      ]);
      expect(inQueue).toEqual([
        [callRef(queued[0]!), 'wandb.annotation.quality', 4, queueId],
        [callRef(queued[0]!), 'wandb.reaction.1', '👍', queueId],
        [callRef(queued[1]!), 'wandb.annotation.tone', 'friendly', queueId],
        [callRef(queued[1]!), 'wandb.note.1', 'needs a source', queueId],
        [callRef(queued[1]!), 'wandb.reaction.1', '👎', queueId],
      ]);
      const read = await runWeaveScript<{ calls: Record<string, { feedback_type: string; queue_id: string }[]> }>(
        'read-annotations.py',
        [sdk.specs.quality!, queued[0]!, queued[1]!],
        { baseUrl: weft.url, apiKey: memberKey.key, project: P },
      );
      expect(Object.values(read.calls).flat()).toHaveLength(5);
      expect(Object.values(read.calls).flatMap((fs) => fs.map((f) => f.queue_id))).toEqual(Array(5).fill(queueId));

      // k goes back: item 2 as it was left.
      await page.keyboard.press('k');
      await until(() => page.locator('.queue-item').getAttribute('data-call-id')).toBe(queued[1]);
      await until(() => field(page, 'tone').getAttribute('data-value')).toBe('friendly');
      await shot(page, 'queue-done');

      // The queue list shows the same progress.
      await page.goto(`${weft.url}/#/p/${P}/queues`);
      const listed = page.locator('td.queue-progress');
      await until(() => listed.getAttribute('data-done')).toBe('3');
      expect(await listed.getAttribute('data-total')).toBe('3');
      await shot(page, 'queues');
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'asks for a queue that does not exist once, shows the server’s 404, and asks nothing more',
    async () => {
      const page = await signedIn(`/#/p/${P}/queues`);
      await until(() => page.locator('table.queues tr').count()).toBeGreaterThan(1);
      let asked = 0;
      page.on('request', (r) => r.url().includes('/annotation_queues') && asked++);
      await page.goto(`${weft.url}/#/p/${P}/queues/00000000-0000-7000-8000-000000000000`);
      await until(() => page.locator('.state.error').first().textContent()).toContain('Error 404');
      await page.waitForTimeout(1500);
      expect(asked).toBe(1);
      await page.close();
    },
    UI_TEST_MS,
  );
});

describe('playground', () => {
  /** The replays of a call, as stored. */
  const replaysOf = (id: string) =>
    member.jsonl('/calls/stream_query', {
      project_id: P,
      query: { $expr: { $eq: [{ $getField: 'attributes.weft.source_call_id' }, { $literal: id }] } },
    });

  it(
    'replays the SDK’s LLM call with another model, message and temperature through /v1/chat/completions, traced and linked to it',
    async () => {
      const source = sdk.llm_call_id;
      const page = await signedIn(`/#/p/${P}/call/${source}`);
      await page.getByRole('link', { name: 'Open in playground' }).click();
      await until(() => page.locator('.pg-message').count()).toBe(2);
      expect(page.url()).toContain(`/playground/${source}`);
      // The request as the SDK recorded it, and the models weft serves.
      const model = page.locator('select[name="model"]');
      expect(await model.locator('option').allTextContents()).toEqual(['m-small', 'm-large']);
      expect(await model.inputValue()).toBe('m-small');
      expect(await page.locator('input[name="temperature"]').inputValue()).toBe('0.2');
      expect(await page.locator('input[name="max_tokens"]').inputValue()).toBe('64');
      expect(await page.getByRole('textbox', { name: 'Message 1', exact: true }).inputValue()).toBe('You answer in one sentence.');
      expect(await page.getByRole('textbox', { name: 'Message 2', exact: true }).inputValue()).toBe('What is the capital of France?');
      expect(await page.locator('[data-output="original"] .message-text').textContent()).toBe('Paris is the capital of France.');

      await model.selectOption('m-large');
      await page.getByRole('textbox', { name: 'Message 2', exact: true }).fill('What is the capital of Italy?');
      await page.locator('input[name="temperature"]').fill('0.7');
      const before = upstream.requests.length;
      await page.getByRole('button', { name: /^Run/ }).click();
      const answer = '[m-large t=0.7] you said: What is the capital of Italy?';
      await until(() => page.locator('[data-output="new"] .message-text').textContent()).toBe(answer);

      // The model server got exactly the edited request.
      const sent = upstream.requests.slice(before).filter((r) => r.path.endsWith('/chat/completions'));
      expect(sent).toHaveLength(1);
      expect(sent[0]!.body).toMatchObject({
        model: 'm-large',
        temperature: 0.7,
        max_tokens: 64,
        messages: [
          { role: 'system', content: 'You answer in one sentence.' },
          { role: 'user', content: 'What is the capital of Italy?' },
        ],
      });
      // Stored as a traced call of the inference front, naming the original.
      const newId = await page.locator('.pg-new-call').getAttribute('data-call-id');
      const replays = await replaysOf(source);
      expect(replays.map((c) => c.id)).toEqual([newId]);
      expect(replays[0]).toMatchObject({
        op_name: 'weave.chat_completions_create',
        attributes: { weft: { source_call_id: source } },
        inputs: { model: 'm-large', temperature: 0.7 },
        summary: { usage: { 'm-large': { requests: 1 } } },
      });
      expect(replays[0].output.choices[0].message.content).toBe(answer);
      await until(() => page.locator('tr.pg-replay').count()).toBe(1);
      await shot(page, 'playground', true);

      // Its trace says what it replays.
      await page.locator('.pg-new-call').click();
      const replayOf = page.locator('.call-detail dd').filter({ hasText: source });
      await until(() => replayOf.count()).toBe(1);
      expect(await replayOf.getByRole('link').first().getAttribute('href')).toBe(`#/p/${P}/call/${source}`);
      await shot(page, 'replay-trace');
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'opens OTLP GenAI and OpenInference LLM spans with their messages, model and parameters, and replays them',
    async () => {
      for (const [id, want] of [
        [
          GENAI_SPAN,
          { model: 'm-large', temperature: '0.3', max_tokens: '100', messages: ['You are terse.', 'Name a colour.'], original: 'Blue.' },
        ],
        [
          OPENINFERENCE_SPAN,
          { model: 'm-small', temperature: '0.9', max_tokens: '50', messages: ['Reply in French.', 'Good morning'], original: 'Bonjour' },
        ],
      ] as const) {
        const page = await signedIn(`/#/p/${P}/trace/${id.repeat(2)}`);
        await page.getByRole('link', { name: 'Open in playground' }).click();
        await until(() => page.locator('.pg-message').count()).toBe(2);
        expect(await page.locator('select[name="model"]').inputValue()).toBe(want.model);
        expect(await page.locator('input[name="temperature"]').inputValue()).toBe(want.temperature);
        expect(await page.locator('input[name="max_tokens"]').inputValue()).toBe(want.max_tokens);
        expect(
          await page.locator('.pg-message select').evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value)),
        ).toEqual(['system', 'user']);
        expect([
          await page.getByRole('textbox', { name: 'Message 1', exact: true }).inputValue(),
          await page.getByRole('textbox', { name: 'Message 2', exact: true }).inputValue(),
        ]).toEqual(want.messages);
        expect(await page.locator('[data-output="original"] .message-text').textContent()).toBe(want.original);
        // Ctrl+Enter runs it, no click first.
        await page.keyboard.press('Control+Enter');
        const answer = `[${want.model} t=${want.temperature}] you said: ${want.messages[1]}`;
        await until(() => page.locator('[data-output="new"] .message-text').textContent()).toBe(answer);
        const replays = await replaysOf(id);
        expect(replays).toHaveLength(1);
        expect(replays[0].inputs).toMatchObject({
          model: want.model,
          temperature: Number(want.temperature),
          max_tokens: Number(want.max_tokens),
          messages: [
            { role: 'system', content: want.messages[0] },
            { role: 'user', content: want.messages[1] },
          ],
        });
        if (id === OPENINFERENCE_SPAN) await shot(page, 'playground-openinference');
        await page.close();
      }
    },
    UI_TEST_MS,
  );

  it(
    'shows a foreign project’s 403 once, asking nothing more',
    async () => {
      const page = await signedIn(`/#/p/${P}/queues`);
      await until(() => page.locator('table.queues tr').count()).toBeGreaterThan(1);
      const asked: string[] = [];
      page.on('request', (r) => {
        const path = new URL(r.url()).pathname;
        if (path !== '/' && !path.startsWith('/ui/')) asked.push(path);
      });
      await page.goto(`${weft.url}/#/p/annotate-other/secret/playground/${sdk.llm_call_id}`);
      await until(() => page.locator('.state.error').first().textContent()).toContain('Error 403');
      await page.goto(`${weft.url}/#/p/annotate-other/secret/queues/00000000-0000-7000-8000-000000000000`);
      await until(() => page.locator('.state.error').first().textContent()).toContain('Error 403');
      await page.waitForTimeout(1500);
      // One each: the call, the models, the queue, who the user is (asked once per key), and each
      // page's lag banner reading the project's delivery once (refused: not asked again).
      expect(asked.sort()).toEqual([
        '/annotation_queues/00000000-0000-7000-8000-000000000000',
        '/calls/stream_query',
        '/graphql',
        '/project/delivery',
        '/project/delivery',
        '/v1/models',
      ]);
      await page.close();
    },
    UI_TEST_MS,
  );

  it(
    'fits 800 px wide: the queue and the playground stack their columns',
    async () => {
      const [queue] = await member.jsonl('/annotation_queues/query', { project_id: P });
      for (const path of [`/#/p/${P}/queues/${queue.id}?item=2`, `/#/p/${P}/playground/${sdk.llm_call_id}`]) {
        const page = await signedIn(path, 800);
        await until(() => page.locator('.queue-item, .pg-request').count()).toBe(1);
        await page.waitForTimeout(300);
        expect(await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')).toBe(0);
        await shot(page, path.includes('queues') ? 'queue-800' : 'playground-800');
        await page.close();
      }
      const dark = await signedIn(`/#/p/${P}/playground/${sdk.llm_call_id}`, 1280, 'dark');
      await until(() => dark.locator('[data-output="original"] .message-text').count()).toBe(1);
      await shot(dark, 'playground-dark');
      await dark.close();
    },
    UI_TEST_MS,
  );
});
