import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT, TEST_ROOT } from './paths';
import { ensurePythonVenv } from './python-venv';

const run = promisify(execFile);

/** What a client read of one POST of a large body: the status and Retry-After, or the error it raised instead. */
export type ClientOutcome = { status: number; retry_after: string | null } | { error: string };

/** Python's stock clients, pinned (http.client is the interpreter's own). */
const PYTHON_HTTP_CLIENTS = ['requests==2.32.3', 'httpx==0.28.1'];
const ensurePythonHttpClients = () => ensurePythonVenv('pyhttp-requests2.32.3-httpx0.28.1', PYTHON_HTTP_CLIENTS);

/** A JSON body of exactly `bytes` bytes (one long string member). */
export function largeBody(bytes: number): Buffer {
  return Buffer.concat([Buffer.from('{"start": "'), Buffer.alloc(bytes - 13, 0x20), Buffer.from('"}')]);
}

const parseOutcome = (stdout: string, stderr: string): ClientOutcome => {
  try {
    return JSON.parse(stdout.trim().split('\n').pop()!) as ClientOutcome;
  } catch {
    return { error: `no result: ${stdout} ${stderr}` };
  }
};

export async function pythonPost(
  client: 'http.client' | 'requests' | 'httpx',
  url: string,
  bytes: number,
  auth: string,
): Promise<ClientOutcome> {
  const python = await ensurePythonHttpClients();
  const { stdout, stderr } = await run(python, [join(REPO_ROOT, 'test/clients/refusal.py'), client, url, String(bytes), auth], {
    timeout: 120_000,
    maxBuffer: 1 << 20,
  });
  return parseOutcome(stdout, stderr);
}

/** Go's net/http client (test/clients/refusal.go, stdlib only, built by `go run`). */
export async function goPost(url: string, bytes: number, auth: string): Promise<ClientOutcome> {
  const { stdout, stderr } = await run('go', ['run', join(REPO_ROOT, 'test/clients/refusal.go'), url, String(bytes), auth], {
    timeout: 300_000,
    // A single stdlib-only file: no module needed.
    env: { ...process.env, GO111MODULE: 'off' },
  });
  return parseOutcome(stdout, stderr);
}

/** curl, with `Expect: 100-continue` forced or suppressed (curl adds it by itself above 1 MiB). */
export async function curlPost(url: string, bytes: number, auth: string, expectContinue: boolean): Promise<ClientOutcome> {
  const file = join(TEST_ROOT, `refusal-body-${bytes}.json`);
  writeFileSync(file, largeBody(bytes));
  try {
    const { stdout } = await run(
      'curl',
      [
        '-sS',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code} %header{retry-after}',
        '-H',
        'Content-Type: application/json',
        '-H',
        `Authorization: ${auth}`,
        '-H',
        expectContinue ? 'Expect: 100-continue' : 'Expect:',
        '--data-binary',
        `@${file}`,
        url,
      ],
      { timeout: 120_000 },
    );
    const [status, retryAfter] = stdout.trim().split(' ');
    return { status: Number(status), retry_after: retryAfter || null };
  } catch (e) {
    return { error: String((e as { stderr?: string }).stderr || e) };
  }
}

/** Node's fetch (undici). */
export async function fetchPost(url: string, bytes: number, auth: string): Promise<ClientOutcome> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: auth },
      body: largeBody(bytes),
    });
    await res.arrayBuffer();
    return { status: res.status, retry_after: res.headers.get('retry-after') };
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return { error: `${String(e)}${cause ? ` (${cause.code ?? ''} ${cause.message ?? ''})` : ''}` };
  }
}

/** Node's http.request, writing the whole body and then reading the answer (as most SDKs built on it do). */
export function nodeHttpPost(url: string, bytes: number, auth: string): Promise<ClientOutcome> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(bytes), authorization: auth },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, retry_after: (res.headers['retry-after'] as string) ?? null }));
      },
    );
    req.on('error', (e) => resolve({ error: String(e) }));
    req.end(largeBody(bytes));
  });
}
