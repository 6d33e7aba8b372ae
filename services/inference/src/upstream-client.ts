import { createParser } from 'eventsource-parser';
import { parseUpstreamError, type UpstreamErrorInfo } from './normalize';
import type { Upstream } from './upstreams';

/**
 * Talks to an upstream model server over HTTP (Node's fetch). Every failure is an
 * UpstreamFailure saying what went wrong; a caller that goes away aborts the request, which
 * closes the connection so the server stops generating.
 */

export type FailureKind = 'unreachable' | 'timeout' | 'status' | 'protocol' | 'config';

export class UpstreamFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly upstream: string,
    readonly status?: number,
    readonly info?: UpstreamErrorInfo,
    /** The upstream's Retry-After (429/503), passed on to the client. */
    readonly retryAfter?: string,
  ) {
    super(message);
    this.name = 'UpstreamFailure';
  }
}

/** Raised when the caller's own signal aborted the request (client disconnected). */
export class CallerAborted extends Error {
  constructor() {
    super('the client went away');
    this.name = 'CallerAborted';
  }
}

/** A timer that aborts the request; `touch()` restarts it (idle timeout while streaming). */
class Deadline {
  readonly controller = new AbortController();
  timedOut = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly onCallerAbort = () => this.controller.abort();

  constructor(
    private readonly ms: number,
    private readonly caller?: AbortSignal,
  ) {
    if (caller?.aborted) this.controller.abort();
    caller?.addEventListener('abort', this.onCallerAbort, { once: true });
    this.touch();
  }

  touch(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort();
    }, this.ms);
  }

  /** Stops the clock while our side holds things up (a slow client), so only the upstream is timed. */
  pause(): void {
    clearTimeout(this.timer);
  }

  done(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener('abort', this.onCallerAbort);
  }

  /** Turns whatever fetch threw into the failure to report. */
  failure(e: unknown, upstream: Upstream, phase: string): Error {
    if (this.timedOut) {
      return new UpstreamFailure('timeout', `upstream '${upstream.name}' did not answer within ${this.ms} ms (${phase})`, upstream.name);
    }
    if (this.caller?.aborted) return new CallerAborted();
    if (e instanceof UpstreamFailure) return e;
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    const detail = cause?.code ?? cause?.message ?? (e as Error).message;
    return new UpstreamFailure('unreachable', `upstream '${upstream.name}' is unreachable (${phase}): ${detail}`, upstream.name);
  }
}

export interface UpstreamRequestOptions {
  signal?: AbortSignal;
  /** Overrides the upstream's timeout (e.g. `inputs.timeout` of /completions/create). */
  timeoutMs?: number;
  headers?: Record<string, string>;
  /** The path under the upstream's base URL; `/chat/completions` when absent. */
  path?: string;
}

const urlOf = (upstream: Upstream, opts: UpstreamRequestOptions) => (opts.path ? upstream.baseUrl + opts.path : upstream.chatUrl);

function requestHeaders(upstream: Upstream, stream: boolean, extra: Record<string, string> = {}): Record<string, string> {
  if (upstream.apiKeyEnv && !upstream.apiKey) {
    throw new UpstreamFailure(
      'config',
      `upstream '${upstream.name}' has no API key: environment variable ${upstream.apiKeyEnv} is not set`,
      upstream.name,
    );
  }
  const h: Record<string, string> = {
    ...extra,
    'content-type': 'application/json',
    accept: stream ? 'text/event-stream' : 'application/json',
  };
  if (upstream.apiKey) h.authorization = `Bearer ${upstream.apiKey}`;
  return h;
}

async function failureFromStatus(upstream: Upstream, res: Response): Promise<UpstreamFailure> {
  const text = await res.text().catch(() => '');
  const info = parseUpstreamError(text, `HTTP ${res.status}`);
  const retryAfter = res.headers.get('retry-after') ?? undefined;
  return new UpstreamFailure(
    'status',
    `upstream '${upstream.name}' answered ${res.status}: ${info.message}`,
    upstream.name,
    res.status,
    info,
    retryAfter,
  );
}

/** POST a non-streaming request (chat completion by default); resolves to the parsed JSON answer. */
export async function postUpstream(upstream: Upstream, payload: unknown, opts: UpstreamRequestOptions = {}): Promise<unknown> {
  const headers = requestHeaders(upstream, false, opts.headers);
  const deadline = new Deadline(opts.timeoutMs ?? upstream.timeoutMs, opts.signal);
  try {
    const res = await fetch(urlOf(upstream, opts), {
      method: 'POST',
      headers,
      body: JSON.stringify(payload),
      signal: deadline.controller.signal,
    });
    if (!res.ok) throw await failureFromStatus(upstream, res);
    const text = await res.text();
    try {
      return JSON.parse(text);
    } catch {
      throw new UpstreamFailure('protocol', `upstream '${upstream.name}' answered with invalid JSON`, upstream.name);
    }
  } catch (e) {
    throw deadline.failure(e, upstream, 'waiting for the answer');
  } finally {
    deadline.done();
  }
}

/** GET a JSON document from the upstream (its model list); resolves to the parsed answer. */
export async function getJson(upstream: Upstream, path: string, opts: { timeoutMs: number }): Promise<unknown> {
  const headers = requestHeaders(upstream, false);
  delete headers['content-type'];
  const deadline = new Deadline(opts.timeoutMs);
  try {
    const res = await fetch(upstream.baseUrl + path, { headers, signal: deadline.controller.signal });
    if (!res.ok) throw await failureFromStatus(upstream, res);
    return JSON.parse(await res.text());
  } catch (e) {
    if (e instanceof SyntaxError)
      throw new UpstreamFailure('protocol', `upstream '${upstream.name}' answered with invalid JSON`, upstream.name);
    throw deadline.failure(e, upstream, `GET ${path}`);
  } finally {
    deadline.done();
  }
}

/** One event of an upstream stream: a parsed JSON data payload. `[DONE]` ends the iteration. */
export type StreamEvent = Record<string, unknown>;

/**
 * Opens a streaming chat completion. Resolves once the upstream answered 200 (so an error
 * status is still reported before anything is sent to our client), to an iterator of its
 * events as they arrive. The timeout covers the wait for headers and each gap between chunks.
 * Ending the iteration early (return/throw) aborts the upstream request.
 */
export async function openUpstreamStream(
  upstream: Upstream,
  payload: unknown,
  opts: UpstreamRequestOptions = {},
): Promise<AsyncGenerator<StreamEvent, void, undefined>> {
  const headers = requestHeaders(upstream, true, opts.headers);
  const deadline = new Deadline(opts.timeoutMs ?? upstream.timeoutMs, opts.signal);
  let res: Response;
  try {
    res = await fetch(urlOf(upstream, opts), {
      method: 'POST',
      headers,
      body: JSON.stringify(payload),
      signal: deadline.controller.signal,
    });
    if (!res.ok) throw await failureFromStatus(upstream, res);
    if (!res.body) throw new UpstreamFailure('protocol', `upstream '${upstream.name}' sent no body`, upstream.name);
  } catch (e) {
    deadline.done();
    throw deadline.failure(e, upstream, 'waiting for the stream to start');
  }
  const body = res.body;
  const contentType = res.headers.get('content-type') ?? '';

  return (async function* events() {
    let finished = false;
    try {
      if (!contentType.includes('text/event-stream')) {
        // Some servers answer a stream request with one JSON document (e.g. an error object).
        const text = await res.text();
        finished = true;
        yield parseJson(text, upstream);
        return;
      }
      const queue: string[] = [];
      const parser = createParser({ onEvent: (ev) => queue.push(ev.data) });
      const decoder = new TextDecoder();
      const reader = body.getReader();
      for (;;) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (e) {
          throw deadline.failure(e, upstream, 'streaming');
        }
        deadline.touch();
        if (chunk.done) {
          parser.feed(decoder.decode() + '\n\n');
        } else {
          parser.feed(decoder.decode(chunk.value, { stream: true }));
        }
        while (queue.length > 0) {
          const data = queue.shift()!;
          if (data.trim() === '[DONE]') {
            finished = true;
            return;
          }
          const event = parseJson(data, upstream);
          deadline.pause();
          yield event;
          deadline.touch();
        }
        if (chunk.done) {
          // A stream may end without [DONE] (old servers); the end of the body is the end.
          finished = true;
          return;
        }
      }
    } finally {
      deadline.done();
      // Stopped early (client gone, error): close the connection so the server stops generating.
      if (!finished) deadline.controller.abort();
    }
  })();
}

function parseJson(text: string, upstream: Upstream): StreamEvent {
  try {
    const v = JSON.parse(text);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as StreamEvent;
  } catch {
    /* fall through */
  }
  throw new UpstreamFailure('protocol', `upstream '${upstream.name}' sent an event that is not a JSON object`, upstream.name);
}
