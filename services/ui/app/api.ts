import { clearKey, getKey } from './session';

/** An error answered by weft: its status and reason (and the offending field), shown as they are. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    readonly field?: string,
  ) {
    super(`${status}: ${reason}`);
  }
}

/** Called when the key is refused (401): the app goes back to sign-in. */
let onUnauthorized: (reason: string) => void = () => {};
export function setUnauthorizedHandler(fn: (reason: string) => void): void {
  onUnauthorized = fn;
}

export function basicAuth(key: string): string {
  // Keys are ASCII (weft_ + base64url), so btoa is safe.
  return `Basic ${btoa(`api:${key}`)}`;
}

export interface RequestOptions {
  /** POST (the default) sends `body` as JSON; GET and DELETE send it as the query string. */
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  signal?: AbortSignal;
  headers?: Record<string, string>;
  /** The OpenAI-compatible front (`/v1/…`) takes the key as a Bearer token. */
  bearer?: boolean;
  key?: string | null;
}

async function request(path: string, body: unknown, opts: RequestOptions = {}): Promise<Response> {
  const { method = 'POST', signal, bearer = false } = opts;
  const key = opts.key === undefined ? getKey() : opts.key;
  const inQuery = method === 'GET' || method === 'DELETE';
  const url = inQuery && body ? `${path}?${new URLSearchParams(body as Record<string, string>)}` : path;
  const res = await fetch(url, {
    method,
    // x-requested-with: weft then answers a bad key without a Basic challenge (no browser prompt).
    headers: {
      ...(inQuery ? {} : { 'content-type': 'application/json' }),
      'x-requested-with': 'XMLHttpRequest',
      ...(key ? { authorization: bearer ? `Bearer ${key}` : basicAuth(key) } : {}),
      ...opts.headers,
    },
    body: inQuery ? undefined : JSON.stringify(body),
    signal,
  });
  if (res.ok) return res;
  const text = await res.text();
  let reason = text || res.statusText;
  let field: string | undefined;
  try {
    const parsed = JSON.parse(text) as { reason?: string; field?: string; error?: { message?: string; param?: string | null } };
    reason = parsed.reason ?? parsed.error?.message ?? reason;
    field = parsed.field ?? parsed.error?.param ?? undefined;
  } catch {
    /* not JSON: keep the text */
  }
  if (res.status === 401) {
    clearKey();
    onUnauthorized(reason);
  }
  throw new ApiError(res.status, reason, field);
}

/** Any method, JSON answer and the response's headers (the inference front names its call in one). */
export async function send<T>(path: string, body: unknown, opts: RequestOptions = {}): Promise<{ data: T; headers: Headers }> {
  const res = await request(path, body, opts);
  return { data: (await res.json()) as T, headers: res.headers };
}

/** POST a JSON body, get the JSON answer. */
export async function post<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
  const res = await request(path, body, { signal });
  return (await res.json()) as T;
}

/** POST to a JSONL endpoint (calls, threads, table rows), get its lines parsed. */
export async function postJsonl<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T[]> {
  const res = await request(path, body, { signal });
  const text = await res.text();
  const out: T[] = [];
  for (const line of text.split('\n')) if (line.trim() !== '') out.push(JSON.parse(line) as T);
  return out;
}

/**
 * POST a body, save the answer as a file (an export): the browser's download of a blob made from
 * the response, named as its content-disposition says (else `fallback`).
 */
export async function download(path: string, body: unknown, fallback: string): Promise<void> {
  const res = await request(path, body);
  const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? fallback;
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** Checks a key before keeping it: the project list answers 401 for a bad key. */
export async function checkKey(key: string): Promise<void> {
  await request('/projects/list', { limit: 1 }, { key });
}
