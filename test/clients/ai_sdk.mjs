// The Vercel AI SDK (npm `ai` 6) as its users trace it: `experimental_telemetry` on every call and
// the OpenTelemetry Node SDK exporting to weft's OTLP endpoint; the model is an OpenAI-compatible
// server (the stand-in). Run from the directory the pinned packages are installed in
// (test/helpers/npm-clients.ts). Usage: node ai_sdk.mjs <weft url> <api key> <project> <model base url> <dump file>
// Four runs: generateText, streamText, a two-step tool run (generateText), generateObject. Writes
// every exported span as one OTLP/JSON request to <dump file>; prints one JSON document.
import { writeFileSync } from 'node:fs';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { generateObject, generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';

const [weft, key, project, modelUrl, dump] = process.argv.slice(2);
const exporter = new OTLPTraceExporter({ url: `${weft}/otel/v1/traces`, headers: { authorization: `Bearer ${key}`, project_id: project } });
const captured = [];
const capture = {
  export(spans, done) {
    captured.push(...spans);
    exporter.export(spans, done);
  },
  shutdown: () => exporter.shutdown(),
  forceFlush: () => exporter.forceFlush(),
};
// The SDK's default processor for an exporter: batches, so a trace's spans arrive together.
const sdk = new NodeSDK({ serviceName: 'weft-test-ai-sdk', traceExporter: capture });
sdk.start();

const model = createOpenAICompatible({ name: 'vllm', baseURL: modelUrl, includeUsage: true })('m-vllm');
const telemetry = (functionId) => ({ isEnabled: true, functionId, metadata: { userId: 'user-ai', sessionId: 'session-ai' } });
const out = { versions: {} };
for (const p of ['ai', '@ai-sdk/openai-compatible', '@opentelemetry/sdk-node']) {
  out.versions[p] = (await import(`${p}/package.json`, { with: { type: 'json' } })).default.version;
}

out.text = (await generateText({ model, system: 'You answer briefly.', prompt: 'Hi', experimental_telemetry: telemetry('greet') })).text;

const stream = streamText({ model, prompt: 'Hi again', experimental_telemetry: telemetry('greet-stream') });
out.streamed = '';
for await (const t of stream.textStream) out.streamed += t;

const weather = tool({
  description: 'The weather in a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => `sunny in ${city}`,
});
const toolRun = await generateText({
  model,
  prompt: 'tools',
  tools: { get_weather: weather },
  stopWhen: stepCountIs(2),
  experimental_telemetry: telemetry('weather'),
});
out.tool = { text: toolRun.text, steps: toolRun.steps.length };

out.object = (
  await generateObject({
    model,
    schema: z.object({ city: z.string() }),
    prompt: 'object',
    experimental_telemetry: telemetry('extract'),
  })
).object;

await sdk.shutdown();
writeFileSync(dump, Buffer.from(JsonTraceSerializer.serializeRequest(captured)));
out.spans = captured.length;
console.log(JSON.stringify(out));
