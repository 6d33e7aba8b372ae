import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './paths';
import { ensurePythonVenv } from './python-venv';

/**
 * The stock Python clients the compatibility tests drive, pinned: the OpenAI SDK and the
 * OpenTelemetry SDK with both OTLP exporters (gRPC and HTTP/protobuf).
 */
export const PYTHON_CLIENTS = [
  'openai==3.54.0',
  'opentelemetry-sdk==1.45.2',
  'opentelemetry-exporter-otlp-proto-grpc==1.45.2',
  'opentelemetry-exporter-otlp-proto-http==1.45.2',
];

export const ensurePythonClients = () => ensurePythonVenv('pyclients-openai3.54.0-otel1.45.2', PYTHON_CLIENTS);

/**
 * Runs one of test/clients/*.py with the pinned clients; resolves with its exit code, stdout
 * (the script prints one JSON document) and stderr. Killed after `timeoutMs`.
 */
export async function runPythonClient(
  script: string,
  args: string[],
  opts: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runPython(await ensurePythonClients(), script, args, opts);
}

function runPython(
  python: string,
  script: string,
  args: string[],
  opts: { env?: Record<string, string>; timeoutMs?: number; stdin?: string },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(python, [join(REPO_ROOT, 'test', 'clients', script), ...args], {
      env: { ...process.env, ...opts.env, PYTHONUNBUFFERED: '1' },
    });
    if (opts.stdin !== undefined) child.stdin.end(opts.stdin);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      stderr += `\n[killed after ${opts.timeoutMs ?? 300_000} ms]`;
      child.kill('SIGKILL');
    }, opts.timeoutMs ?? 300_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The LLM instrumentations whose traces weft reads, pinned with the OpenTelemetry SDK they
 * export through: OpenInference (OpenAI, and the OpenAI Agents SDK) and OpenTelemetry's own
 * openai-v2 (GenAI semconv). One venv: they resolve together.
 */
export const INSTRUMENTATION_CLIENTS = [
  'openai==3.54.0',
  'opentelemetry-sdk==1.45.2',
  'opentelemetry-exporter-otlp-proto-http==1.45.2',
  'opentelemetry-exporter-otlp-proto-grpc==1.45.2',
  'openinference-instrumentation-openai==0.1.66',
  'opentelemetry-instrumentation-openai-v2==2.4b0',
  // openai-v2 2.4b0 imports httpx (openai 3.x no longer brings it) and util-genai's `instruments`
  // module, which util-genai 1.2b0 dropped: pip would otherwise pick 1.3b0 and the import fails.
  'httpx==0.28.1',
  'opentelemetry-util-genai==1.1b0',
  'openai-agents==0.24.0',
  'openinference-instrumentation-openai-agents==2.6.0',
];

export const ensureInstrumentationClients = () =>
  ensurePythonVenv('pyinstrumentations-oi0.1.66-otelv2-2.4b0-agents0.24.0', INSTRUMENTATION_CLIENTS);

/**
 * OpenLLMetry's OpenAI instrumentation (Traceloop's `opentelemetry-instrumentation-openai`), in a
 * venv of its own: it brings its own OpenTelemetry instrumentation pins. (traceloop-sdk itself,
 * which adds the workflow/task decorators, does not resolve on current pip.)
 */
export const OPENLLMETRY_CLIENTS = [
  'openai==3.54.0',
  'opentelemetry-sdk==1.45.2',
  'opentelemetry-exporter-otlp-proto-http==1.45.2',
  'opentelemetry-exporter-otlp-proto-grpc==1.45.2',
  'opentelemetry-instrumentation-openai==0.62.4',
];

export const ensureOpenLLMetryClients = () => ensurePythonVenv('pyopenllmetry-0.62.4', OPENLLMETRY_CLIENTS);

/** Runs test/clients/<script> with the pinned instrumentations (or another venv's); as runPythonClient. */
export async function runInstrumentedClient(
  script: string,
  args: string[],
  opts: { env?: Record<string, string>; timeoutMs?: number; venv?: () => Promise<string> } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runPython(await (opts.venv ?? ensureInstrumentationClients)(), script, args, opts);
}

/** The official Python MCP client (the `mcp` package), pinned: test/clients/mcp_client.py drives it. */
export const MCP_CLIENTS = ['mcp==2.3.0'];

export const ensureMcpClient = () => ensurePythonVenv('pymcp-2.3.0', MCP_CLIENTS);

/** Runs test/clients/mcp_client.py against an /mcp URL: the tool calls go in as JSON on stdin. */
export async function runMcpPythonClient(
  url: string,
  apiKey: string,
  calls: [string, Record<string, unknown>][],
  opts: { timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runPython(await ensureMcpClient(), 'mcp_client.py', [url, apiKey], { ...opts, stdin: JSON.stringify(calls) });
}
