import type { ApiError } from '@weft/core';
import { httpPhrase, openAiError } from './openai-errors';
import { UpstreamFailure } from './upstream-client';

/**
 * How an upstream failure reaches a chat completions client (OpenAI error shape):
 * the client's own mistakes the server found (4xx) keep their status and message; the
 * server failing, being unreachable or refusing our credentials is 502; slowness is 504.
 */
export function upstreamHttpError(f: UpstreamFailure): ApiError {
  switch (f.kind) {
    case 'timeout':
      return openAiError(504, f.message, { type: httpPhrase(504) });
    case 'unreachable':
    case 'protocol':
    case 'config':
      return openAiError(502, f.message, { type: httpPhrase(502) });
    case 'status': {
      const status = f.status ?? 502;
      const info = f.info;
      const retry = f.retryAfter ? { 'Retry-After': f.retryAfter } : undefined;
      if (status >= 400 && status < 500 && status !== 401 && status !== 403) {
        return openAiError(status, info?.message ?? f.message, {
          type: info?.type ?? httpPhrase(status),
          param: info?.param ?? null,
          headers: retry,
        });
      }
      if (status === 503) return openAiError(503, f.message, { type: httpPhrase(503), headers: retry ?? { 'Retry-After': '1' } });
      if (status === 504) return openAiError(504, f.message, { type: httpPhrase(504) });
      return openAiError(502, f.message, { type: httpPhrase(502) });
    }
  }
}

/** True for a stream event that is an in-band error (`{"error": ...}` with no choices). */
export function isErrorEvent(ev: Record<string, unknown>): boolean {
  return ev.error !== undefined && ev.error !== null && ev.choices === undefined;
}

export { UpstreamFailure };
