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
  const python = await ensurePythonClients();
  return new Promise((resolve) => {
    const child = spawn(python, [join(REPO_ROOT, 'test', 'clients', script), ...args], {
      env: { ...process.env, ...opts.env, PYTHONUNBUFFERED: '1' },
    });
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
